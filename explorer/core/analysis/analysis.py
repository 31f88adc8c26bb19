"""Costing a workload on a device: per-op predicted time and bound, totals, batch sweeps.

Which roof an op runs under:
- matrix ops (projections, attention products, convolutions, LM head) use the
  device's fastest peak for the workload's precision; a device without that
  precision converts its values to one it has: the fastest of the 16-bit formats
  for fp8 and int8 (fp16 or bf16, whichever unit is faster: on a Xeon 8480+ that is
  AMX bf16, not AVX-512 fp16), the other 16-bit format for bf16 and fp16, fp32 as
  the last resort; the analysis says so in its notes (the bytes stay at the
  stored precision);
- vector ops (norms, softmax, activations, residual adds, lookups, pooling) use
  the fp32 vector peak: their arithmetic runs in fp32 even for 16-bit tensors;
- every op streams its bytes from main memory at its bandwidth;
- a communication op (``ops.LINK``, a step spread over devices) moves its bytes over the
  link its group crosses: time = latency + bytes / link rate (``parallel.link_seconds``),
  its "bound" is "communication"; its bytes are not main-memory traffic.

- a fused attention op does its products on the matrix units and its softmax on
  the vector units: compute time = matrix FLOPs / matrix peak + softmax FLOPs /
  vector peak.

Memory use counts weights, the KV cache, and the activations of the largest op
(its inputs and outputs, the score matrix of naive attention included): what must
be resident while the step runs, with no workspace beyond that. Spread over devices, it
is the busiest device's share. In training: weights, gradients and optimizer state, and
the activations kept for the backward pass (``explorer.core.model.training``). It fits when it is
at most the memory budget: the memory the device makes usable (what CUDA reports,
where the catalogue has it, else the nominal capacity) times the share a serving
engine takes (``WorkloadParams.memory_fraction``, 0.9 by default as in vLLM).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache

import numpy as np
from numpy.typing import NDArray

from explorer.core.analysis import roofline
from explorer.core.hardware.hardware import ComputePeak, Hardware
from explorer.core.model import ops as op
from explorer.core.model import parallel, training
from explorer.core.model.models import ModelSpec, TransformerSpec
from explorer.core.model.workload import MAX_BATCH, WorkloadError, WorkloadParams, build_ops
from explorer.core.units import format_bytes

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


def compute_time(o: op.Op, roofs: OpRoofs):
    """Seconds of arithmetic for one occurrence of ``o`` (scalar or array, like its sizes)."""
    vector = roofs.vector.flops_per_s
    if o.unit == op.LINK:  # a reduction's additions hide under its transfer
        return 0 * o.flops
    if o.unit == op.VECTOR:
        return o.flops / vector
    return (o.flops - o.vector_flops) / roofs.matrix.flops_per_s + o.vector_flops / vector


def _exact(value, what: str) -> int:
    value = int(value)
    if value > _INT64_MAX:
        raise WorkloadError(f"the step is too large to count: {what} exceeds 2^63; "
                            "use a smaller batch, sequence or context")
    return value


@dataclass(frozen=True)
class Totals:
    flops: int  # of one device (a pipeline stage's share of the ops' work)
    bytes: int  # to and from main memory, of one device
    time_s: float
    compute_time_s: float  # sum over ops of FLOPs / peak
    memory_time_s: float  # sum over ops of bytes / bandwidth
    items_per_step: int  # tokens (transformer) or images (CNN) produced or processed
    item_unit: str
    tokens_per_s: float
    weight_bytes: int
    kv_bytes_per_token: int
    kv_cache_bytes: int
    activation_bytes: int  # inputs and outputs of the largest op
    memory_required_bytes: int
    memory_capacity_bytes: float  # nominal (datasheet)
    memory_usable_bytes: float  # what the device makes usable (CUDA's total), else nominal
    memory_budget_bytes: float  # usable × the serving engine's share: what "fits" means
    fits_in_memory: bool
    devices: int = 1  # the step is spread over this many
    link_bytes: int = 0  # sent by one device over links (communication ops)
    link_time_s: float = 0.0  # the communication ops' time (latency included)
    state_bytes: int = 0  # training: gradients and optimizer state (beside the weights)

    @property
    def intensity(self) -> float:
        return self.flops / self.bytes

    @property
    def bound(self) -> roofline.BoundKind:
        """"communication" when the step's communication takes longer than its memory
        traffic and its arithmetic; else "memory" when moving its bytes takes longer than
        its arithmetic; else "compute" (the sums over its ops)."""
        if self.link_time_s > max(self.memory_time_s, self.compute_time_s):
            return roofline.COMMUNICATION
        return roofline.MEMORY if self.memory_time_s > self.compute_time_s else roofline.COMPUTE


@dataclass(frozen=True)
class OpRows:
    """One row per op per layer, in execution order (for tables and JSON)."""

    names: list[str]
    roles: list[str]
    layers: NDArray  # -1 for model-level ops
    units: list[str]
    flops: NDArray
    bytes: NDArray
    intensity: NDArray
    time_s: NDArray
    memory_bound: NDArray
    labels: NDArray  # "memory", "compute" or "communication"

    def __len__(self) -> int:
        return len(self.names)

    @property
    def bounds(self) -> NDArray:
        return self.labels


@dataclass(frozen=True)
class Analysis:
    model: ModelSpec
    params: WorkloadParams
    hardware: Hardware
    roofs: OpRoofs
    ops: tuple[op.Op, ...]
    flops: NDArray  # per occurrence of each op in ``ops``
    bytes: NDArray
    peaks: NDArray  # FLOP/s each op runs under (a blend for fused attention)
    time_s: NDArray  # per occurrence
    counts: NDArray  # occurrences (layers) of each op
    totals: Totals
    notes: tuple[str, ...] = field(default=())
    links: tuple = ()  # the link each op crosses (None for ops on one device)

    @property
    def intensity(self) -> NDArray:
        return self.flops / self.bytes

    @property
    def communicating(self) -> NDArray:
        return np.array([link is not None for link in self.links], dtype=bool)

    @property
    def memory_bound(self) -> NDArray:
        return roofline.is_memory_bound(self.flops, self.bytes, self.peaks,
                                        self.roofs.bandwidth_bytes_per_s) & ~self.communicating

    @property
    def bounds(self) -> NDArray:
        """"memory", "compute" or "communication" for each op."""
        return np.where(self.communicating, roofline.COMMUNICATION, roofline.bound_labels(self.memory_bound))

    @property
    def performance(self) -> NDArray:
        """Predicted FLOP/s of each op: its FLOPs over its predicted time."""
        return self.flops / self.time_s

    @property
    def time_share(self) -> NDArray:
        """Fraction of the step's predicted time spent in each op (all its layers); the shares
        add up to 1 (a pipeline's bubble scales every op alike)."""
        spent = self.counts * self.time_s
        return spent / spent.sum()

    def ceilings(self) -> roofline.Ceilings:
        """The roofs this analysis ran under: matrix peak, fp32 vector peak, main memory."""
        peaks = [self.roofs.matrix]
        if self.roofs.vector is not self.roofs.matrix:
            peaks.append(self.roofs.vector)
        main = self.hardware.main_memory
        return roofline.Ceilings(
            compute=tuple(roofline.Roof(p.label, p.flops_per_s, p.provenance.derived)
                          for p in peaks),
            bandwidth=(roofline.Roof(main.name, self.roofs.bandwidth_bytes_per_s,
                                     main.provenance.derived),),
        )

    @cached_property
    def rows(self) -> OpRows:
        order: list[int] = []
        layers: list[int] = []
        index = 0
        while index < len(self.ops):
            group_layers = self.ops[index].layers
            end = index + 1
            while end < len(self.ops) and group_layers and self.ops[end].layers == group_layers:
                end += 1
            for layer in group_layers or (-1,):
                order.extend(range(index, end))
                layers.extend([layer] * (end - index))
            index = end
        idx = np.asarray(order)
        layer_arr = np.asarray(layers)
        transformer = isinstance(self.model, TransformerSpec)
        names = [
            f"layers.{layer}.{self.ops[i].name}" if transformer and layer >= 0 else self.ops[i].name
            for i, layer in zip(order, layers, strict=True)
        ]
        return OpRows(
            names=names,
            roles=[self.ops[i].role for i in order],
            layers=layer_arr,
            units=[self.ops[i].unit for i in order],
            flops=self.flops[idx],
            bytes=self.bytes[idx],
            intensity=self.intensity[idx],
            time_s=self.time_s[idx],
            memory_bound=self.memory_bound[idx],
            labels=self.bounds[idx],
        )


def _once_per_step(ops) -> NDArray:
    """Ops a training step runs once, after its pipeline drains (the optimizer, the gradient
    all-reduces), rather than for each micro-batch of each stage."""
    return np.array([o.once_per_step for o in ops], dtype=bool)


def _links(ops, hardware: Hardware, params: WorkloadParams) -> list:
    """The link each op crosses (None: on one device); a link the device lacks is an error."""
    try:
        return parallel.resolve_links(ops, hardware, params.split)
    except parallel.ParallelError as error:
        raise WorkloadError(str(error)) from None


def _timed_links(links: list, ops, times: NDArray, moved: NDArray) -> NDArray:
    """Put each communication op's link time (latency + bytes / rate) into ``times`` (rows
    per op, scalars or per batch); the mask of the ops that communicate."""
    talking = np.array([link is not None for link in links], dtype=bool)
    for i in np.flatnonzero(talking):
        times[i] = parallel.link_seconds(links[i], float(ops[i].steps), moved[i])
    return talking


def _state_bytes(model: ModelSpec, params: WorkloadParams) -> int:
    """Training's gradients and optimizer state on the busiest device (0 at inference)."""
    if params.phase != "train":
        return 0
    return parallel.device_parameters(model, params.split) * (
        training.state_bytes_per_parameter(params) - params.weight_bytes)


def _memory(model: ModelSpec, params: WorkloadParams) -> tuple[int, int]:
    """(weight bytes, KV-cache bytes of one sequence of ``params.kv_tokens`` tokens) on the
    busiest device. Layers with a sliding window cache at most the window's tokens; training
    keeps no cache."""
    split = params.split
    weights = parallel.device_parameters(model, split) * params.weight_bytes
    if params.phase == "train":
        return weights, 0
    if split.devices == 1:
        return weights, model.kv_cache_values(params.kv_tokens) * params.kv_bytes
    shard = parallel.tensor_shard(model, split.tp) if isinstance(model, TransformerSpec) else model
    kv = shard.kv_cache_values(params.kv_tokens) * params.kv_bytes
    if split.pp > 1:  # the longest stage's layers
        kv = kv * len(parallel.stage_layers(model.layers, split.pp)[0]) // model.layers
    return weights, kv


def _items_per_step(model: ModelSpec, params: WorkloadParams, batch):
    """Tokens processed (or produced) per step, or images for a CNN."""
    return batch * params.query_tokens if model.item_unit == "tokens" else batch


@lru_cache(maxsize=32)  # a drag of a device's bandwidth costs the same ops on every move
def _op_terms(model: ModelSpec, params: WorkloadParams, matrix: ComputePeak, vector: ComputePeak) -> tuple:
    """What a step's ops cost whatever the bandwidth: the ops; per op its FLOPs, bytes,
    count, seconds of arithmetic at the ``matrix`` and ``vector`` peaks and the peak it
    runs under; and the step's exact FLOPs and bytes."""
    ops = tuple(build_ops(model, params))
    roofs = OpRoofs(matrix, vector, 0.0)
    flops = np.array([_exact(o.flops, f"{o.name} FLOPs") for o in ops], dtype=np.int64)
    moved = np.array([_exact(o.bytes, f"{o.name} bytes") for o in ops], dtype=np.int64)
    counts = np.array([o.count for o in ops], dtype=np.int64)
    arithmetic_s = np.array([float(compute_time(o, roofs)) for o in ops])
    nominal = np.array([matrix.flops_per_s if o.unit == op.MATRIX else vector.flops_per_s for o in ops])
    peaks = np.divide(flops, arithmetic_s, out=nominal, where=arithmetic_s > 0)
    for array in (flops, moved, counts, arithmetic_s, peaks):
        array.flags.writeable = False  # shared by every analysis that hits the cache
    total_flops = _exact(sum(int(f) * int(c) for f, c in zip(flops, counts, strict=True)), "total FLOPs")
    total_bytes = _exact(sum(int(b) * int(c) for b, c in zip(moved, counts, strict=True)), "total bytes")
    return ops, flops, moved, counts, arithmetic_s, peaks, total_flops, total_bytes


def step_total(counts, values, once, factor):
    """A step's total of per-op ``values`` (one per op, or ops × batches) each weighted by its
    count: the pipelined ops scaled by the pipeline's ``factor`` (a number, or one per batch),
    the once-a-step ops (optimizer, gradient all-reduce) whole. The one formula behind a
    step's time, its compute, memory and link times, for one batch and for the sweep."""
    pipelined, whole = np.where(once, 0, counts), np.where(once, counts, 0)
    return pipelined @ values * factor + whole @ values


def analyze(model: ModelSpec, params: WorkloadParams, hardware: Hardware) -> Analysis:
    """Cost one step of ``model`` under ``params`` on ``hardware``."""
    roofs = op_roofs(hardware, params.dtype)
    ops, flops, moved, counts, arithmetic_s, peaks, _, _ = _op_terms(  # totals checked for overflow
        model, params, roofs.matrix, roofs.vector)
    bandwidth = roofs.bandwidth_bytes_per_s
    links = _links(ops, hardware, params)
    time_s = np.maximum(arithmetic_s, moved / bandwidth)
    talking = _timed_links(links, ops, time_s, moved.astype(float))
    link_counts = np.where(talking, counts, 0)
    # The ops cover every stage's layers: one device does a stage's share (1/pp) and the
    # pipeline's factor applies; the optimizer and gradient all-reduces run once a step.
    once = _once_per_step(ops)
    factor = training.pipeline_factor(params, params.split, params.batch)

    def shared(values) -> int:  # exact integers: a stage's share of the pipelined ops, the rest whole
        pipelined = sum(int(v) for v, o in zip(values, once, strict=True) if not o)
        return pipelined // params.pp + sum(int(v) for v, o in zip(values, once, strict=True) if o)

    transformer = isinstance(model, TransformerSpec)
    items = _items_per_step(model, params, params.batch)
    weight_bytes, kv_per_sequence = _memory(model, params)
    kv_cache = params.batch // params.split.batch_share * kv_per_sequence  # the device's sequences
    kv_per_token = kv_per_sequence // params.kv_tokens  # an average where windows cap the cache
    state = _state_bytes(model, params)
    if params.phase == "train":
        activations = training.activation_bytes(model, params, params.split, list(ops))
    else:
        activations = max(int(o.activation_bytes) for o in ops if o.unit != op.LINK)
    required = weight_bytes + state + kv_cache + activations
    budget = memory_budget(hardware, params)
    total_time = float(step_total(counts, time_s, once, factor))
    memory_counts = counts - link_counts
    totals = Totals(
        flops=shared([int(f) * int(c) for f, c in zip(flops, counts, strict=True)]),
        bytes=shared([int(b) * int(c) for b, c in zip(moved, memory_counts, strict=True)]),
        time_s=total_time,
        compute_time_s=float(step_total(counts, arithmetic_s, once, factor)),
        memory_time_s=float(step_total(memory_counts, moved, once, factor)) / bandwidth,
        items_per_step=items,
        item_unit=model.item_unit,
        tokens_per_s=items / total_time,
        weight_bytes=weight_bytes,
        kv_bytes_per_token=kv_per_token,
        kv_cache_bytes=kv_cache,
        activation_bytes=activations,
        memory_required_bytes=required,
        memory_capacity_bytes=hardware.memory_capacity_bytes,
        memory_usable_bytes=hardware.usable_memory_bytes,
        memory_budget_bytes=budget,
        fits_in_memory=required <= budget,
        devices=params.split.devices,
        link_bytes=shared([int(b) * int(c) for b, c in zip(moved, link_counts, strict=True)]),
        link_time_s=float(step_total(link_counts, time_s, once, factor)),
        state_bytes=state,
    )
    notes = list(roofs.notes)
    if transformer and params.kv_tokens > model.max_context:
        notes.append(f"{params.kv_tokens:,} tokens exceed {model.name}'s trained context of "
                     f"{model.max_context:,}")
    if not totals.fits_in_memory:
        what = ("weights, gradients, optimizer state and activations" if params.phase == "train"
                else "weights, KV cache and activations")
        per_device = " per device" if params.split.devices > 1 else ""
        notes.append(f"{what} need {format_bytes(required)}{per_device} but "
                     f"{hardware.name} has {format_bytes(budget)} to give "
                     f"({params.memory_fraction:.0%} of {format_bytes(hardware.usable_memory_bytes)} usable)")
    return Analysis(model, params, hardware, roofs, ops, flops, moved, peaks, time_s, counts,
                    totals, tuple(notes), tuple(links))


@dataclass(frozen=True)
class BatchSweep:
    """Whole-step numbers for a series of batch sizes (other parameters fixed)."""

    batch: NDArray
    time_s: NDArray
    tokens_per_s: NDArray
    flops: NDArray
    bytes: NDArray
    memory_bound: NDArray  # the step's total memory time exceeds its total compute time
    max_batch: int  # largest batch that fits in memory (0: the weights alone do not)

    @property
    def intensity(self) -> NDArray:
        return self.flops / self.bytes


def memory_budget(hardware: Hardware, params: WorkloadParams) -> float:
    """Bytes the step may occupy: the usable memory times the serving engine's share."""
    return hardware.usable_memory_bytes * params.memory_fraction


def max_batch_that_fits(model: ModelSpec, params: WorkloadParams, hardware: Hardware) -> int:
    """Largest batch whose weights (with training's state), KV cache and activations fit in
    the memory budget (at most MAX_BATCH), a multiple of the batch's split. KV cache and
    activations grow linearly with the batch."""
    weight_bytes, kv_per_sequence = _memory(model, params)
    share = params.split.batch_share
    free = memory_budget(hardware, params) - weight_bytes - _state_bytes(model, params)
    if free < 0:
        return 0
    per_sequence = kv_per_sequence + _activations_per_sequence(model, params)  # per device sequence
    return int(min(MAX_BATCH, free // per_sequence * share))


@lru_cache(maxsize=32)  # the same for every move of a roof drag
def _activations_per_sequence(model: ModelSpec, params: WorkloadParams) -> int:
    """The activations one device holds for each sequence of its share of the batch: the
    largest op's at inference, those kept for the backward pass in training."""
    share = params.split.batch_share
    one = replace(params, batch=share)  # one sequence on each device
    ops = build_ops(model, one)
    if params.phase == "train":
        return training.activation_bytes(model, one, one.split, ops)
    return max(int(o.activation_bytes) for o in ops if o.unit != op.LINK)


def default_batches(max_batch: int) -> list[int]:
    """Powers of two from 1 up to ``max_batch``, ending at ``max_batch`` itself."""
    out = [1 << k for k in range(max_batch.bit_length()) if 1 << k <= max_batch]
    if out and out[-1] != max_batch:
        out.append(max_batch)
    return out


@lru_cache(maxsize=32)  # a drag of a device's bandwidth sweeps the same ops on every move
def _sweep_terms(model: ModelSpec, params: WorkloadParams, batches: tuple[int, ...], matrix: ComputePeak,
                 vector: ComputePeak) -> tuple[NDArray, ...]:
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
                batches=None) -> BatchSweep:
    """Time per step and throughput versus batch, in one vectorised evaluation."""
    limit = max_batch_that_fits(model, params, hardware)
    share = params.split.batch_share  # a batch splits evenly over the replicas
    if batches is None:
        batches = [b * share for b in default_batches(limit // share)]
    batch = np.asarray(batches, dtype=np.int64)
    if batch.size and batch.min() < 1:
        raise WorkloadError(f"batch sizes must be at least 1, got {batch.min()}")
    roofs = op_roofs(hardware, params.dtype)
    bandwidth = roofs.bandwidth_bytes_per_s
    b = batch.astype(float)
    ops, counts, flops, moved, arithmetic = _sweep_terms(model, params, tuple(batch.tolist()), roofs.matrix,
                                                         roofs.vector)
    times = np.maximum(arithmetic, moved / bandwidth)
    talking = _timed_links(_links(ops, hardware, params), ops, times, moved)
    once = _once_per_step(ops)
    factor = training.pipeline_factor(params, params.split, b)  # per batch

    total_time = step_total(counts, times, once, factor)
    compute_time_s = step_total(counts, arithmetic, once, factor)
    memory_counts = np.where(talking, 0, counts)
    memory_time_s = step_total(memory_counts, moved, once, factor) / bandwidth
    total_flops = step_total(counts, flops, once, 1 / params.pp)  # a stage's share, the rest whole
    total_bytes = step_total(memory_counts, moved, once, 1 / params.pp)
    items = _items_per_step(model, params, b)
    return BatchSweep(
        batch=batch,
        time_s=total_time,
        tokens_per_s=items / total_time,
        flops=total_flops,
        bytes=total_bytes,
        memory_bound=memory_time_s > compute_time_s,
        max_batch=limit,
    )

