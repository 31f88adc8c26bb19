"""Model descriptions (transformers and CNNs), their parameter counts, and the preset files.

Presets live in resources/models/*.yaml; numbers come from each model's
published configuration (the ``source`` URL) and the parameter count computed
here must equal the published total stored beside it (a test checks it).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from explorer.core.datafile import DataFileError, Fields, brief, read_entries
from explorer.core.registry import Registry
from explorer.paths import resource_path

SCHEMA = 1
ARCHITECTURES = ("transformer", "cnn", "vit", "hf-config")


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
    # Beyond a plain Llama-style block (all default off; a Hugging Face config sets them,
    # explorer.core.hf_config):
    head_dim_value: int = 0  # per-head width when it is not d_model / heads (Gemma, Qwen3)
    qkv_bias: bool = False  # biases on the Q, K and V projections only (Qwen2)
    qk_norm: bool = False  # an RMS norm over each head's query and key (Qwen3)
    norms_per_layer: int = 2  # Gemma 2 normalises before and after attention and MLP: 4
    sliding_window: int = 0  # tokens a windowed layer attends over (and caches); 0: none
    window_layers: tuple[int, ...] = ()  # the layers with the window (Gemma 2: every other)
    experts: int = 0  # routed experts per MoE layer (0: a dense model)
    experts_per_token: int = 0  # experts each token is routed to
    expert_width: int = 0  # an expert's MLP width
    shared_width: int = 0  # width of the experts every token goes through (0: none)
    shared_gate: bool = False  # a sigmoid gate on the shared experts' output (Qwen2-MoE)
    dense_layers: int = 0  # the first layers keep a dense MLP (DeepSeek)
    router_bias: bool = False  # a per-expert bias on the router's scores (DeepSeek-V3)
    # Multi-head latent attention (DeepSeek-V2/V3; all 0: ordinary attention). Queries go
    # through a rank-q_lora bottleneck; keys and values are one cached latent of kv_lora
    # values plus a shared rotary key of qk_rope values per token.
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    qk_nope_head_dim: int = 0
    qk_rope_head_dim: int = 0
    v_head_dim: int = 0
    config: str = ""  # the Hugging Face config.json this spec was read from (canonical JSON)

    item_unit = "tokens"

    @property
    def head_dim(self) -> int:
        return self.head_dim_value or self.d_model // self.heads

    @property
    def moe(self) -> bool:
        return self.experts > 0

    @property
    def mla(self) -> bool:
        return self.kv_lora_rank > 0

    def moe_layer(self, layer: int) -> bool:
        return self.moe and layer >= self.dense_layers

    def windowed(self, layer: int) -> bool:
        return self.sliding_window > 0 and layer in self.window_layers

    @property
    def q_dim(self) -> int:
        return self.heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        return self.kv_heads * self.head_dim

    def _attention_parameters(self) -> int:
        if self.mla:
            return self._latent_attention_parameters()
        d, q, kv = self.d_model, self.q_dim, self.kv_dim
        weights = d * q + 2 * d * kv + q * d
        biases = q + 2 * kv + (d if self.bias else 0) if self.bias or self.qkv_bias else 0
        return weights + biases + (2 * self.head_dim if self.qk_norm else 0)

    def _latent_attention_parameters(self) -> int:
        """Q down (d → q_lora), its norm, Q up (q_lora → heads × (nope + rope)); the KV latent
        and rotary key (d → kv_lora + rope), its norm, K and V up (kv_lora → heads × (nope +
        v)); the output projection (heads × v → d)."""
        d, h = self.d_model, self.heads
        qk = self.qk_nope_head_dim + self.qk_rope_head_dim
        if self.q_lora_rank:
            query = d * self.q_lora_rank + self.q_lora_rank + self.q_lora_rank * h * qk
        else:
            query = d * h * qk
        latent = d * (self.kv_lora_rank + self.qk_rope_head_dim) + self.kv_lora_rank
        up = self.kv_lora_rank * h * (self.qk_nope_head_dim + self.v_head_dim)
        return query + latent + up + h * self.v_head_dim * d

    def _mlp_parameters(self, width: int) -> int:
        d = self.d_model
        biases = ((2 * width if self.gated_mlp else width) + d) if self.bias else 0
        return (3 if self.gated_mlp else 2) * d * width + biases

    def expert_parameters(self) -> int:
        """One routed expert's weights (0 for a dense model)."""
        return self._mlp_parameters(self.expert_width) if self.moe else 0

    def _moe_parameters(self, experts: int) -> int:
        """An MoE layer's MLP with ``experts`` of its routed experts (all, or those a token uses)."""
        router = self.d_model * self.experts + (self.experts if self.router_bias else 0)
        shared = self._mlp_parameters(self.shared_width) if self.shared_width else 0
        return router + experts * self._mlp_parameters(self.expert_width) + shared + \
            (self.d_model if self.shared_gate else 0)

    def layer_parameters(self, layer: int = 0, active: bool = False) -> int:
        """Parameters of ``layer``; ``active``: those one token uses (its routed experts only)."""
        norms = self.norms_per_layer * (2 * self.d_model if self.norm == "layernorm" else self.d_model)
        if self.moe_layer(layer):
            mlp = self._moe_parameters(self.experts_per_token if active else self.experts)
        else:
            mlp = self._mlp_parameters(self.mlp_width)
        return self._attention_parameters() + mlp + norms

    def embedding_parameters(self) -> int:
        """Token (and learned position) embedding tables."""
        positions = self.max_context * self.d_model if self.positions == "learned" else 0
        return self.vocab * self.d_model + positions

    def parameter_count(self, active: bool = False) -> int:
        """Every parameter; ``active``: those one token uses (a mixture of experts routes each
        token to a few of its experts)."""
        final_norm = 2 * self.d_model if self.norm == "layernorm" else self.d_model
        lm_head = 0 if self.tied_embeddings else self.vocab * self.d_model
        if not self.moe:  # every layer alike
            return self.embedding_parameters() + self.layers * self.layer_parameters() + final_norm + lm_head
        layers = sum(self.layer_parameters(i, active) for i in range(self.layers))
        return self.embedding_parameters() + layers + final_norm + lm_head

    def matmul_parameters(self) -> int:
        """Weights used in matrix products by a dense model: every projection, plus the LM
        head's matrix."""
        per_layer = (self.d_model * (self.q_dim + 2 * self.kv_dim) + self.q_dim * self.d_model
                     + (3 if self.gated_mlp else 2) * self.d_model * self.mlp_width)
        return self.layers * per_layer + self.vocab * self.d_model

    def kv_values_per_token(self) -> int:
        """Cached values per token over all layers: a key and a value per KV head (layers
        with a sliding window hold at most the window's tokens: ``kv_cache_values``)."""
        if self.mla:
            return self.layers * (self.kv_lora_rank + self.qk_rope_head_dim)
        return 2 * self.layers * self.kv_heads * self.head_dim

    def kv_cache_values(self, tokens: int) -> int:
        """Values one sequence of ``tokens`` tokens holds in the KV cache, all layers (latent
        attention caches its latent and rotary key: kv_lora + rope values per token)."""
        per_layer = (self.kv_lora_rank + self.qk_rope_head_dim if self.mla
                     else 2 * self.kv_heads * self.head_dim)
        windowed = len(self.window_layers) if self.sliding_window else 0
        return per_layer * ((self.layers - windowed) * tokens + windowed * min(tokens, self.sliding_window))


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

    def kv_cache_values(self, tokens: int) -> int:
        return 0

    def parameter_count(self, active: bool = False) -> int:
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


@dataclass(frozen=True)
class VitSpec:
    """A vision transformer (ViT, Dosovitskiy et al. 2021): the image cut into patches, each
    embedded by a linear map (a convolution with the patch as kernel and stride), a class
    token and learned positions added, pre-norm encoder blocks (LayerNorm, fused QKV with
    biases, a GELU MLP), a final LayerNorm and a linear classifier on the class token."""

    id: str
    name: str
    image_size: int
    patch: int
    in_channels: int
    d_model: int
    layers: int
    heads: int
    mlp_width: int
    classes: int
    source: str
    published_parameters: int
    parameters_source: str
    origin: str = ""
    architecture: str = "vit"

    item_unit = "images"

    @property
    def tokens(self) -> int:
        """Patches plus the class token (224 / 16 = 14 × 14 = 196, + 1)."""
        return (self.image_size // self.patch) ** 2 + 1

    def kv_values_per_token(self) -> int:
        return 0

    def kv_cache_values(self, tokens: int) -> int:
        return 0

    def parameter_count(self, active: bool = False) -> int:
        d, f = self.d_model, self.mlp_width
        patches = self.in_channels * self.patch**2 * d + d
        embeddings = d + self.tokens * d  # the class token, the positions
        layer = 2 * 2 * d + (3 * d * d + 3 * d) + (d * d + d) + (d * f + f) + (f * d + d)
        return patches + embeddings + self.layers * layer + 2 * d + d * self.classes + self.classes


ModelSpec = TransformerSpec | CnnSpec | VitSpec


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


def _read_vit(fields: Fields, common: dict) -> VitSpec:
    spec = VitSpec(**common, image_size=fields.integer("image_size"), patch=fields.integer("patch"),
                   in_channels=fields.integer("in_channels"), d_model=fields.integer("d_model"),
                   layers=fields.integer("layers"), heads=fields.integer("heads"),
                   mlp_width=fields.integer("mlp_width"), classes=fields.integer("classes"),
                   origin=fields.file)
    if spec.image_size % spec.patch:
        raise fields.error("patch", f"{spec.image_size}-pixel images do not split into "
                                    f"{spec.patch}-pixel patches")
    if spec.d_model % spec.heads:
        raise fields.error("heads", f"d_model {spec.d_model} is not divisible by {spec.heads} heads")
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


_SCALES = {"B": 10**9, "M": 10**6}


def _published(fields: Fields, name: str, required: bool = True) -> int | str | None:
    """An exact count, or a figure as published: "46.7 B" (checked to its digits)."""
    value = fields.raw(name, required=required)
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and value > 0):
        return value
    if isinstance(value, str):
        number, _, scale = value.strip().partition(" ")
        try:
            if float(number) > 0 and scale in _SCALES:
                return value.strip()
        except ValueError:
            pass
    raise fields.error(name, f"expected a count such as 8030261248 or a published figure such as "
                             f"\"46.7 B\", got {brief(value)}")


def _figure(published: int | str) -> float:
    """The number a published count stands for: 8030261248, or "46.7 B" as 46.7e9."""
    if isinstance(published, int):
        return published
    number, scale = published.split(" ")
    return float(number) * _SCALES[scale]


def matches_published(count: int, published: int | str) -> bool:
    """Whether ``count`` is ``published``: exactly, or to the digits of a figure such as
    "46.7 B", rounded or cut ("37 B" for DeepSeek-V3's 37.6 billion active)."""
    if isinstance(published, int):
        return count == published
    number, scale = published.split(" ")
    decimals = len(number.split(".")[1]) if "." in number else 0
    unit = _SCALES[scale] / 10**decimals
    value = _figure(published)
    return value - unit / 2 <= count < value + unit


def _read_from_config(fields: Fields, common: dict) -> TransformerSpec:
    """A preset read from a model's own config.json (a path beside the preset file)."""
    from dataclasses import replace

    from explorer.core.hf_config import read_config_file

    name = fields.text("config")
    path = Path(fields.file).parent / name
    if ".." in Path(name).parts or Path(name).is_absolute():
        raise fields.error("config", "expected a file beside the preset file (configs/NAME.json)")
    try:
        spec = read_config_file(path)
    except DataFileError as exc:
        where = f" (field '{exc.field}')" if exc.field else ""
        raise fields.error("config", f"{path.name}: {exc.reason}{where}") from None
    return replace(spec, **common, origin=fields.file, config="")


def read_model_entry(fields: Fields) -> ModelSpec:
    published = _published(fields, "published_parameters")
    common = {
        "id": fields.identifier("id"),
        "name": fields.text("name"),
        "source": fields.url("source"),
        "parameters_source": fields.url("parameters_source"),
        "published_parameters": round(_figure(published)),
    }
    architecture = fields.text("architecture", choices=ARCHITECTURES)
    readers = {"transformer": _read_transformer, "cnn": _read_cnn, "vit": _read_vit,
               "hf-config": _read_from_config}
    spec = readers[architecture](fields, common)
    for name, figure, active in (("published_parameters", published, False),
                                 ("active_parameters", _published(fields, "active_parameters", False), True)):
        counted = spec.parameter_count(active=active)
        if figure is None or matches_published(counted, figure):
            continue
        what = "active parameters" if active else "parameters"
        wrong = ": a configuration number is wrong" if isinstance(figure, int) else ""
        shown = f"{figure:,}" if isinstance(figure, int) else figure
        raise fields.error(name, f"the configuration gives {counted:,} {what} but {shown} are "
                                 f"published{wrong}")
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
