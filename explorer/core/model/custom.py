"""Custom workloads: a stack of layers the user builds, costed like the presets.

Each layer has a kind and its sizes, and may repeat. Token counts follow the step's
parameters as for transformers (prefill: batch × seq tokens attending over seq; decode:
batch tokens attending over context); a conv2d layer processes ``batch`` images.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from explorer.core.files.datafile import Fields, brief
from explorer.core.model import blocks
from explorer.core.model import ops as op

if TYPE_CHECKING:
    from explorer.core.model.workload import WorkloadParams


class LayerKind(StrEnum):
    """What a custom layer is: a stack's ``kind``."""

    LINEAR = "linear"
    ATTENTION = "attention"
    MLP = "mlp"
    NORM = "norm"
    SOFTMAX = "softmax"
    ELEMENTWISE = "elementwise"
    CONV2D = "conv2d"
    EMBEDDING = "embedding"


class ValueKind(StrEnum):
    """What values a layer's field takes (besides a tuple of choices)."""

    COUNT = "count"  # a whole number ≥ 1
    FLAG = "flag"  # true or false


COUNT, FLAG = ValueKind.COUNT, ValueKind.FLAG
# Per kind: field name → (default, kind of value, help). Kinds of value: COUNT, FLAG, or a
# tuple of choices.
Value = int | bool | str  # a layer's field: a count, a flag or one of its choices
LAYER_FIELDS: dict[LayerKind, dict[str, tuple[Value, ValueKind | tuple[str, ...], str]]] = {
    LayerKind.LINEAR: {"d_in": (4096, COUNT, "input features"), "d_out": (4096, COUNT, "output features"),
                       "bias": (False, FLAG, "adds a bias"),
                       "role": ("fc1", ("fc1", "fc2", "q_proj", "k_proj", "v_proj", "o_proj", "qkv_proj",
                                        "gate_proj", "up_proj", "down_proj", "lm_head"),
                                "role of the product")},
    LayerKind.ATTENTION: {"d_model": (4096, COUNT, "model width"), "heads": (32, COUNT, "query heads"),
                          "kv_heads": (32, COUNT, "key/value heads (fewer: grouped-query attention)")},
    LayerKind.MLP: {"d_model": (4096, COUNT, "model width"), "width": (11008, COUNT, "hidden width"),
                    "gated": (True, FLAG, "gate × up (SwiGLU) instead of one hidden layer"),
                    "activation": ("silu", ("silu", "gelu"), "activation function")},
    LayerKind.NORM: {"d": (4096, COUNT, "features"), "kind": ("rmsnorm", ("rmsnorm", "layernorm"), "norm")},
    LayerKind.SOFTMAX: {"width": (4096, COUNT, "values per row (one row per token)")},
    LayerKind.ELEMENTWISE: {"width": (4096, COUNT, "values per token"),
                            "flops_per_element": (1, COUNT, "FLOPs per value"),
                            "inputs": (2, COUNT, "input tensors (1: activation, 2: residual add)"),
                            "role": ("residual", ("residual", "activation"), "role")},
    LayerKind.CONV2D: {"image": (56, COUNT, "input height and width"), "c_in": (64, COUNT, "input channels"),
                       "c_out": (64, COUNT, "output channels"), "kernel": (3, COUNT, "kernel size"),
                       "stride": (1, COUNT, "stride")},
    LayerKind.EMBEDDING: {"vocab": (32000, COUNT, "vocabulary"), "d": (4096, COUNT, "width")},
}
LAYER_KINDS = tuple(kind.value for kind in LayerKind)  # plain strings: what files hold


@dataclass(frozen=True)
class Layer:
    """One layer of a custom stack: its kind, its own values, and how many times it repeats."""

    kind: LayerKind  # a string is read as its LayerKind
    values: tuple[tuple[str, object], ...] = ()
    repeat: int = 1

    def __post_init__(self) -> None:
        if self.kind not in LAYER_FIELDS:
            raise ValueError(f"unknown layer kind {self.kind!r}: choose {', '.join(LAYER_KINDS)}")
        object.__setattr__(self, "kind", LayerKind(self.kind))
        if isinstance(self.repeat, bool) or not isinstance(self.repeat, int) or self.repeat < 1:
            raise ValueError(f"repeat must be a whole number >= 1, got {brief(self.repeat)}")
        if self.repeat > MAX_REPEAT:
            raise ValueError(f"repeat must be at most {MAX_REPEAT:,}, got {brief(self.repeat)}")
        known = LAYER_FIELDS[self.kind]
        for name, value in self.values:
            if name not in known:
                raise ValueError(f"{self.kind} has no field {name!r} (it has {', '.join(known)})")
            _check(name, value, known[name][1])
        if self.kind == LayerKind.ATTENTION:
            d, heads, kv_heads = self.count("d_model"), self.count("heads"), self.count("kv_heads")
            if d % heads:
                raise ValueError(f"d_model {d} is not divisible by {heads} heads")
            if heads % kv_heads:
                raise ValueError(f"{heads} heads cannot be shared by {kv_heads} KV heads")

    def get(self, name: str) -> Value:
        value = dict(self.values).get(name, LAYER_FIELDS[self.kind][name][0])
        if not isinstance(value, int | str):  # (checked when the layer was made)
            raise TypeError(f"{self.kind}'s {name} holds {brief(value)}")
        return value

    def count(self, name: str) -> int:
        """A COUNT field's value (a whole number, checked when the layer was made)."""
        value = self.get(name)
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{self.kind}'s {name} is not a count")
        return value

    def flag(self, name: str) -> bool:
        """A FLAG field's value."""
        value = self.get(name)
        if not isinstance(value, bool):
            raise TypeError(f"{self.kind}'s {name} is not a flag")
        return value

    def text(self, name: str) -> str:
        """A field's value that is one of its choices."""
        value = self.get(name)
        if not isinstance(value, str):
            raise TypeError(f"{self.kind}'s {name} is not one of its choices")
        return value

    def with_value(self, name: str, value: Value) -> Layer:
        others = tuple((k, v) for k, v in self.values if k != name)
        return Layer(self.kind, (*others, (name, value)), self.repeat)

    def describe(self) -> str:
        sizes = ", ".join(f"{k} {self.get(k)}" for k in LAYER_FIELDS[self.kind]
                          if LAYER_FIELDS[self.kind][k][1] == COUNT)
        return f"{self.kind} ({sizes})" + (f" ×{self.repeat}" if self.repeat > 1 else "")


# Limits a stack is checked against when it loads, so its analysis takes milliseconds: the
# largest models have about 130 layers and widths below a million.
MAX_COUNT = 1 << 24  # a width, a vocabulary, channels…
MAX_REPEAT = 10_000  # copies of one entry (the layer editor's limit too)
MAX_ENTRIES = 1_000  # entries in one stack
MAX_LAYERS = 100_000  # layers in one stack, counting repeats


def _check(name: str, value: object, kind: ValueKind | tuple[str, ...]) -> None:
    if kind == COUNT:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a whole number >= 1, got {brief(value)}")
        if value > MAX_COUNT:
            raise ValueError(f"{name} must be at most {MAX_COUNT:,}, got {brief(value)}")
    elif kind == FLAG:
        if not isinstance(value, bool):
            raise ValueError(f"{name} must be true or false, got {brief(value)}")
    elif value not in kind:
        raise ValueError(f"{name} must be one of {', '.join(kind)}, got {brief(value)}")


@dataclass(frozen=True)
class CustomSpec:
    """A model built in the layer editor: its layers in order, named and with its origin."""

    layers: tuple[Layer, ...] = field(default_factory=tuple)
    name: str = "Custom stack"
    id: str = "custom"
    origin: str = ""
    architecture: str = "custom"

    def parameter_count(self, active: bool = False) -> int:
        """Every weight (a custom stack has no experts: every token uses all of them)."""
        return sum(_weights(layer) * layer.repeat for layer in self.layers)

    def kv_values_per_token(self) -> int:
        return sum(2 * layer.count("kv_heads") * (layer.count("d_model") // layer.count("heads"))
                   * layer.repeat
                   for layer in self.layers if layer.kind == LayerKind.ATTENTION)

    def kv_cache_values(self, tokens: int) -> int:
        return tokens * self.kv_values_per_token()

    @property
    def item_unit(self) -> str:
        """A stack of convolutions processes images; anything else, tokens."""
        if self.layers and all(layer.kind == LayerKind.CONV2D for layer in self.layers):
            return "images"
        return "tokens"

    def to_list(self) -> list[dict[str, object]]:
        out = []
        for layer in self.layers:
            entry: dict[str, object] = {"kind": layer.kind.value, **dict(layer.values)}
            if layer.repeat > 1:
                entry["repeat"] = layer.repeat
            out.append(entry)
        return out


def _weights(layer: Layer) -> int:
    c, f, t = layer.count, layer.flag, layer.text
    if layer.kind == LayerKind.LINEAR:
        return c("d_in") * c("d_out") + (c("d_out") if f("bias") else 0)
    if layer.kind == LayerKind.ATTENTION:
        d, head = c("d_model"), c("d_model") // c("heads")
        return 2 * d * d + 2 * d * c("kv_heads") * head
    if layer.kind == LayerKind.MLP:
        return (3 if f("gated") else 2) * c("d_model") * c("width")
    if layer.kind == LayerKind.NORM:
        return (2 if t("kind") == op.Norm.LAYERNORM else 1) * c("d")
    if layer.kind == LayerKind.CONV2D:
        return c("c_out") * c("c_in") * c("kernel") ** 2
    if layer.kind == LayerKind.EMBEDDING:
        return c("vocab") * c("d")
    return 0


def read_layers(fields: Fields, name: str = "layers") -> tuple[Layer, ...]:
    """Layers from a data file, errors naming the layer and field."""
    out = []
    entries = fields.items(name)
    if len(entries) > MAX_ENTRIES:
        raise fields.error(name, f"has {len(entries):,} entries; a stack holds at most {MAX_ENTRIES:,} "
                                 "(use repeat for identical layers)")
    total = 0
    for index, raw in enumerate(entries):
        item = fields.child(raw, f"{name}[{index}]")
        kind = LayerKind(item.text("kind", choices=LAYER_KINDS))
        repeat = item.integer("repeat", required=False, default=1, maximum=MAX_REPEAT)
        total += repeat
        if total > MAX_LAYERS:
            raise item.error("repeat", f"brings the stack to {total:,} layers; at most {MAX_LAYERS:,}")
        values = []
        for key, (_default, value_kind, _help) in LAYER_FIELDS[kind].items():
            if not item.has(key):
                continue
            value = item.raw(key)
            try:
                _check(key, value, value_kind)
            except ValueError as exc:
                raise item.error(key, str(exc)) from None
            values.append((key, value))
        item.finish()
        try:
            out.append(Layer(kind, tuple(values), repeat))
        except ValueError as exc:
            raise item.error("kind", str(exc)) from None
    return tuple(out)


def custom_ops(spec: CustomSpec, p: WorkloadParams, batch: op.Size) -> list[op.Op]:
    """The ops of one step through the stack (``p``: WorkloadParams)."""
    ab, wb = p.act_bytes, p.weight_bytes
    n = batch * p.query_tokens
    out: list[op.Op] = []
    start = 0
    for index, layer in enumerate(spec.layers):
        layers = tuple(range(start, start + layer.repeat))
        start += layer.repeat
        c, f, t = layer.count, layer.flag, layer.text

        def add(name: str, role: str, unit: str, cost: op.Cost, detail: str = "", vector_flops: op.Size = 0,
                layers: tuple[int, ...] = layers, index: int = index) -> None:
            out.append(op.Op.of(f"L{index}.{name}", role, unit, cost, layers, detail, vector_flops))

        if layer.kind == LayerKind.LINEAR:
            add(t("role"), t("role"), op.MATRIX, op.linear(n, c("d_in"), c("d_out"), ab, wb, f("bias")),
                f"{c('d_in')} → {c('d_out')}")
        elif layer.kind in (LayerKind.ATTENTION, LayerKind.MLP):
            d = c("d_model")
            parts = (blocks.attention(p, batch, d, c("heads"), c("kv_heads"), d // c("heads"))
                     if layer.kind == LayerKind.ATTENTION else
                     blocks.mlp(p, n, d, c("width"), f("gated"), t("activation")))
            for part in parts:
                add(part.name, part.role, part.unit, part.cost, part.detail, part.vector_flops)
        elif layer.kind == LayerKind.NORM:
            add("norm", "norm", op.VECTOR, op.norm(n, c("d"), t("kind"), ab, wb), t("kind"))
        elif layer.kind == LayerKind.SOFTMAX:
            add("softmax", "attn_softmax", op.VECTOR, op.attention_softmax(1, 1, n, c("width"), ab))
        elif layer.kind == LayerKind.ELEMENTWISE:
            add(t("role"), t("role"), op.VECTOR,
                op.elementwise(n * c("width"), c("flops_per_element"), c("inputs"), ab))
        elif layer.kind == LayerKind.CONV2D:
            k, size = c("kernel"), c("image")
            cost = op.conv2d(batch, size, size, c("c_in"), c("c_out"), k, c("stride"), k // 2, ab, wb)
            add("conv", "conv", op.MATRIX, cost, f"{k}×{k}/{c('stride')}, {c('c_in')} → {c('c_out')}")
        elif layer.kind == LayerKind.EMBEDDING:
            rows = n * c("d")
            add("embedding", "embedding", op.VECTOR, op.Cost(0, rows * wb + rows * ab, rows * wb))
    return out
