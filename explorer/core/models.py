"""Model descriptions (transformers and CNNs), their parameter counts, and the preset files.

Presets live in resources/models/*.yaml; numbers come from each model's
published configuration (the ``source`` URL) and the parameter count computed
here must equal the published total stored beside it (a test checks it).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from explorer.core.datafile import DataFileError, Fields, read_entries
from explorer.core.registry import Registry
from explorer.paths import resource_path

SCHEMA = 1
ARCHITECTURES = ("transformer", "cnn")


@dataclass(frozen=True)
class TransformerSpec:
    """A decoder-only transformer with pre-norm blocks."""

    id: str
    name: str
    d_model: int
    layers: int
    heads: int
    kv_heads: int
    mlp_width: int
    gated_mlp: bool
    activation: str  # gelu | silu
    norm: str  # layernorm | rmsnorm
    vocab: int
    tied_embeddings: bool
    bias: bool
    fused_qkv: bool
    positions: str  # learned | rope
    max_context: int
    source: str
    published_parameters: int
    parameters_source: str
    origin: str = ""
    architecture: str = "transformer"

    item_unit = "tokens"

    @property
    def head_dim(self) -> int:
        return self.d_model // self.heads

    @property
    def q_dim(self) -> int:
        return self.heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        return self.kv_heads * self.head_dim

    def layer_parameters(self) -> int:
        d, f = self.d_model, self.mlp_width
        attention = d * self.q_dim + 2 * d * self.kv_dim + self.q_dim * d
        mlp = (3 if self.gated_mlp else 2) * d * f
        norms = 2 * (2 * d if self.norm == "layernorm" else d)
        biases = (self.q_dim + 2 * self.kv_dim + d + (2 * f if self.gated_mlp else f) + d
                  if self.bias else 0)
        return attention + mlp + norms + biases

    def embedding_parameters(self) -> int:
        """Token (and learned position) embedding tables."""
        positions = self.max_context * self.d_model if self.positions == "learned" else 0
        return self.vocab * self.d_model + positions

    def parameter_count(self) -> int:
        final_norm = 2 * self.d_model if self.norm == "layernorm" else self.d_model
        lm_head = 0 if self.tied_embeddings else self.vocab * self.d_model
        return (self.embedding_parameters() + self.layers * self.layer_parameters()
                + final_norm + lm_head)

    def matmul_parameters(self) -> int:
        """Weights used in matrix products: every projection, plus the LM head's matrix."""
        per_layer = (self.d_model * (self.q_dim + 2 * self.kv_dim) + self.q_dim * self.d_model
                     + (3 if self.gated_mlp else 2) * self.d_model * self.mlp_width)
        return self.layers * per_layer + self.vocab * self.d_model

    def kv_values_per_token(self) -> int:
        """Cached values per token over all layers: a key and a value per KV head."""
        return 2 * self.layers * self.kv_heads * self.head_dim


@dataclass(frozen=True)
class Stage:
    blocks: int
    width: int
    stride: int


@dataclass(frozen=True)
class CnnSpec:
    """A ResNet-style CNN: a stem (conv, norm, ReLU, max pool), bottleneck stages, a classifier.

    Bottleneck blocks follow torchvision's ResNet v1.5: 1×1 reduce, 3×3 (carrying
    the stage's stride), 1×1 expand, each followed by batch norm; the first block of
    a stage projects its shortcut with a 1×1 convolution and batch norm.
    """

    id: str
    name: str
    image_size: int
    in_channels: int
    stem_channels: int
    stem_kernel: int
    stem_stride: int
    pool_kernel: int
    pool_stride: int
    stages: tuple[Stage, ...]
    expansion: int
    classes: int
    source: str
    published_parameters: int
    parameters_source: str
    origin: str = ""
    architecture: str = "cnn"

    item_unit = "images"

    def kv_values_per_token(self) -> int:
        return 0

    def parameter_count(self) -> int:
        total = self.stem_kernel**2 * self.in_channels * self.stem_channels + 2 * self.stem_channels
        c_in = self.stem_channels
        for stage in self.stages:
            width, c_out = stage.width, stage.width * self.expansion
            for block in range(stage.blocks):
                total += c_in * width + 2 * width
                total += 9 * width * width + 2 * width
                total += width * c_out + 2 * c_out
                if block == 0:
                    total += c_in * c_out + 2 * c_out
                c_in = c_out
        return total + c_in * self.classes + self.classes


ModelSpec = TransformerSpec | CnnSpec


def _read_transformer(fields: Fields, common: dict) -> TransformerSpec:
    spec = TransformerSpec(
        **common,
        d_model=fields.integer("d_model"),
        layers=fields.integer("layers"),
        heads=fields.integer("heads"),
        kv_heads=fields.integer("kv_heads"),
        mlp_width=fields.integer("mlp_width"),
        gated_mlp=fields.text("mlp", choices=("gated", "plain")) == "gated",
        activation=fields.text("activation", choices=("gelu", "silu")),
        norm=fields.text("norm", choices=("layernorm", "rmsnorm")),
        vocab=fields.integer("vocab"),
        tied_embeddings=fields.flag("tied_embeddings"),
        bias=fields.flag("bias"),
        fused_qkv=fields.flag("fused_qkv"),
        positions=fields.text("positions", choices=("learned", "rope")),
        max_context=fields.integer("max_context"),
        origin=fields.file,
    )
    if spec.d_model % spec.heads:
        raise fields.error("heads", f"d_model {spec.d_model} is not divisible by {spec.heads} heads")
    if spec.heads % spec.kv_heads:
        raise fields.error("kv_heads", f"{spec.heads} heads cannot be shared evenly by "
                                       f"{spec.kv_heads} KV heads")
    return spec


def _read_cnn(fields: Fields, common: dict) -> CnnSpec:
    stages = []
    for index, raw in enumerate(fields.items("stages")):
        stage_fields = fields.child(raw, f"stages[{index}]")
        stages.append(Stage(blocks=stage_fields.integer("blocks"),
                            width=stage_fields.integer("width"),
                            stride=stage_fields.integer("stride")))
        stage_fields.finish()
    stem = fields.child(fields.mapping("stem"), "stem")
    spec = CnnSpec(
        **common,
        image_size=fields.integer("image_size"),
        in_channels=fields.integer("in_channels"),
        stem_channels=stem.integer("channels"),
        stem_kernel=stem.integer("kernel"),
        stem_stride=stem.integer("stride"),
        pool_kernel=stem.integer("pool_kernel"),
        pool_stride=stem.integer("pool_stride"),
        stages=tuple(stages),
        expansion=fields.integer("expansion"),
        classes=fields.integer("classes"),
        origin=fields.file,
    )
    stem.finish()
    return spec


def read_model_entry(fields: Fields) -> ModelSpec:
    common = {
        "id": fields.identifier("id"),
        "name": fields.text("name"),
        "source": fields.url("source"),
        "parameters_source": fields.url("parameters_source"),
        "published_parameters": fields.integer("published_parameters"),
    }
    architecture = fields.text("architecture", choices=ARCHITECTURES)
    reader = _read_transformer if architecture == "transformer" else _read_cnn
    spec = reader(fields, common)
    counted, published = spec.parameter_count(), spec.published_parameters
    if counted != published:
        raise fields.error(
            "published_parameters",
            f"the configuration gives {counted:,} parameters but {published:,} are published: "
            "a configuration number is wrong",
        )
    return spec


def load_model_file(path: str | Path, text: str | None = None) -> list[ModelSpec]:
    return read_entries(path, "models", SCHEMA, read_model_entry, text)


class ModelCatalog(Registry[ModelSpec]):
    def __init__(self, models) -> None:
        super().__init__("model", models)


def load_models(directory: str | Path | None = None) -> ModelCatalog:
    """Load every ``*.yaml`` model preset in ``directory`` (the bundled presets by default)."""
    directory = Path(directory) if directory is not None else resource_path("models")
    files = sorted(directory.glob("*.yaml"))
    if not files:
        raise DataFileError(directory, "holds no model files (*.yaml)")
    models: list[ModelSpec] = []
    for path in files:
        models.extend(load_model_file(path))
    return ModelCatalog(models)
