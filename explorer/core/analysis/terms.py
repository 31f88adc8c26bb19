"""What a step's ops cost on a device, before they are added up: the roofs an op runs under
(``op_roofs``; the fallbacks where a device lacks a precision), its seconds of arithmetic,
the link each communication op crosses and its time, and ``step_total``, the one formula
that adds per-op values into a step's (for one batch and for a sweep). Shared by
``analysis`` (one step) and ``sweep`` (a series of batches)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from explorer.core.hardware.hardware import ComputePeak, Hardware, Link
from explorer.core.model import collective_costs, group_links, parallel
from explorer.core.model import ops as op
from explorer.core.model.models import ModelSpec
from explorer.core.model.step_ops import build_ops
from explorer.core.model.workload import WorkloadError, WorkloadParams

_INT64_MAX = np.iinfo(np.int64).max

# Where a device lacks a precision, the tiers it is converted to, in order; within a
# tier the fastest peak wins.
MATRIX_FALLBACKS: dict[str, tuple[tuple[str, ...], ...]] = {
    "fp32": (("fp32",),),
    "bf16": (("bf16",), ("fp16",), ("fp32",)),
    "fp16": (("fp16",), ("bf16",), ("fp32",)),
    "fp8": (("fp8",), ("fp16", "bf16"), ("fp32",)),
    "int8": (("int8",), ("fp16", "bf16"), ("fp32",)),
}


@dataclass(frozen=True)
class OpRoofs:
    """The peaks and bandwidth a workload runs under on one device."""

    matrix: ComputePeak
    vector: ComputePeak
    bandwidth_bytes_per_s: float
    notes: tuple[str, ...] = ()


def op_roofs(hardware: Hardware, dtype: str) -> OpRoofs:
    """Pick the matrix and vector peaks that ops of precision ``dtype`` run under."""
    notes: list[str] = []
    matrix = None
    for tier in MATRIX_FALLBACKS[dtype]:
        matrix = max((p for p in map(hardware.peak, tier) if p is not None),
                     key=lambda p: p.flops_per_s, default=None)
        if matrix is not None:
            if matrix.precision != dtype:
                notes.append(f"{hardware.name} has no {dtype} arithmetic: values are converted "
                             f"and matrix ops costed at its {matrix.label} peak")
            break
    vector = hardware.vector_peak("fp32")
    if matrix is None or vector is None:
        raise WorkloadError(f"{hardware.name} lists no peak usable for {dtype} "
                            f"(it has {', '.join(hardware.precisions)})")
    return OpRoofs(matrix, vector, hardware.bandwidth_bytes_per_s, tuple(notes))


def compute_time(o: op.Op, roofs: OpRoofs) -> op.Size:
    """Seconds of arithmetic for one occurrence of ``o`` (scalar or array, like its sizes)."""
    vector = roofs.vector.flops_per_s
    if o.unit == op.LINK:  # a reduction's additions hide under its transfer
        return 0 * o.flops
    if o.unit == op.VECTOR:
        return o.flops / vector
    return (o.flops - o.vector_flops) / roofs.matrix.flops_per_s + o.vector_flops / vector


def exact(value: op.Size, what: str) -> int:
    """``value``, a whole count, as a Python int; an error where it exceeds the int64 NumPy counts in."""
    count = int(value)
    if count > _INT64_MAX:
        raise WorkloadError(f"the step is too large to count: {what} exceeds 2^63; "
                            "use a smaller batch, sequence or context")
    return count


def once_per_step(ops: Iterable[op.Op]) -> NDArray[np.bool_]:
    """Ops a training step runs once, after its pipeline drains (the optimizer, the gradient
    all-reduces), rather than for each micro-batch of each stage."""
    return np.array([o.once_per_step for o in ops], dtype=bool)


def links_of(ops: Iterable[op.Op], hardware: Hardware, params: WorkloadParams) -> list[Link | None]:
    """The link each op crosses (None: on one device); a link the device lacks is an error."""
    try:
        return group_links.resolve_links(ops, hardware, params.split)
    except parallel.ParallelError as error:
        raise WorkloadError(str(error)) from None


def timed_links(links: Sequence[Link | None], ops: Sequence[op.Op], times: NDArray[np.float64],
                moved: NDArray[np.float64], training: bool) -> NDArray[np.bool_]:
    """Put each communication op's link time (latency + bytes / rate, an all-reduce by its
    algorithm) into ``times`` (rows per op, scalars or per batch); the mask of the ops that
    communicate."""
    talking = np.array([link is not None for link in links], dtype=bool)
    for i, link in enumerate(links):
        if link is not None:
            times[i] = collective_costs.op_link_seconds(link, ops[i], moved[i], training)
    return talking


def items_per_step(model: ModelSpec, params: WorkloadParams, batch: op.Size) -> op.Size:
    """Tokens processed (or produced) per step, or images for a CNN."""
    return batch * params.query_tokens if model.item_unit == "tokens" else batch


# The ops; per op its FLOPs, bytes, count, seconds of arithmetic and peak; the step's FLOPs and bytes.
OpTerms = tuple[tuple[op.Op, ...], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64],
                NDArray[np.float64], NDArray[np.float64], int, int]
# Per-op values (or ops × batches): exact counts, or seconds and counts as floats (the sweep's).
Values = NDArray[np.int64] | NDArray[np.float64]


@lru_cache(maxsize=32)  # a drag of a device's bandwidth costs the same ops on every move
def op_terms(model: ModelSpec, params: WorkloadParams, matrix: ComputePeak, vector: ComputePeak) -> OpTerms:
    """What a step's ops cost whatever the bandwidth: the ops; per op its FLOPs, bytes,
    count, seconds of arithmetic at the ``matrix`` and ``vector`` peaks and the peak it
    runs under; and the step's exact FLOPs and bytes."""
    ops = tuple(build_ops(model, params))
    roofs = OpRoofs(matrix, vector, 0.0)
    flops = np.array([exact(o.flops, f"{o.name} FLOPs") for o in ops], dtype=np.int64)
    moved = np.array([exact(o.bytes, f"{o.name} bytes") for o in ops], dtype=np.int64)
    counts = np.array([o.count for o in ops], dtype=np.int64)
    arithmetic_s = np.array([float(compute_time(o, roofs)) for o in ops])
    nominal = np.array([matrix.flops_per_s if o.unit == op.MATRIX else vector.flops_per_s for o in ops])
    peaks = np.divide(flops, arithmetic_s, out=nominal, where=arithmetic_s > 0)
    for array in (flops, moved, counts, arithmetic_s, peaks):
        array.flags.writeable = False  # shared by every analysis that hits the cache
    total_flops = exact(sum(int(f) * int(c) for f, c in zip(flops, counts, strict=True)), "total FLOPs")
    total_bytes = exact(sum(int(b) * int(c) for b, c in zip(moved, counts, strict=True)), "total bytes")
    return ops, flops, moved, counts, arithmetic_s, peaks, total_flops, total_bytes


def step_total(counts: Values, values: Values, once: NDArray[np.bool_],
               factor: float | NDArray[np.float64]) -> NDArray[np.float64]:
    """A step's total of per-op ``values`` (one per op, or ops × batches) each weighted by its
    count: the pipelined ops scaled by the pipeline's ``factor`` (a number, or one per batch),
    the once-a-step ops (optimizer, gradient all-reduce) whole. The one formula behind a
    step's time, its compute, memory and link times, for one batch (a 0-d array) and for the sweep."""
    pipelined, whole = np.where(once, 0, counts), np.where(once, counts, 0)
    return np.asarray(pipelined @ values * factor + whole @ values, dtype=np.float64)
