"""The model preset files: resources/models/*.yaml, each model's numbers from its
published configuration (the ``source`` URL); the parameter count computed from the
description must equal the published total stored beside it (a test checks it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Literal, TypedDict, overload

from explorer.core.files.datafile import DataFileError, Fields, brief, read_entries
from explorer.core.files.registry import Registry
from explorer.core.model.models import CnnSpec, ModelSpec, Stage, TransformerSpec, VitSpec
from explorer.paths import resource_path

SCHEMA = 1
ARCHITECTURES = ("transformer", "cnn", "vit", "hf-config")


class _Common(TypedDict):
    """The fields every model preset has, whatever its architecture."""

    id: str
    name: str
    source: str
    parameters_source: str
    published_parameters: int


def _read_transformer(fields: Fields, common: _Common) -> TransformerSpec:
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
        dropout=fields.flag("dropout"),
        origin=fields.file,
    )
    if spec.d_model % spec.heads:
        raise fields.error("heads", f"d_model {spec.d_model} is not divisible by {spec.heads} heads")
    if spec.heads % spec.kv_heads:
        raise fields.error("kv_heads", f"{spec.heads} heads cannot be shared evenly by "
                                       f"{spec.kv_heads} KV heads")
    return spec


def _read_vit(fields: Fields, common: _Common) -> VitSpec:
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


def _read_cnn(fields: Fields, common: _Common) -> CnnSpec:
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


@overload
def _published(fields: Fields, name: str, required: Literal[True] = ...) -> int | str: ...
@overload
def _published(fields: Fields, name: str, required: bool) -> int | str | None: ...
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
    unit = _SCALES[scale] / 10.0**decimals
    value = _figure(published)
    return value - unit / 2 <= count < value + unit


def _read_from_config(fields: Fields, common: _Common) -> TransformerSpec:
    """A preset read from a model's own config.json (a path beside the preset file)."""
    from dataclasses import replace

    from explorer.core.model.hf_config import read_config_file

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
    common: _Common = {
        "id": fields.identifier("id"),
        "name": fields.text("name"),
        "source": fields.url("source"),
        "parameters_source": fields.url("parameters_source"),
        "published_parameters": round(_figure(published)),
    }
    architecture = fields.text("architecture", choices=ARCHITECTURES)
    readers: dict[str, Callable[[Fields, _Common], ModelSpec]] = {
        "transformer": _read_transformer, "cnn": _read_cnn, "vit": _read_vit,
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
    def __init__(self, models: Iterable[ModelSpec]) -> None:
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
