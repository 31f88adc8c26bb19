"""Explanations in words, generated from the analysis: every number in the text comes from
``core`` for the state shown, never typed into prose.

Each function returns an ``Explanation``: a title, the text, the claims it makes (checked
against an independent recomputation by ``claims.verify``) and its numbers by name.
``explain_state`` is what the Explain panel and ``roofline-explorer explain`` show.
"""

from __future__ import annotations

from dataclasses import replace

from explorer.core.analysis import Analysis, memory_budget
from explorer.core.batching import crossing_batch, levels_off_batch
from explorer.core.claims import (
    Bound,
    Crossing,
    Explanation,
    Fits,
    LevelsOff,
    MaxBatch,
    Quantity,
    Ridge,
    State,
    faster,
    throughput,
    times,
)
from explorer.core.hardware import Hardware
from explorer.core.units import format_bytes, format_number, format_share, format_si, format_time, rate_unit
from explorer.core.workload import WorkloadError, WorkloadParams

__all__ = ["Explanation", "explain_state"]

LOWER_PRECISION = {"fp32": "bf16", "bf16": "fp8", "fp16": "fp8"}
LEVELS_OFF = 0.95  # throughput has "levelled off" at this share of its value at the largest batch


def state_of(a: Analysis) -> State:
    return State(a.model, a.params, a.hardware)


def _decode_of_tokens(a: Analysis) -> bool:
    return a.params.phase == "decode" and a.model.item_unit == "tokens"


def binding_roof(a: Analysis) -> Explanation:
    """Which roof binds the step, and how much of the other it uses."""
    t, hw = a.totals, a.hardware
    peak = a.roofs.matrix
    achieved = t.flops / t.time_s
    utilisation = achieved / peak.flops_per_s
    bandwidth_use = t.bytes / t.time_s / a.roofs.bandwidth_bytes_per_s
    bound = Bound(state_of(a), "memory" if t.memory_time_s > t.compute_time_s else "compute")
    if bound.bound == "memory":
        text = (f"On the {hw.name} this step is {bound.phrase}: moving its {format_si(t.bytes, 'B')} "
                f"takes {format_time(t.memory_time_s)}, its arithmetic only "
                f"{format_time(t.compute_time_s)}. It uses {format_share(utilisation)} of the "
                f"{peak.label} peak ({format_si(achieved, rate_unit(peak.precision))} of "
                f"{format_si(peak.flops_per_s, rate_unit(peak.precision))}) and "
                f"{format_share(bandwidth_use)} of the memory bandwidth.")
    else:
        text = (f"On the {hw.name} this step is {bound.phrase}: its arithmetic takes "
                f"{format_time(t.compute_time_s)}, moving its bytes {format_time(t.memory_time_s)}. "
                f"It reaches {format_share(utilisation)} of the {peak.label} peak.")
    return Explanation("What limits the step", text, (bound,), {
        "memory_time_s": t.memory_time_s, "compute_time_s": t.compute_time_s,
        "utilisation": utilisation, "bandwidth_use": bandwidth_use, "time_s": t.time_s})


def _budget_words(hardware: Hardware, params: WorkloadParams) -> str:
    """"the 64.8 GiB a serving engine may use (90% of 72 GiB usable)"."""
    usable = hardware.usable_memory_bytes
    nominal = hardware.memory_capacity_bytes
    reported = "" if usable == nominal else f" of {format_bytes(nominal)} nominal"
    return (f"the {format_bytes(memory_budget(hardware, params))} a serving engine may use "
            f"({params.memory_fraction:.0%} of {format_bytes(usable)} usable{reported})")


def batch_crossing(a: Analysis) -> Explanation | None:
    """How throughput grows with the batch and where it levels off, and the exact batch at
    which decode turns compute-bound."""
    if not _decode_of_tokens(a):
        return None
    state = state_of(a)
    top = MaxBatch(state, MaxBatch.largest(state))
    if top.batch < 1:
        text = f"The weights alone {top.phrase} in {_budget_words(a.hardware, a.params)}."
        return Explanation("Batching", text, (top,), {"max_batch": 0})
    crossing = Crossing(state, crossing_batch(a.model, a.params, a.hardware))
    knee = LevelsOff(state, levels_off_batch(a.model, a.params, a.hardware, top.batch, LEVELS_OFF),
                     top.batch, LEVELS_OFF)
    first, last = throughput(state.at(batch=1)), throughput(state.at(batch=top.batch))
    claims = [top, crossing, first, last]
    numbers = {"max_batch": top.batch, "tokens_per_s_batch_1": first.per_s,
               "tokens_per_s_max_batch": last.per_s, "levels_off_batch": knee.batch}
    text = (f"Every sequence in a batch reuses the same weights, so throughput grows with the batch, "
            f"from {first.phrase} at batch 1 to {last.phrase} at batch {top.phrase}, the largest that "
            f"fits at a context of {a.params.context:,}.")
    if crossing.batch is None:
        text += (f" The step stays {crossing.phrase} all the way: each sequence reads its own KV "
                 f"cache, and that traffic grows in proportion to the batch.")
    else:
        numbers["crossing_batch"] = crossing.batch
        text += (f" From batch {crossing.phrase} on the step is compute-bound: its arithmetic grows "
                 f"in proportion to the batch.")
    if knee.batch < top.batch:
        claims.append(knee)
        text += (f" Throughput levels off: batch {knee.phrase} already reaches {knee.share:.0%} of "
                 f"the throughput at batch {top.phrase}, and a larger batch mostly makes each step longer.")
    return Explanation("Batching", text, tuple(claims), numbers)


def lower_precision(a: Analysis) -> Explanation | None:
    """What the next lower precision would do; says so when the device cannot compute in it
    or when the step would get slower."""
    lower = LOWER_PRECISION.get(a.params.dtype)
    if lower is None:
        return None
    state = state_of(a)
    other = state.at(dtype=lower)
    change = faster(state, other)
    hw, now, then = a.hardware, a.roofs.matrix, other.analysis().roofs.matrix
    claims = [change]
    values = ("every value takes" if a.params.weight_dtype is None and a.params.kv_dtype is None
              else "values stored at the step's precision take")
    if then.precision != lower:
        lead = (f"The {hw.name} has no {lower} arithmetic. Stored in {lower}, {values} half the "
                f"bytes, and the products run on its {then.label} units after conversion")
    else:
        lead = f"In {lower} {values} half the bytes"
    if then.flops_per_s > now.flops_per_s:
        units = Quantity(f"{then.label} / {now.label} peak", then.flops_per_s / now.flops_per_s,
                         times(then.flops_per_s / now.flops_per_s),
                         lambda: hw.peak(then.precision, then.unit).flops_per_s
                         / hw.peak(now.precision, now.unit).flops_per_s)
        claims.append(units)
        lead += f", and the matrix roof rises {units.phrase} ({now.label} to {then.label})"
    elif then.flops_per_s < now.flops_per_s:
        lead += f", and its matrix roof is lower ({then.label}, not {now.label})"
    text = (f"{lead}. The step would take {format_time(other.analysis().totals.time_s)} instead of "
            f"{format_time(a.totals.time_s)}: {change.phrase}.")
    return Explanation("Lower precision", text, tuple(claims),
                       {"speedup": change.factor, "time_s": other.analysis().totals.time_s})


def fused_attention(a: Analysis) -> Explanation | None:
    if a.params.attention != "naive" or a.model.item_unit != "tokens":
        return None
    state = state_of(a)
    fused = state.at(attention="fused")
    change = faster(state, fused)
    saved = a.totals.bytes - fused.analysis().totals.bytes
    return Explanation("Fused attention", (
        f"Naive attention writes the score matrix to memory and reads it back: "
        f"{format_si(saved, 'B')} more per step than a fused kernel that keeps it on chip. Fused, "
        f"the step would take {format_time(fused.analysis().totals.time_s)} instead of "
        f"{format_time(a.totals.time_s)}, {change.phrase}. (A fused kernel is counted at its "
        f"compulsory traffic, each input read once and the output written once: a lower bound, "
        f"as FlashAttention reads K and V again for every tile of queries.)"),
        (change,), {"bytes_saved": float(saved), "speedup": change.factor,
                    "time_s": fused.analysis().totals.time_s})


def _op_index(a: Analysis, name: str) -> int | None:
    return next((i for i, o in enumerate(a.ops) if o.name == name), None)


def op_crossing_batch(a: Analysis, name: str) -> int | None:
    """The exact smallest batch that fits at which op ``name`` is compute-bound in decode;
    None if it stays memory-bound."""
    return crossing_batch(a.model, a.params, a.hardware, op=name)


def explain_op(a: Analysis, name: str) -> Explanation | None:
    """Which roof binds one op, by how much, and what would move it."""
    i = _op_index(a, name)
    if i is None or a.flops[i] == 0:
        return None
    o, state = a.ops[i], state_of(a)
    bandwidth = a.roofs.bandwidth_bytes_per_s
    memory_t, compute_t = float(a.bytes[i] / bandwidth), float(a.flops[i] / a.peaks[i])
    intensity = float(a.intensity[i])
    roof = a.roofs.vector if o.unit == "vector" else a.roofs.matrix
    blended = o.vector_flops > 0 and o.unit != "vector"
    # The op's own break-even intensity: its peak over the bandwidth (a blend of the matrix
    # and vector peaks for fused attention, whose softmax runs on the vector units).
    balance = float(a.peaks[i]) / bandwidth
    bound = Bound(state, "memory" if memory_t > compute_t else "compute", o.name)
    claims: list = [bound]
    numbers = {"memory_time_s": memory_t, "compute_time_s": compute_t, "intensity": intensity,
               "ridge": balance, "utilisation": float(a.flops[i] / a.time_s[i] / a.peaks[i])}
    if blended:
        where = (f"its products run under the {a.roofs.matrix.label} roof and its softmax under the "
                 f"{a.roofs.vector.label} roof, so it breaks even at {format_number(balance)} FLOP/byte")
    else:
        ridge = Ridge(a.hardware, roof.label, roof.flops_per_s / bandwidth)
        claims.append(ridge)
        where = f"it runs under the {roof.label} roof, whose ridge is at {ridge.phrase}"
    if bound.bound == "memory":
        text = (f"{o.name} is {bound.phrase}: moving its {format_si(a.bytes[i], 'B')} takes "
                f"{format_time(memory_t)}, its arithmetic {format_time(compute_t)}. At "
                f"{format_number(intensity)} FLOP/byte {where}: it sits {times(balance / intensity)} "
                f"left of it and uses {format_share(numbers['utilisation'])} of the compute it could.")
        if _decode_of_tokens(a):
            crossing = Crossing(state, op_crossing_batch(a, name), o.name)
            claims.append(crossing)
            if crossing.batch is not None:
                numbers["crossing_batch"] = crossing.batch
                text += f" From a batch of {crossing.phrase} on it would be compute-bound."
            else:
                text += (f" No batch that fits makes it compute-bound: it stays {crossing.phrase}, as its "
                         f"bytes grow with the batch (each sequence reads its own data).")
    else:
        text = (f"{o.name} is {bound.phrase}: its arithmetic takes {format_time(compute_t)}, moving "
                f"its bytes {format_time(memory_t)}. At {format_number(intensity)} FLOP/byte {where}: "
                f"it sits {times(intensity / balance)} right of it, so only a higher compute roof "
                f"(matrix units, a lower precision) would speed it up.")
    return Explanation(f"Selected: {o.name}", text, tuple(claims), numbers)


def memory_fit(a: Analysis) -> Explanation:
    t, state = a.totals, state_of(a)
    parts = f"weights {format_bytes(t.weight_bytes)}"
    if t.kv_bytes_per_token:
        parts += (f", KV cache {format_bytes(t.kv_cache_bytes)} ({format_bytes(t.kv_bytes_per_token)} "
                  f"per token, {format_share(t.kv_cache_bytes / t.memory_budget_bytes)} of the budget)")
    fits = Fits(state, t.fits_in_memory)
    return Explanation("Memory", (
        f"Resident during the step: {parts}, activations {format_bytes(t.activation_bytes)}. "
        f"Together {format_bytes(t.memory_required_bytes)} of {_budget_words(a.hardware, a.params)}: "
        f"it {fits.phrase}."), (fits,),
        {"required_bytes": float(t.memory_required_bytes), "budget_bytes": t.memory_budget_bytes,
         "capacity_bytes": t.memory_capacity_bytes})


def explain_workload(a: Analysis) -> list[Explanation]:
    out = [binding_roof(a)]
    for extra in (batch_crossing, lower_precision, fused_attention):
        try:
            found = extra(a)
        except WorkloadError:
            found = None
        if found is not None:
            out.append(found)
    out.append(memory_fit(a))
    return out


def compare_devices(model, params: WorkloadParams, slow: Hardware, fast: Hardware) -> Explanation:
    """How much faster ``fast`` runs the step than ``slow``, split into what its bandwidth
    buys (``slow`` with ``fast``'s bandwidth) and what its compute buys on top. The two
    factors multiply to the whole ratio. Each device is named once, then by its kind."""
    before, after = State(model, params, slow), State(model, params, fast)
    main = slow.main_memory
    with_bandwidth = replace(slow, memory=tuple(
        replace(m, bandwidth_bytes_per_s=fast.bandwidth_bytes_per_s) if m is main else m
        for m in slow.memory))
    middle = State(model, params, with_bandwidth)
    whole, from_bandwidth, from_compute = faster(before, after), faster(before, middle), faster(middle, after)
    ratio = fast.bandwidth_bytes_per_s / slow.bandwidth_bytes_per_s
    bandwidth = Quantity("bandwidth ratio", ratio, times(ratio),
                         lambda: fast.main_memory.bandwidth_bytes_per_s
                         / slow.main_memory.bandwidth_bytes_per_s)
    # Named once each; then "the GPU" and "the CPU" (or the names, for two of a kind).
    one, other = (f"the {h.kind.upper()}" if slow.kind != fast.kind else f"the {h.name}"
                  for h in (fast, slow))
    text = (f"The {fast.name} runs this step {whole.phrase} than the {slow.name} "
            f"({format_time(after.analysis().totals.time_s)} "
            f"against {format_time(before.analysis().totals.time_s)}). Its memory bandwidth is "
            f"{bandwidth.phrase} {other}'s: with that bandwidth alone {other} would be "
            f"{from_bandwidth.phrase}")
    if from_compute.word == "unchanged":
        text += f", and {one}'s arithmetic makes it {from_compute.phrase}: no compute roof binds this step."
    else:
        text += f"; {one}'s arithmetic then makes it {from_compute.phrase} again."
    claims = (whole, bandwidth, from_bandwidth, from_compute)
    return Explanation("CPU and GPU" if slow.kind != fast.kind else "Two devices", text, claims, {
        "ratio": whole.factor, "from_bandwidth": from_bandwidth.factor, "from_compute": from_compute.factor,
        "bandwidth_ratio": ratio, "time_slow_s": before.analysis().totals.time_s,
        "time_fast_s": after.analysis().totals.time_s})


def explain_state(model, params: WorkloadParams, devices: list[Hardware],
                  selected_op: str | None = None) -> list[Explanation]:
    """The Explain panel's paragraphs for a state: the selected op, what limits the step on
    the primary device (the first), CPU against GPU when both are shown, batching, lower
    precision, fused attention, memory."""
    from explorer.core.analysis import analyze

    a = analyze(model, params, devices[0])
    out = explain_workload(a)
    cpu = next((d for d in devices if d.kind == "cpu"), None)
    gpu = next((d for d in devices if d.kind == "gpu"), None)
    if cpu and gpu:
        out.insert(1, compare_devices(model, params, cpu, gpu))
    op = explain_op(a, selected_op) if selected_op and not selected_op.startswith("roof:") else None
    if op is not None:
        out.insert(0, op)
    return out
