"""Every way of spreading one step over a number of devices, costed and ranked.

``layouts(model, hardware, devices, params)`` tries each tensor × pipeline × data × expert
parallel split whose product is the device count (and, in training, sequence parallel,
ZeRO-1 and full recomputation on or off, and the micro-batch; context parallel for long
sequences in training and prefill, ``context_degrees``; with a pipeline in training one
layer fewer on its ends, alone and interleaved, ``schedules``; flat and two-hop dispatch
where experts span nodes, ``dispatches``), costs each one with the same analysis the chart
draws, and ranks them by a goal:
- latency: the shortest step (decode: the time between a user's tokens; prefill: the time
  to the first token; training: the step);
- throughput: the most tokens a second per device;
- fit: the least memory per device.
Layouts that do not fit in memory rank after every one that does; splits the model or the
batch cannot take are kept, with the reason. Each loser says why it loses (memory, its
communication's share of the step, the pipeline's bubble, how much slower than the best).
The time ranked is the expected one where the step's efficiency gives one, else the bound.
In training each layout gets its micro-batch (gradient accumulation): with a pipeline one
sequence (the smallest bubble and the fewest activations: nothing is faster by this model);
without one the largest divisor of the local batch that fits (the step's work is the same
for any micro-batch, and ZeRO-1's synchronisation runs once a step), else one sequence.
ZeRO-2 and 3 are not tried: they cost more communication than ZeRO-1 at every micro-batch.
An inference pipeline here passes one batch through its stages in turn (none in flight at
once), so a layout with pp > 1 shows its latency; its throughput is a lower bound.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, TypedDict

from explorer.core.analysis.analysis import analyze
from explorer.core.analysis.expected import expected_for
from explorer.core.hardware.hardware import Hardware, Tier
from explorer.core.model import training
from explorer.core.model.applicability import Phase
from explorer.core.model.models import ModelSpec, TransformerSpec
from explorer.core.model.workload import WorkloadError, WorkloadParams
from explorer.core.units import format_bytes

GOALS = ("latency", "throughput", "fit")
MAX_DEVICES = 1 << 16


@dataclass(frozen=True)
class Layout:
    """One split and what it costs (``error`` set: the split cannot run, nothing costed)."""

    choice: tuple[tuple[str, object], ...]  # the split and options: (("tp", 8), ("pp", 1), …)
    params: WorkloadParams | None = None  # None: the split cannot run (``error`` says why)
    fits: bool = False
    time_s: float = float("inf")  # the step: expected where there is one, else the bound
    bound_s: float = float("inf")
    expected: bool = False  # whether time_s is the expected time
    memory_bytes: float = 0.0
    budget_bytes: float = 0.0
    tokens_per_s_per_device: float = 0.0
    tokens_per_s_per_user: float | None = None  # decode: 1 / step; prefill: prompt / step
    communication_share: float = 0.0  # of the bound, the links' time
    bubble_share: float = 0.0  # of a training step, the pipeline's idle time
    error: str = ""

    @property
    def name(self) -> str:
        """"TP 4 × PP 2", with training's options ("TP 8 × DP 2, SP, ZeRO-1")."""
        c: dict[str, Any] = dict(self.choice)
        micro = c.get("micro_batch", 0)
        steps = self.params.accumulation_steps if self.params is not None and micro else 1
        extra = [text for on, text in ((c["sp"], "SP"), (c["zero"], f"ZeRO-{c['zero']}"),
                                       (c["recompute"] != "none", f"{c['recompute']} recompute"),
                                       (c.get("pp_trim", 0), f"trim {c.get('pp_trim')}"),
                                       (c.get("vpp", 1) > 1, f"VPP {c.get('vpp')}"),
                                       (c.get("dispatch") == "two-hop", "two-hop"),
                                       (steps > 1, f"micro-batch {micro} ×{steps}")) if on]
        name = split_name(c["tp"], c["pp"], c["dp"], c["ep"], c.get("cp", 1))
        return name + "".join(", " + e for e in extra)

    def to_dict(self) -> dict[str, object]:
        p = self.params
        steps = p.accumulation_steps if p is not None and p.phase == Phase.TRAIN else None
        return {"name": self.name, **dict(self.choice), "accumulation_steps": steps, "fits": self.fits,
                "error": self.error or None,
                "time_s": None if self.error else self.time_s,
                "bound_s": None if self.error else self.bound_s, "time_is_expected": self.expected,
                "memory_bytes": self.memory_bytes, "budget_bytes": self.budget_bytes,
                "tokens_per_s_per_device": self.tokens_per_s_per_device,
                "tokens_per_s_per_user": self.tokens_per_s_per_user,
                "communication_share": self.communication_share, "bubble_share": self.bubble_share}


def split_name(tp: int, pp: int, dp: int, ep: int, cp: int = 1) -> str:
    """"TP 4 × DP 2", or "one device"."""
    parts = [f"{label} {n}" for n, label in ((tp, "TP"), (cp, "CP"), (pp, "PP"), (dp, "DP"), (ep, "EP"))
             if n > 1]
    return " × ".join(parts) or "one device"


def divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def splits(model: ModelSpec, devices: int) -> list[tuple[int, int, int, int]]:
    """(tp, pp, dp, ep) with tp·pp·dp·ep = devices; expert parallel only for a mixture of
    experts, the other splits only for a transformer."""
    if not isinstance(model, TransformerSpec):
        return [(1, 1, devices, 1)]
    out = []
    for tp, pp, ep in itertools.product(divisors(devices), repeat=3):
        if devices % (tp * pp * ep) or pp > model.layers or (ep > 1 and not model.moe):
            continue
        out.append((tp, pp, devices // (tp * pp * ep), ep))
    return out


class Choice(TypedDict):
    """A layout's split and options, as ``WorkloadParams`` fields."""

    tp: int
    pp: int
    dp: int
    ep: int
    sp: bool
    zero: int
    recompute: str
    micro_batch: int
    cp: int
    pp_trim: int
    vpp: int
    dispatch: str


# Context parallel is tried where each device keeps at least this many of a sequence's tokens:
# Llama 3 405B pre-trained its 8,192-token sequences without it and split its 131,072-token
# ones over CP 16, 8,192 tokens a device (arXiv 2407.21783, Table 4).
CP_MIN_TOKENS = 8192


def context_degrees(model: ModelSpec, params: WorkloadParams, dp: int) -> list[int]:
    """The context-parallel degrees to try for a split with ``dp`` data-parallel replicas
    (CP takes its devices from DP): 1, and in training or prefill on a model with full
    attention the largest power of two that divides dp, splits the sequence into 2·cp whole
    chunks and leaves a device at least ``CP_MIN_TOKENS`` of it (the degrees between are
    left out to keep the search small: the split's other degrees cover what they trade)."""
    if params.phase == Phase.DECODE or not isinstance(model, TransformerSpec) or model.mla \
            or model.sliding_window:
        return [1]
    cp = 1
    while dp % (2 * cp) == 0 and params.seq % (4 * cp) == 0 and params.seq // (2 * cp) >= CP_MIN_TOKENS:
        cp *= 2
    return [1, cp] if cp > 1 else [1]


def schedules(model: ModelSpec, params: WorkloadParams, pp: int) -> list[tuple[int, int]]:
    """(pp_trim, vpp) pairs to try for ``pp`` pipeline stages: even stages; in training one
    layer fewer on the first and the last (Meta's balance for the LM head and the embedding),
    alone and with the interleaved schedule at the most virtual stages that give every chunk
    a layer, as Llama 3 405B ran (126 + 2 layers over 16 × 8 chunks, arXiv 2407.21783,
    section 3.3.2)."""
    if pp == 1 or params.phase != Phase.TRAIN or not isinstance(model, TransformerSpec):
        return [(0, 1)]
    out = [(0, 1), (1, 1)]
    vpp = (model.layers + 2) // pp
    if vpp > 1:
        out.append((1, vpp))
    return out


def dispatches(model: ModelSpec, hardware: Hardware, tp: int, ep: int, asked: str) -> list[str]:
    """The expert all-to-all's ways across nodes to try: flat and two-hop where the TP × EP
    devices span nodes (``group_links``), else the one asked for."""
    node = hardware.link(Tier.NODE)
    if ep > 1 and node is not None and tp * ep > node.group:
        return ["flat", "two-hop"]
    return [asked]


def variants(params: WorkloadParams, split: tuple[int, int, int, int], model: ModelSpec | None = None,
             hardware: Hardware | None = None) -> list[Choice]:
    """The choices of one split: in training also sequence parallel (with TP), ZeRO-1 (with
    DP) and full recomputation on or off; with ``model`` (and ``hardware``) context parallel
    for long sequences (``context_degrees``, its devices taken from DP), the pipeline's
    schedules (``schedules``) and the expert all-to-all's dispatch across nodes
    (``dispatches``); the micro-batch is chosen when costed (``_micro_batches``)."""
    tp, pp, dp, ep = split
    train = params.phase == Phase.TRAIN
    cps = context_degrees(model, params, dp) if model is not None else [1]
    plans = schedules(model, params, pp) if model is not None else [(0, 1)]
    ways = (dispatches(model, hardware, tp, ep, params.dispatch) if model is not None and hardware is not None
            else [params.dispatch])
    return [{"tp": tp, "pp": pp, "dp": dp // cp, "ep": ep, "sp": sp, "zero": zero, "recompute": recompute,
             "micro_batch": 0, "cp": cp, "pp_trim": trim, "vpp": vpp, "dispatch": dispatch}
            for cp in cps for trim, vpp in plans for dispatch in ways
            for sp in ((False, True) if train and tp > 1 else (False,))
            for zero in ((0, 1) if train and dp // cp * ep > 1 else (0,))
            for recompute in (("none", "full") if train else ("none",))]


def _costed(model: ModelSpec, hardware: Hardware, params: WorkloadParams,
            choice: tuple[tuple[str, object], ...]) -> Layout:
    a = analyze(model, params, hardware)
    t = a.totals
    e = expected_for(a)
    time_s = e.time_s if e is not None else t.time_s
    per_user = None
    if params.phase == Phase.DECODE:
        per_user = 1 / time_s
    elif params.phase == Phase.PREFILL:
        per_user = params.seq / time_s
    factor = training.pipeline_factor(params, params.split, params.batch, model)
    bubble = 1 - 1 / (factor * params.pp) if params.phase == Phase.TRAIN and params.pp > 1 else 0.0
    return Layout(choice, params, t.fits_in_memory, time_s, t.time_s, e is not None, t.memory_required_bytes,
                  t.memory_budget_bytes, t.items_per_step / time_s / params.split.devices, per_user,
                  t.link_time_s / t.time_s if t.time_s else 0.0, bubble)


def layouts(model: ModelSpec, hardware: Hardware, devices: int, params: WorkloadParams,
            progress: Callable[[int, int], bool | None] | None = None) -> list[Layout]:
    """Every layout of ``devices`` devices for the step ``params`` describes (its own split
    ignored), costed; splits that cannot run carry their reason. ``progress(done, total)``
    is called after each; when it returns False the search stops with those costed so far."""
    if not 1 <= devices <= MAX_DEVICES:
        raise ValueError(f"devices must be from 1 to {MAX_DEVICES:,}, got {devices}")
    choices = [changes for split in splits(model, devices)
               for changes in variants(params, split, model, hardware)]
    out = []
    for changes in choices:
        try:
            out.append(_with_micro_batch(model, hardware, params, changes))
        except WorkloadError as exc:
            out.append(Layout(tuple(changes.items()), error=str(exc)))
        if progress is not None and progress(len(out), len(choices)) is False:
            break
    return out


def _micro_batches(params: WorkloadParams) -> list[int]:
    """The micro-batches to try, in order, for a step (0: none, inference): one sequence
    with a pipeline; without, the local batch's divisors from the largest down."""
    if params.phase != Phase.TRAIN:
        return [0]
    if params.pp > 1:
        return [1]
    return sorted(divisors(params.local_batch), reverse=True)


def _with_micro_batch(model: ModelSpec, hardware: Hardware, params: WorkloadParams,
                      changes: Choice) -> Layout:
    """The layout of ``changes`` costed at the first micro-batch of ``_micro_batches`` that
    fits (the smallest tried, which needs the least memory, when none does)."""
    c = changes
    base = replace(params, vpp=c["vpp"], micro_batch=0, tp=c["tp"], pp=c["pp"], dp=c["dp"], ep=c["ep"],
                   sp=c["sp"], zero=c["zero"], recompute=c["recompute"], cp=c["cp"], pp_trim=c["pp_trim"],
                   dispatch=c["dispatch"])
    layout = None
    for micro in _micro_batches(base):
        choice: Choice = {**changes, "micro_batch": micro}
        layout = _costed(model, hardware, replace(base, micro_batch=micro), tuple(choice.items()))
        if layout.fits:
            break
    assert layout is not None
    return layout


def ranked(candidates: list[Layout], goal: str) -> list[Layout]:
    """Best first by ``goal``: those that fit, then those that do not, then those that
    cannot run."""
    if goal not in GOALS:
        raise ValueError(f"goal must be one of {', '.join(GOALS)}, got {goal!r}")
    keys: dict[str, Callable[[Layout], float]] = {
        "latency": lambda c: c.time_s, "throughput": lambda c: -c.tokens_per_s_per_device,
        "fit": lambda c: c.memory_bytes}
    key = keys[goal]
    return sorted(candidates, key=lambda c: (bool(c.error), not c.fits, key(c) if not c.error else 0))


def why(c: Layout, best: Layout, goal: str) -> str:
    """Why ``c`` ranks where it does against ``best`` ("best" for the best itself)."""
    if c.error:
        return f"cannot run: {c.error}"
    if not c.fits:
        return f"does not fit: needs {format_bytes(c.memory_bytes)} of {format_bytes(c.budget_bytes)}"
    reasons = []
    if c is best:
        reasons.append("best")
    elif goal == "latency":
        reasons.append(f"{c.time_s / best.time_s:.2f}× the best's step")
    elif goal == "throughput":
        ratio = best.tokens_per_s_per_device / c.tokens_per_s_per_device
        reasons.append(f"{ratio:.2f}× fewer tokens/s a device")
    else:
        reasons.append(f"{c.memory_bytes / best.memory_bytes:.2f}× the best's memory")
    if c.communication_share >= 0.1:
        reasons.append(f"communication {c.communication_share:.0%} of the bound")
    if c.bubble_share >= 0.05:
        reasons.append(f"pipeline bubble {c.bubble_share:.0%} of the step")
    return "; ".join(reasons)
