"""Costing a workload on a device: per-op predicted time and bound, and the step's totals.

The per-op terms are ``terms``, memory use ``memory``, batch sweeps ``sweep``.

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
  link its group crosses: time = latency + bytes / link rate (``collective_costs.link_seconds``),
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

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TypedDict

import numpy as np
from numpy.typing import NDArray

from explorer.core.analysis import attention_kernel, roofline
from explorer.core.analysis.memory import memory_budget, state_bytes, weights_and_kv
from explorer.core.analysis.terms import (
    OpRoofs,
    items_per_step,
    links_of,
    once_per_step,
    op_roofs,
    op_terms,
    step_total,
    timed_links,
)
from explorer.core.hardware.cores import restrict_cores
from explorer.core.hardware.hardware import Hardware, Link
from explorer.core.model import ops as op
from explorer.core.model import training
from explorer.core.model.applicability import Phase
from explorer.core.model.models import ModelSpec, TransformerSpec
from explorer.core.model.quantization import quantization_note
from explorer.core.model.workload import WorkloadParams
from explorer.core.units import format_bytes


@dataclass(frozen=True)
class Totals:
    """A step's totals on one device: work, traffic and time, and what bounds it."""

    flops: int  # of one device (a pipeline stage's share of the ops' work)
    bytes: int  # to and from main memory, of one device
    time_s: float
    compute_time_s: float  # sum over ops of FLOPs / peak
    memory_time_s: float  # sum over ops of bytes / bandwidth
    items_per_step: int  # tokens (transformer) or images (CNN) produced or processed
    item_unit: str
    tokens_per_s: float
    weight_bytes: float  # (4-bit weights carry a fraction of a byte each)
    kv_bytes_per_token: float
    kv_cache_bytes: float
    activation_bytes: int  # inputs and outputs of the largest op
    memory_required_bytes: float
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
    layers: NDArray[np.int64]  # -1 for model-level ops
    units: list[str]
    flops: NDArray[np.int64]
    bytes: NDArray[np.int64]
    intensity: NDArray[np.float64]
    time_s: NDArray[np.float64]
    memory_bound: NDArray[np.bool_]
    labels: NDArray[np.str_]  # "memory", "compute" or "communication"

    def __len__(self) -> int:
        return len(self.names)

    @property
    def bounds(self) -> NDArray[np.str_]:
        return self.labels


@dataclass(frozen=True)
class Analysis:
    """The roofline analysis of a workload on one device: each op's FLOPs, bytes, time and bound."""

    model: ModelSpec
    params: WorkloadParams
    hardware: Hardware
    roofs: OpRoofs
    ops: tuple[op.Op, ...]
    flops: NDArray[np.int64]  # per occurrence of each op in ``ops``
    bytes: NDArray[np.int64]
    peaks: NDArray[np.float64]  # FLOP/s each op runs under (a blend for fused attention)
    time_s: NDArray[np.float64]  # per occurrence
    counts: NDArray[np.int64]  # occurrences (layers) of each op
    totals: Totals
    notes: tuple[str, ...] = field(default=())
    links: tuple[Link | None, ...] = ()  # the link each op crosses (None for ops on one device)

    @property
    def model_flops(self) -> float:
        """One device's FLOPs of the step as model-FLOPs utilisation counts them: in
        training, each compute op's forward and backward (3×), recomputation and the
        optimizer left out; at inference every FLOP."""
        if self.params.phase != Phase.TRAIN:
            return float(self.totals.flops)
        total = sum(float(o.flops) * int(c) * 3 / training.op_passes(o, self.params)
                    for o, c in zip(self.ops, self.counts, strict=True)
                    if o.unit != op.LINK and not o.once_per_step)
        return total / self.params.pp

    @property
    def intensity(self) -> NDArray[np.float64]:
        return np.divide(self.flops, self.bytes, dtype=np.float64)

    @property
    def communicating(self) -> NDArray[np.bool_]:
        return np.array([link is not None for link in self.links], dtype=bool)

    @property
    def memory_bound(self) -> NDArray[np.bool_]:
        return roofline.is_memory_bound(self.flops, self.bytes, self.peaks,
                                        self.roofs.bandwidth_bytes_per_s) & ~self.communicating

    @property
    def bounds(self) -> NDArray[np.str_]:
        """"memory", "compute" or "communication" for each op."""
        labels: NDArray[np.str_] = np.where(self.communicating, roofline.COMMUNICATION,
                                            roofline.bound_labels(self.memory_bound))
        return labels

    @property
    def performance(self) -> NDArray[np.float64]:
        """Predicted FLOP/s of each op: its FLOPs over its predicted time."""
        return np.divide(self.flops, self.time_s, dtype=np.float64)

    @property
    def time_share(self) -> NDArray[np.float64]:
        """Fraction of the step's predicted time spent in each op (all its layers); the shares
        add up to 1 (a pipeline's bubble scales every op alike)."""
        spent = self.counts * self.time_s
        share: NDArray[np.float64] = spent / spent.sum()
        return share

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


def analyze(model: ModelSpec, params: WorkloadParams, hardware: Hardware) -> Analysis:
    """Cost one step of ``model`` under ``params`` on ``hardware`` (a CPU: the cores its
    ``threads`` use)."""
    hardware = restrict_cores(hardware, params.threads)
    roofs = op_roofs(hardware, params.dtype)
    ops, flops, moved, counts, arithmetic_s, peaks, _, _ = op_terms(  # totals checked for overflow
        model, params, roofs.matrix, roofs.vector)
    bandwidth = roofs.bandwidth_bytes_per_s
    links = links_of(ops, hardware, params)
    attention_kernel.check(params, model, hardware, ops)  # a kernel its device's family publishes none for
    time_s = np.maximum(arithmetic_s, moved / bandwidth)
    talking = timed_links(links, ops, time_s, moved.astype(float), params.phase == Phase.TRAIN)
    link_counts = np.where(talking, counts, 0)
    # The ops cover every stage's layers: one device does a stage's share (1/pp) and the
    # pipeline's factor applies; the optimizer and gradient all-reduces run once a step.
    once = once_per_step(ops)
    factor = training.pipeline_factor(params, params.split, params.batch, model)

    # Exact integers: a stage's share of the pipelined ops, the rest whole.
    def shared(values: list[int]) -> int:
        pipelined = sum(int(v) for v, o in zip(values, once, strict=True) if not o)
        return pipelined // params.pp + sum(int(v) for v, o in zip(values, once, strict=True) if o)

    items = items_per_step(model, params, params.batch)
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
        devices=params.split.devices,
        link_bytes=shared([int(b) * int(c) for b, c in zip(moved, link_counts, strict=True)]),
        link_time_s=float(step_total(link_counts, time_s, once, factor)),
        **_memory_use(model, params, hardware, ops),
    )
    return Analysis(model, params, hardware, roofs, ops, flops, moved, peaks, time_s, counts,
                    totals, _notes(model, params, hardware, roofs, totals), tuple(links))


class _MemoryUse(TypedDict):
    """The ``Totals`` fields of memory."""

    weight_bytes: float
    kv_bytes_per_token: float
    kv_cache_bytes: float
    activation_bytes: int
    memory_required_bytes: float
    memory_capacity_bytes: float
    memory_usable_bytes: float
    memory_budget_bytes: float
    fits_in_memory: bool
    state_bytes: int


def _memory_use(model: ModelSpec, params: WorkloadParams, hardware: Hardware,
                ops: Sequence[op.Op]) -> _MemoryUse:
    """The ``Totals`` fields of memory: what the step keeps resident, the budget, whether it fits."""
    weight_bytes, kv_per_sequence = weights_and_kv(model, params)
    kv_cache = params.local_batch * kv_per_sequence  # the busiest device's sequences
    state = state_bytes(model, params)
    if params.phase == Phase.TRAIN:
        activations = training.activation_bytes(model, params, params.split, list(ops))
    else:
        activations = max(int(o.activation_bytes) for o in ops if o.unit != op.LINK)
    required = weight_bytes + state + kv_cache + activations
    budget = memory_budget(hardware, params)
    return _MemoryUse(
        weight_bytes=weight_bytes,
        kv_bytes_per_token=kv_per_sequence // params.kv_tokens,  # an average where windows cap the cache
        kv_cache_bytes=kv_cache,
        activation_bytes=activations,
        memory_required_bytes=required,
        memory_capacity_bytes=hardware.memory_capacity_bytes,
        memory_usable_bytes=hardware.usable_memory_bytes,
        memory_budget_bytes=budget,
        fits_in_memory=required <= budget,
        state_bytes=state,
    )


def _notes(model: ModelSpec, params: WorkloadParams, hardware: Hardware, roofs: OpRoofs,
           totals: Totals) -> tuple[str, ...]:
    """What the user should know about the figures: a precision converted, a context past
    the trained one, a step that does not fit."""
    notes = list(roofs.notes)
    share = params.split.batch_share
    if params.batch % share:
        who = "data-parallel replicas" if params.ep == 1 else "attention groups"
        notes.append(f"a batch of {params.batch:,} does not split evenly over {share} {who}: the busiest "
                     f"takes {params.local_batch:,} sequences and sets the step"
                     + (f", {share - params.batch} take none" if params.batch < share else ""))
    stored = params.weight_dtype or params.dtype
    if isinstance(model, TransformerSpec) and model.quantization is not None:
        notes.append(quantization_note(model, params))
    elif isinstance(model, TransformerSpec) and model.file_dtype and model.file_dtype != stored:
        notes.append(f"{model.name}'s config.json stores its weights in {model.file_dtype}; analysed with "
                     f"{stored} weights (--dtype or --weight-dtype to change)")
    if isinstance(model, TransformerSpec) and model.unmodelled:
        notes.append(f"{model.name}: {model.unmodelled}")
    if (isinstance(model, TransformerSpec) and model.window_layers and model.sliding_window > 0
            and params.kv_tokens > model.sliding_window):
        count, layers = len(model.window_layers), model.layers
        which = f"{count} of its {layers} layers" if count < layers else f"all {count} of its layers"
        notes.append(f"past {model.sliding_window:,} tokens {model.name}'s sliding window applies: {which} "
                     f"attend to and cache only the last {model.sliding_window:,} tokens")
    if isinstance(model, TransformerSpec) and params.kv_tokens > model.max_context:
        notes.append(f"{params.kv_tokens:,} tokens exceed {model.name}'s trained context of "
                     f"{model.max_context:,}")
    if not totals.fits_in_memory:
        what = ("weights, gradients, optimizer state and activations" if params.phase == Phase.TRAIN
                else "weights, KV cache and activations")
        per_device = " per device" if params.split.devices > 1 else ""
        notes.append(f"{what} need {format_bytes(totals.memory_required_bytes)}{per_device} but "
                     f"{hardware.name} has {format_bytes(totals.memory_budget_bytes)} to give "
                     f"({params.budget_share:.0%} of {format_bytes(hardware.usable_memory_bytes)} usable)")
    return tuple(notes)
