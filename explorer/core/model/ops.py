"""Cost formulas of the ops a workload is made of: FLOPs and bytes moved.

Accounting (docs/accounting.md): a multiply-add is 2 FLOPs; bytes are every operand read
once plus every result written once, at its storage precision. Caches are not
modelled inside an op, except where the op says so (fused attention keeps the
score matrix on chip).

The formulas use only arithmetic, so a size may be a Python int (exact counts
for an op table) or a NumPy array (one evaluation for a whole batch sweep).

Elementwise FLOP counts per element are conventions, stated here once:
layer norm 7 (mean, subtract, square, sum, normalise, scale, shift),
RMS norm 4 (square, sum, normalise, scale), softmax 5 (max, subtract, exp,
sum, divide; the 1/sqrt(d) scale folded in), GELU 8 (tanh form), SiLU 4,
a gate multiply 1, ReLU 1, an add 1, batch norm at inference 2 (scale, shift).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, NamedTuple

# A number or a NumPy array of numbers; kept loose so both flow through the formulas.
Size = Any


class Unit(StrEnum):
    """The units an op runs on."""

    MATRIX = "matrix"  # matrix units where the device has them (GEMMs, convolutions)
    VECTOR = "vector"  # vector units (norms, softmax, elementwise, lookups)
    LINK = "link"  # an interconnect between devices (``explorer.core.model.parallel``)


MATRIX, VECTOR, LINK = Unit.MATRIX, Unit.VECTOR, Unit.LINK


class Role(StrEnum):
    """What an op does in its model (its group on the chart, its row in the tables)."""

    Q_PROJ = "q_proj"
    K_PROJ = "k_proj"
    V_PROJ = "v_proj"
    O_PROJ = "o_proj"
    QKV_PROJ = "qkv_proj"
    GATE_PROJ = "gate_proj"
    UP_PROJ = "up_proj"
    DOWN_PROJ = "down_proj"
    FC1 = "fc1"
    FC2 = "fc2"
    ATTN_SCORE = "attn_score"
    ATTN_SOFTMAX = "attn_softmax"
    ATTN_VALUE = "attn_value"
    NORM = "norm"
    RESIDUAL = "residual"
    ACTIVATION = "activation"
    EMBEDDING = "embedding"
    LM_HEAD = "lm_head"
    CONV = "conv"
    POOL = "pool"
    ROUTER = "router"
    EXPERT_UP = "expert_up"
    EXPERT_DOWN = "expert_down"
    SHARED_UP = "shared_up"
    SHARED_DOWN = "shared_down"
    OPTIMIZER = "optimizer"
    ALL_REDUCE = "all_reduce"
    ALL_TO_ALL = "all_to_all"
    ALL_GATHER = "all_gather"
    SEND_RECV = "send_recv"


ROLES = tuple(Role)


class Norm(StrEnum):
    """Which normalisation a norm op computes (a model's ``norm``)."""

    LAYERNORM = "layernorm"
    RMSNORM = "rmsnorm"
    BATCHNORM = "batchnorm"


NORM_FLOPS_PER_ELEMENT = {Norm.LAYERNORM: 7, Norm.RMSNORM: 4, Norm.BATCHNORM: 2}
ACTIVATION_FLOPS_PER_ELEMENT = {"gelu": 8, "silu": 4, "relu": 1}
SOFTMAX_FLOPS_PER_ELEMENT = 5


class Cost(NamedTuple):
    """FLOPs and bytes moved by one op. Of the bytes, ``weights`` are weights and ``cache``
    is read from the KV cache; the rest are activations (inputs, outputs, scores). A matrix
    product's ``depth`` is K, the length of each dot product (0: not a product of weights)."""

    flops: Size
    bytes: Size
    weights: Size = 0
    cache: Size = 0
    depth: Size = 0

    @property
    def activations(self) -> Size:
        return self.bytes - self.weights - self.cache


@dataclass(frozen=True)
class Op:
    """One op of a workload, possibly repeated identically in several layers.

    ``layers`` lists the layer indices the op appears in (empty: a model-level op
    such as the embedding, which runs once). ``flops`` and ``bytes`` are per
    occurrence. A matrix op may include ``vector_flops`` that run on vector units
    (the softmax inside fused attention).
    """

    name: str
    role: Role
    unit: Unit
    flops: Size
    bytes: Size
    layers: tuple[int, ...] = ()
    detail: str = ""
    weight_bytes: Size = 0
    cache_bytes: Size = 0
    vector_flops: Size = 0
    # A LINK op: the tier of link it crosses (``hardware.LINK_TIERS``) and the transfer
    # steps it takes one after another (each pays the link's latency); its ``bytes`` are
    # those one device sends, its ``flops`` the additions of a reduction.
    link: str = ""
    steps: Size = 0
    # Run once a training step, after the pipeline drains (the optimizer, gradient
    # all-reduces), rather than for each micro-batch of each stage.
    once_per_step: bool = False
    # An all-reduce: the algorithm asked for (``collectives.ALGORITHMS``; chosen with the
    # link when it is timed) and the devices taking part.
    algorithm: str = ""
    group: int = 0
    depth: Size = 0  # a product of weights: K, the length of its dot products (``Cost.depth``)
    # An expert all-to-all: the copies of each token it sends (a mixture of experts' experts
    # per token) and how it crosses nodes ("flat" or "two-hop", ``group_links``).
    fanout: Size = 0
    dispatch: str = ""

    def __post_init__(self) -> None:  # a role or unit given by its name (a custom stack's) is checked here
        object.__setattr__(self, "role", Role(self.role))
        object.__setattr__(self, "unit", Unit(self.unit))

    @property
    def count(self) -> int:
        return max(1, len(self.layers))

    @property
    def activation_bytes(self) -> Size:
        """Bytes of activations the op reads and writes: what must be live while it runs."""
        return self.bytes - self.weight_bytes - self.cache_bytes

    @classmethod
    def of(cls, name: str, role: Role | str, unit: Unit | str, cost: Cost, layers: tuple[int, ...] = (),
           detail: str = "", vector_flops: Size = 0) -> Op:
        return cls(name, Role(role), Unit(unit), cost.flops, cost.bytes, layers, detail, cost.weights,
                   cost.cache, vector_flops, depth=cost.depth)


def linear(n_tokens: Size, d_in: int, d_out: int, act_bytes: float, weight_bytes: float,
           bias: bool = False, out_bytes: float | None = None) -> Cost:
    """(n × d_in) @ (d_in × d_out) [+ bias]: reads input and weights, writes output."""
    out_bytes = act_bytes if out_bytes is None else out_bytes
    flops = 2 * n_tokens * d_in * d_out
    weights = (d_in * d_out + (d_out if bias else 0)) * weight_bytes
    if bias:
        flops = flops + n_tokens * d_out
    return Cost(flops, n_tokens * d_in * act_bytes + weights + n_tokens * d_out * out_bytes, weights,
                depth=d_in)


def norm(n_tokens: Size, d: int, kind: str, act_bytes: float, weight_bytes: float) -> Cost:
    """Layer/RMS norm over d features for n tokens: read x, write y, read the scale (and shift)."""
    weights = (2 * d if kind == Norm.LAYERNORM else d) * weight_bytes
    flops = NORM_FLOPS_PER_ELEMENT[Norm(kind)] * n_tokens * d
    return Cost(flops, 2 * n_tokens * d * act_bytes + weights, weights)


def elementwise(n_elements: Size, flops_per_element: int, n_inputs: int, act_bytes: float) -> Cost:
    """An elementwise op over n elements with n_inputs input tensors and one output."""
    return Cost(flops_per_element * n_elements, (n_inputs + 1) * n_elements * act_bytes)


def attention_scores(batch: Size, heads: int, q_len: Size, kv_len: Size, head_dim: int,
                     kv_heads: int, act_bytes: float, kv_bytes: float,
                     materialise: bool) -> Cost:
    """S = Q Kᵀ for every head. Reads Q and the keys (once per KV head); the naive form
    writes S to memory, the fused form keeps it on chip."""
    flops = 2 * batch * heads * q_len * kv_len * head_dim
    keys = batch * kv_len * kv_heads * head_dim * kv_bytes
    moved = batch * q_len * heads * head_dim * act_bytes + keys
    if materialise:
        moved = moved + batch * heads * q_len * kv_len * act_bytes
    return Cost(flops, moved, cache=keys)


def attention_softmax(batch: Size, heads: int, q_len: Size, kv_len: Size,
                      act_bytes: float) -> Cost:
    """Softmax over a materialised score matrix: read S, write P."""
    elements = batch * heads * q_len * kv_len
    return Cost(SOFTMAX_FLOPS_PER_ELEMENT * elements, 2 * elements * act_bytes)


def attention_values(batch: Size, heads: int, q_len: Size, kv_len: Size, head_dim: int,
                     kv_heads: int, act_bytes: float, kv_bytes: float,
                     materialise: bool) -> Cost:
    """O = P V for every head. Reads the values and writes O; the naive form reads P."""
    flops = 2 * batch * heads * q_len * kv_len * head_dim
    values = batch * kv_len * kv_heads * head_dim * kv_bytes
    moved = values + batch * q_len * heads * head_dim * act_bytes
    if materialise:
        moved = moved + batch * heads * q_len * kv_len * act_bytes
    return Cost(flops, moved, cache=values)


def conv2d_output(size: int, kernel: int, stride: int, padding: int) -> int:
    out = (size + 2 * padding - kernel) // stride + 1
    if out < 1:
        raise ValueError(f"a {kernel}×{kernel} window with stride {stride} does not fit "
                         f"an input of {size} pixels")
    return out


def conv2d(batch: Size, height: int, width: int, c_in: int, c_out: int, kernel: int,
           stride: int, padding: int, act_bytes: float, weight_bytes: float,
           bias: bool = False) -> Cost:
    """Direct 2-D convolution (no groups): read input and filters, write output."""
    h_out = conv2d_output(height, kernel, stride, padding)
    w_out = conv2d_output(width, kernel, stride, padding)
    out_elements = batch * h_out * w_out * c_out
    flops = 2 * out_elements * c_in * kernel * kernel
    weights = (c_out * c_in * kernel * kernel + (c_out if bias else 0)) * weight_bytes
    if bias:
        flops = flops + out_elements
    moved = batch * height * width * c_in * act_bytes + weights + out_elements * act_bytes
    return Cost(flops, moved, weights, depth=c_in * kernel * kernel)


def pool2d(batch: Size, height: int, width: int, channels: int, kernel: int, stride: int,
           padding: int, act_bytes: float) -> Cost:
    """Max or average pooling: one comparison or add per window element of each output."""
    h_out = conv2d_output(height, kernel, stride, padding)
    w_out = conv2d_output(width, kernel, stride, padding)
    out_elements = batch * h_out * w_out * channels
    return Cost(out_elements * kernel * kernel,
                (batch * height * width * channels + out_elements) * act_bytes)


def experts_touched(experts: int, per_token: int, tokens: Size, routing: str = "uniform") -> Size:
    """Expected number of distinct experts that ``tokens`` tokens, each routed to
    ``per_token`` of ``experts``, touch in one step: E·(1 − (1 − k/E)^n) when every token
    picks its experts uniformly and independently ("uniform"); all E ("all", the worst
    case). Their weights are what a mixture-of-experts layer reads."""
    if routing == "all":
        return experts + 0 * tokens
    return experts * (1 - (1 - per_token / experts) ** tokens)
