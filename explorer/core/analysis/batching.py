"""Batch crossings: the exact batch at which a decode step, or one of its ops, turns
compute-bound.

In decode every op's FLOPs grow linearly with the batch and its bytes by a constant
(the weights) plus a linear term (activations, each sequence's KV cache), so being
compute-bound is monotone in the batch: once an op reaches its compute roof, a larger
batch keeps it there. A bisection over whole batches finds the first one.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from explorer.core.analysis.memory import max_batch_that_fits
from explorer.core.analysis.sweep import batch_sweep
from explorer.core.analysis.terms import compute_time, op_roofs
from explorer.core.hardware.cores import restrict_cores
from explorer.core.hardware.hardware import Hardware
from explorer.core.model.models import ModelSpec
from explorer.core.model.step_ops import build_ops
from explorer.core.model.workload import WorkloadParams


def compute_bound(model: ModelSpec, params: WorkloadParams, hardware: Hardware, batches: ArrayLike,
                  op: str | None = None) -> NDArray[np.bool_]:
    """For each batch: is the step (or the op named ``op``) compute-bound (a CPU: on the cores
    of ``params.threads``)?"""
    hardware = restrict_cores(hardware, params.threads)
    batches = np.atleast_1d(np.asarray(batches, dtype=np.int64))
    if op is None:
        return ~batch_sweep(model, params, hardware, batches).memory_bound
    roofs = op_roofs(hardware, params.dtype)
    b = batches.astype(float)
    for o in build_ops(model, params, batch=b):
        if o.name == op:
            moved = np.broadcast_to(np.asarray(o.bytes, dtype=float), b.shape)
            arithmetic = np.broadcast_to(np.asarray(compute_time(o, roofs), dtype=float), b.shape)
            return moved / roofs.bandwidth_bytes_per_s <= arithmetic
    raise KeyError(f"{model.name} has no op {op!r}")


def crossing_batch(model: ModelSpec, params: WorkloadParams, hardware: Hardware,
                   op: str | None = None) -> int | None:
    """The smallest batch that fits at which the step (or op ``op``) is compute-bound;
    None when it stays memory-bound up to the largest batch that fits."""
    top = max_batch_that_fits(model, params, hardware)
    if top < 1:
        return None

    def bound(batch: int) -> bool:
        return bool(compute_bound(model, params, hardware, [batch], op)[0])

    if bound(1):
        return 1
    if not bound(top):
        return None
    return _first(bound, 1, top)


def _first(holds: Callable[[int], bool], low: int, high: int) -> int:
    """The smallest batch in (low, high] where the monotone ``holds`` is true (it is false
    at ``low`` and true at ``high``)."""
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if holds(middle) else (middle, high)
    return high


def levels_off_batch(model: ModelSpec, params: WorkloadParams, hardware: Hardware, top: int,
                     share: float) -> int:
    """The smallest batch whose throughput reaches ``share`` of the throughput at batch
    ``top``. Throughput grows monotonically with the batch: each op's time per sequence,
    max(FLOPs, bytes / bandwidth) over the batch, can only fall as the batch grows."""
    def rate(batch: int) -> float:
        return float(batch_sweep(model, params, hardware, [batch]).tokens_per_s[0])

    target = share * rate(top)
    if rate(1) >= target:
        return 1
    return _first(lambda b: rate(b) >= target, 1, top)
