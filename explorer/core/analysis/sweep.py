"""A step's numbers over a series of batch sizes, in one vectorised evaluation: the batch
track the chart draws and the star a drag moves along.

The track runs up to the largest batch that fits in memory; where not even one sequence
fits, it runs up to ``UNFIT_REACH`` anyway, every point marked as not fitting, so the
chart still shows where the step would go and the star still moves."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from explorer.core.analysis.memory import max_batch_that_fits
from explorer.core.analysis.terms import (
    OpRoofs,
    compute_time,
    items_per_step,
    links_of,
    once_per_step,
    op_roofs,
    step_total,
    timed_links,
)
from explorer.core.hardware.cores import restrict_cores
from explorer.core.hardware.hardware import ComputePeak, Hardware
from explorer.core.model import training
from explorer.core.model.applicability import Phase
from explorer.core.model.models import ModelSpec
from explorer.core.model.ops import Op
from explorer.core.model.step_ops import build_ops
from explorer.core.model.workload import WorkloadError, WorkloadParams

UNFIT_REACH = 512  # the track's end where nothing fits: past most devices' ridge in decode


@dataclass(frozen=True)
class BatchSweep:
    """Whole-step numbers for a series of batch sizes (other parameters fixed)."""

    batch: NDArray[np.int64]
    time_s: NDArray[np.float64]
    tokens_per_s: NDArray[np.float64]
    flops: NDArray[np.float64]
    bytes: NDArray[np.float64]
    memory_bound: NDArray[np.bool_]  # the step's total memory time exceeds its total compute time
    max_batch: int  # largest batch that fits in memory (0: the weights alone do not)

    @property
    def intensity(self) -> NDArray[np.float64]:
        return self.flops / self.bytes

    @property
    def fits(self) -> NDArray[np.bool_]:
        """Per batch, whether the step fits in memory."""
        return self.batch <= self.max_batch


def default_batches(max_batch: int) -> list[int]:
    """Powers of two from 1 up to ``max_batch``, ending at ``max_batch`` itself."""
    out = [1 << k for k in range(max_batch.bit_length()) if 1 << k <= max_batch]
    if out and out[-1] != max_batch:
        out.append(max_batch)
    return out


@lru_cache(maxsize=32)  # a drag of a device's bandwidth sweeps the same ops on every move
def sweep_terms(model: ModelSpec, params: WorkloadParams, batches: tuple[int, ...], matrix: ComputePeak,
                 vector: ComputePeak) -> tuple[tuple[Op, ...], NDArray[np.float64], NDArray[np.float64],
                                             NDArray[np.float64], NDArray[np.float64]]:
    """The ops; each op's count, and per op (rows) and batch (columns) its FLOPs, bytes and
    seconds of arithmetic at the ``matrix`` and ``vector`` peaks."""
    b = np.asarray(batches, dtype=float)
    roofs = OpRoofs(matrix, vector, 0.0)
    ops = build_ops(model, params, batch=b)
    rows = [[np.broadcast_to(np.asarray(value, dtype=float), b.shape) for value in
             (o.flops, o.bytes, compute_time(o, roofs))] for o in ops]
    flops, moved, arithmetic = (np.array([row[i] for row in rows]).reshape(len(rows), b.size)
                                for i in range(3))
    counts = np.array([float(o.count) for o in ops])
    for array in (counts, flops, moved, arithmetic):
        array.flags.writeable = False  # shared by every sweep that hits the cache
    return tuple(ops), counts, flops, moved, arithmetic


def batch_sweep(model: ModelSpec, params: WorkloadParams, hardware: Hardware,
                batches: Iterable[int] | None = None) -> BatchSweep:
    """Time per step and throughput versus batch, in one vectorised evaluation (a CPU: on the
    cores of ``params.threads``, as ``analyze``)."""
    hardware = restrict_cores(hardware, params.threads)
    limit = max_batch_that_fits(model, params, hardware)
    share = params.split.batch_share  # a batch splits evenly over the replicas
    if batches is None:
        batches = [b * share for b in default_batches(limit // share or UNFIT_REACH)]
    batch = np.asarray(batches, dtype=np.int64)
    if batch.size and batch.min() < 1:
        raise WorkloadError(f"batch sizes must be at least 1, got {batch.min()}")
    roofs = op_roofs(hardware, params.dtype)
    bandwidth = roofs.bandwidth_bytes_per_s
    b = batch.astype(float)
    ops, counts, flops, moved, arithmetic = sweep_terms(model, params, tuple(batch.tolist()), roofs.matrix,
                                                         roofs.vector)
    times = np.maximum(arithmetic, moved / bandwidth)
    talking = timed_links(links_of(ops, hardware, params), ops, times, moved, params.phase == Phase.TRAIN)
    once = once_per_step(ops)
    factor = training.pipeline_factor(params, params.split, b, model)  # per batch

    total_time = step_total(counts, times, once, factor)
    compute_time_s = step_total(counts, arithmetic, once, factor)
    memory_counts = np.where(talking, 0, counts)
    memory_time_s = step_total(memory_counts, moved, once, factor) / bandwidth
    total_flops = step_total(counts, flops, once, 1 / params.pp)  # a stage's share, the rest whole
    total_bytes = step_total(memory_counts, moved, once, 1 / params.pp)
    items = items_per_step(model, params, b)
    return BatchSweep(
        batch=batch,
        time_s=total_time,
        tokens_per_s=items / total_time,
        flops=total_flops,
        bytes=total_bytes,
        memory_bound=memory_time_s > compute_time_s,
        max_batch=limit,
    )
