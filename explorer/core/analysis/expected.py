"""The expected time of a step: its ops at the shares of the roofs real kernels reach.

The bound (``analysis``) runs every op at the datasheet's peak and bandwidth. The expected
time runs each at what kernels of its class reach (``hardware.efficiency``):

- a matrix product of M rows and depth K: arithmetic at the matrix peak × gemm ×
  K / (K + gemm_depth), its rows padded to whole tiles of gemm_tile rows; its bytes at
  bandwidth × gemm_bandwidth; the slower of the two, plus the faster as far as it is not
  hidden (1 − gemm_overlap); M is the product's rows:
  its FLOPs over twice its weights (2·M·K·N FLOPs, K·N weights);
- attention in decode: its bytes (the KV cache) at bandwidth × decode_attention; on a
  prompt (prefill, training): its products at the matrix peak × the share the workload's
  ``attention_kernel`` reaches (``attention_kernel.shares``: FlashAttention 2's
  prefill_attention by default; FlashAttention 3's or cuDNN's forward and backward shares
  where the device's family publishes them), the forward's products at the forward's share
  and the backward's at the backward's. In
  training a fused kernel's backward does 2.5 times its forward's products where the step
  counts 2 (``FUSED_BACKWARD_PRODUCTS``: it keeps no scores, so it computes Q·Kᵀ again):
  FlashAttention-2's paper, arXiv 2307.08691, section 4.1, "we multiply the forward pass
  FLOPs by 2.5 (since there are 2 matmuls in the forward pass and 5 matmuls in the
  backward pass, due to recomputation)", as the FlashAttention-3 paper counts its
  backward too; its time is that of 3.5 forwards, not 3 (4.5, not 4, with full
  recomputation);
- other ops (norms, activations, residual adds, lookups, the optimizer): their bytes at
  bandwidth × bandwidth, their arithmetic at the vector peak;
- communication: the link's latency as in the bound, the bytes at its rate × link; within
  a node NCCL's collectives at its rate × nccl_link, each adding nccl_us;
- arithmetic on the vector units keeps the fp32 vector peak (no factor is published for
  them; in a fused attention it is the softmax's);
- every kernel adds kernel_us (each op of each layer is one kernel, once per pass in
  training), and the step adds step_ms.

The pieces add up like the bound's (``terms.step_total``: a pipeline's bubble scales the
pipelined ops, the once-a-step ops count whole), so bound ≤ expected whenever every share
is at most 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from explorer.core.analysis import attention_kernel
from explorer.core.analysis.analysis import Analysis
from explorer.core.analysis.engine_units import product_peak
from explorer.core.analysis.terms import once_per_step, step_total
from explorer.core.files.userfiles import notice
from explorer.core.hardware.efficiency import Efficiency, Source, calibrated, efficiency_for
from explorer.core.hardware.hardware import ComputePeak, Link, Tier
from explorer.core.model import collective_costs, collectives, training
from explorer.core.model import ops as op
from explorer.core.model.applicability import Phase
from explorer.core.model.models import TransformerSpec
from explorer.core.model.quantization import value_bytes

ATTENTION_ROLES = frozenset({op.Role.ATTN_SCORE, op.Role.ATTN_SOFTMAX, op.Role.ATTN_VALUE})
# A fused attention kernel's backward: its products over its forward's (5 products of the
# forward's shape to its 2: the scores computed again, then the gradients of P, S, Q, K and
# V), where the step counts the backward as 2 forwards (``training.op_passes``).
FUSED_BACKWARD_PRODUCTS = 2.5


class OpClass:
    """The classes an op's expected time is worked out by (names for tables and JSON)."""

    GEMM = "matrix products"
    ATTENTION = "attention"
    MEMORY = "memory-bound kernels"
    LINK = "communication"
    KERNELS = "kernel overheads"
    STEP = "step overhead"


@dataclass(frozen=True)
class Expected:
    """A step's expected time and where it goes (seconds, one device)."""

    efficiency: Efficiency
    op_time_s: NDArray[np.float64]  # per occurrence of each op, kernel overhead included
    time_s: float  # the step's
    bound_s: float  # the step's roofline bound, for comparison
    parts: dict[str, float]  # seconds of the step by ``OpClass``
    kernel_s: NDArray[np.float64] | None = None  # per occurrence of each op: its launches' seconds
    # per occurrence of each op: the seconds of its work that read a matrix product's bytes
    # (0 for other ops; the rest of a product's work is its arithmetic)
    reading_s: NDArray[np.float64] | None = None
    band: tuple[float, float] | None = None  # (low, high) seconds: where a measured run is expected
    engine: str = ""  # the serving or training engine whose fitted terms it includes (engine_terms)

    @property
    def ratio(self) -> float:
        """Expected over bound (≥ 1)."""
        return self.time_s / self.bound_s


def _rows(o: op.Op, flops: float, weight_bytes_per_value: float) -> float:
    """A product's rows M from its FLOPs and weights (2·M·K·N FLOPs over K·N weights)."""
    weights = float(o.weight_bytes) / weight_bytes_per_value
    return flops / (2 * weights) if weights > 0 else math.inf


def product_time(e: Efficiency, flops: float, moved: float, rows: float, depth: float, peak: float,
                 bandwidth: float, precision: str = "bf16") -> float:
    """Seconds of a matrix product's work (no launch): its arithmetic at the share of
    ``peak`` its rows, depth and precision reach and its bytes at the share of ``bandwidth``
    a product reading its weights reaches, the shorter of the two hidden under the longer
    as far as ``gemm_overlap`` says (``gemv_overlap`` for a matrix-vector product, one row)."""
    return sum(product_parts(e, flops, moved, rows, depth, peak, bandwidth, precision))


def product_parts(e: Efficiency, flops: float, moved: float, rows: float, depth: float, peak: float,
                  bandwidth: float, precision: str = "bf16") -> tuple[float, float]:
    """``product_time`` as (its arithmetic's seconds, its bytes' seconds): the longer of the
    two whole, the shorter as far as it is not hidden."""
    arithmetic = flops / (peak * e.gemm_share(rows, depth, precision))
    memory = moved / (bandwidth * e.value("gemm_bandwidth"))
    shown = 1 - e.value("gemv_overlap" if rows <= 1 else "gemm_overlap")
    return (arithmetic, shown * memory) if arithmetic > memory else (shown * arithmetic, memory)


def achieved(e: Efficiency, link: Link) -> collectives.Achieved:
    """How far ``link``'s collectives stay from the cost model with the factors ``e``:
    within a node NCCL's at ``nccl_link`` and ``nccl_us``, the engines' at ``link``;
    across nodes every one at ``link``."""
    if link.tier == Tier.NODE:
        return collectives.Achieved(e.value("link"), e.value("nccl_link"), e.value("nccl_us") * 1e-6,
                                    e.value("nccl_ring"))
    return collectives.Achieved(e.value("link"), e.value("link"))


def op_class(o: op.Op) -> str:
    """The class (``OpClass``) an op's expected time is worked out by."""
    if o.unit == op.LINK:
        return OpClass.LINK
    if o.role in ATTENTION_ROLES:
        return OpClass.ATTENTION
    return OpClass.GEMM if o.unit == op.MATRIX else OpClass.MEMORY


def products_peak(a: Analysis) -> ComputePeak:
    """The peak ``a``'s products run at in the expected time: the bound's matrix roof, or on
    a CPU the unit its ``engine``'s kernels use for the precision (``engine_units``)."""
    return product_peak(a.hardware, a.roofs.matrix, a.params.engine, a.params.weight_group)


def _kernel_products(a: Analysis, o: op.Op) -> tuple[float, float]:
    """The products an attention kernel does over those the step counts for op ``o``, in all
    and in its backward: (1, 0) but in training with a fused kernel, whose backward does
    ``FUSED_BACKWARD_PRODUCTS`` forwards' worth of them where the step counts 2: (3.5/3,
    2.5/3) a step; (4.5/4, 2.5/4) with full recomputation."""
    if a.params.phase != Phase.TRAIN or a.params.attention == "naive":
        return 1.0, 0.0
    passes = training.op_passes(o, a.params)  # forwards, recomputed ones included, and 2 for the backward
    return (passes - 2 + FUSED_BACKWARD_PRODUCTS) / passes, FUSED_BACKWARD_PRODUCTS / passes


def _work_time(a: Analysis, e: Efficiency, i: int, peak: ComputePeak | None = None) -> tuple[float, float]:
    """Seconds of one occurrence of op ``i``'s work (no kernel overhead), and of them those
    reading a matrix product's bytes; ``peak``: the products' (``products_peak``)."""
    o, flops, moved = a.ops[i], float(a.flops[i]), float(a.bytes[i])
    matrix, vector = (peak or products_peak(a)).flops_per_s, a.roofs.vector.flops_per_s
    bandwidth = a.roofs.bandwidth_bytes_per_s
    kind = op_class(o)
    if kind == OpClass.LINK:
        link = a.links[i]
        assert link is not None  # a communication op crosses a link
        return float(collective_costs.op_link_seconds(link, o, moved, a.params.phase == Phase.TRAIN,
                                                      achieved(e, link))), 0.0
    vector_s = float(o.vector_flops) / vector
    if kind == OpClass.ATTENTION:
        if a.params.phase == Phase.DECODE and isinstance(a.model, TransformerSpec):  # a ViT runs a prompt
            return max(float(a.time_s[i]), moved / (bandwidth * e.value("decode_attention"))), 0.0
        if o.unit == op.VECTOR:  # a naive kernel's softmax, written out
            return max(flops / vector, moved / (bandwidth * e.bandwidth)), 0.0
        products = flops - float(o.vector_flops)
        done, backward = _kernel_products(a, o)
        forward_share, backward_share = attention_kernel.shares(a.params, a.model, a.hardware, e, a.ops)
        if forward_share == backward_share:  # (FlashAttention 2's one share, both ways)
            arithmetic = products * done / (matrix * forward_share) + vector_s
        else:
            arithmetic = (products * (done - backward) / (matrix * forward_share)
                          + products * backward / (matrix * backward_share) + vector_s)
        return max(arithmetic, moved / (bandwidth * e.bandwidth)), 0.0
    if kind == OpClass.GEMM:
        rows = _rows(o, flops, value_bytes(a.model, a.params, o))
        arithmetic, reading = product_parts(e, flops - float(o.vector_flops), moved, rows, float(o.depth),
                                            matrix, bandwidth, a.roofs.matrix.precision)
        return arithmetic + reading + vector_s, reading
    return max(flops / vector, moved / (bandwidth * e.bandwidth)), 0.0


def class_times(a: Analysis, times: NDArray[np.float64]) -> dict[str, float]:
    """A step's seconds in each class of op, from per-occurrence ``times`` (the bound's
    ``a.time_s``, or expected work times), added up as the step is."""
    once = once_per_step(a.ops)
    factor = training.pipeline_factor(a.params, a.params.split, a.params.batch, a.model)
    classes = np.array([op_class(o) for o in a.ops])
    return {name: float(step_total(a.counts, np.where(classes == name, times, 0.0), once, factor))
            for name in (OpClass.GEMM, OpClass.ATTENTION, OpClass.MEMORY, OpClass.LINK)}


def launches(a: Analysis) -> NDArray[np.float64]:
    """Kernels each occurrence of each op launches: one at inference; in training one per
    pass an op runs (``training.training_ops``: forward and backward, and recomputation;
    a stage's send twice; the optimizer and gradient all-reduces once a step), and with a
    pipeline one per micro-batch."""
    p = a.params
    if p.phase != Phase.TRAIN:
        return np.ones(len(a.ops))
    micro = p.local_batch if p.split.pp > 1 else 1
    return np.array([1.0 if o.once_per_step else training.op_passes(o, p) * micro for o in a.ops])


def expected(a: Analysis, e: Efficiency) -> Expected:
    """The expected time of ``a``'s step with the factors ``e``."""
    kernel_s = e.value("kernel_us") * 1e-6 * launches(a)
    peak = products_peak(a)
    work, reading = np.array([_work_time(a, e, i, peak) for i in range(len(a.ops))]).reshape(-1, 2).T
    op_time = work + kernel_s
    once = once_per_step(a.ops)
    factor = training.pipeline_factor(a.params, a.params.split, a.params.batch, a.model)
    parts = class_times(a, work)
    parts[OpClass.KERNELS] = float(step_total(a.counts, kernel_s, once, factor))
    parts[OpClass.STEP] = e.value("step_ms") * 1e-3
    total = float(step_total(a.counts, op_time, once, factor)) + parts[OpClass.STEP]
    return Expected(e, op_time, total, a.totals.time_s, parts, kernel_s, reading_s=reading)


_families = attention_kernel.families_for


def kernels_for(a: Analysis) -> Expected | None:
    """The kernel model (``expected``) with the factors the workload's ``efficiency`` asks
    for, without the terms fitted to whole runs (None: the bound alone, or no efficiency of
    that source for the device)."""
    if a.params.efficiency == Source.BOUND:
        return None
    family = efficiency_for(a.hardware, _families(a.params.efficiency))
    return None if family is None else expected(a, family)


def expected_for(a: Analysis) -> Expected | None:
    """The expected time the workload's ``efficiency`` asks for, with the fitted terms of its
    ``engine`` and their band (``engine_terms``; None: the bound alone, or no efficiency of
    that source for the device: ``missing_efficiency`` says so)."""
    from explorer.core.analysis.engine_terms import apply, read_terms  # it builds on this module

    e = kernels_for(a)
    return None if e is None else apply(a, e, read_terms(), a.params.engine)


def missing_efficiency(a: Analysis) -> str | None:
    """Why ``a`` has no expected time though one was asked for (None: it has one, or the
    bound alone was asked for)."""
    source = a.params.efficiency
    if source == Source.BOUND or efficiency_for(a.hardware, _families(source)) is not None:
        return None
    if source == Source.CALIBRATED:
        broken = calibrated()[1]
        if broken:  # perhaps the one meant for this device: the file and the field, not only "calibrate"
            return (f"no calibration in the data folder that could be read covers {a.hardware.name} "
                    f"({notice(broken)}): mend or remove the file, or run roofline-explorer calibrate "
                    "on it; its times are the roofline bound alone")
        return (f"no calibration in the data folder covers {a.hardware.name}: run roofline-explorer "
                "calibrate on it; its times are the roofline bound alone")
    return (f"no efficiency is published for {a.hardware.name}'s family: its times are the "
            "roofline bound alone")
