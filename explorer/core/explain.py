"""Explanations in words, generated from the analysis: every number in the text comes from
``core`` for the state shown, never typed into prose.

Each function returns ``Explanation``s: a title, the text, and the numbers it quotes (so
tests, and anyone curious, can check them against the analysis).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from explorer.core.analysis import Analysis, analyze, batch_sweep
from explorer.core.hardware import Hardware
from explorer.core.units import format_bytes, format_si, format_time, rate_unit
from explorer.core.workload import WorkloadError, WorkloadParams

LOWER_PRECISION = {"fp32": "bf16", "bf16": "fp8", "fp16": "fp8"}


@dataclass(frozen=True)
class Explanation:
    title: str
    text: str
    numbers: dict[str, float] = field(default_factory=dict)


def _bound(a: Analysis) -> str:
    t = a.totals
    return "memory" if t.memory_time_s > t.compute_time_s else "compute"


def binding_roof(a: Analysis) -> Explanation:
    """Which roof binds the step, and how much of the other it uses."""
    t, hw = a.totals, a.hardware
    peak = a.roofs.matrix
    achieved = t.flops / t.time_s
    utilisation = achieved / peak.flops_per_s
    bandwidth_use = t.bytes / t.time_s / a.roofs.bandwidth_bytes_per_s
    bound = _bound(a)
    if bound == "memory":
        text = (f"On the {hw.name} this step is memory-bound: moving its {format_si(t.bytes, 'B')} "
                f"takes {format_time(t.memory_time_s)}, its arithmetic only "
                f"{format_time(t.compute_time_s)}. It uses {utilisation:.1%} of the "
                f"{peak.label} peak ({format_si(achieved, rate_unit(peak.precision))} of "
                f"{format_si(peak.flops_per_s, rate_unit(peak.precision))}) and "
                f"{bandwidth_use:.0%} of the memory bandwidth.")
    else:
        text = (f"On the {hw.name} this step is compute-bound: its arithmetic takes "
                f"{format_time(t.compute_time_s)}, moving its bytes {format_time(t.memory_time_s)}. "
                f"It reaches {utilisation:.1%} of the {peak.label} peak.")
    return Explanation("What limits the step", text, {
        "memory_time_s": t.memory_time_s, "compute_time_s": t.compute_time_s,
        "utilisation": utilisation, "bandwidth_use": bandwidth_use, "time_s": t.time_s})


def batch_crossing(a: Analysis) -> Explanation | None:
    """The batch at which decode stops being memory-bound (if one fits)."""
    if a.params.phase != "decode" or a.model.item_unit != "tokens":
        return None
    sweep = batch_sweep(a.model, a.params, a.hardware)
    if sweep.max_batch < 1:
        return Explanation("Batching", f"The weights alone do not fit in the {a.hardware.name}'s "
                                       f"{format_bytes(a.hardware.memory_capacity_bytes)}.",
                           {"max_batch": 0})
    crossing = next((int(b) for b, m in zip(sweep.batch, sweep.memory_bound, strict=True) if not m), None)
    first, last = sweep.tokens_per_s[0], sweep.tokens_per_s[-1]
    numbers = {"max_batch": sweep.max_batch, "tokens_per_s_batch_1": float(first),
               "tokens_per_s_max_batch": float(last)}
    text = (f"Every sequence in a batch reuses the same weights, so throughput grows with the batch: "
            f"{first:,.0f} tokens/s at batch 1, {last:,.0f} at batch {sweep.max_batch:,} (the largest "
            f"whose KV cache fits at a context of {a.params.context:,}). ")
    if crossing is None:
        text += ("Even then the step stays memory-bound: each sequence reads its own KV cache, "
                 "and that traffic grows with the batch as fast as the arithmetic does.")
    else:
        numbers["crossing_batch"] = crossing
        text += f"From batch {crossing:,} on, the step is compute-bound."
    return Explanation("Batching", text, numbers)


def lower_precision(a: Analysis) -> Explanation | None:
    lower = LOWER_PRECISION.get(a.params.dtype)
    if lower is None:
        return None
    other = analyze(a.model, replace(a.params, dtype=lower), a.hardware)
    speedup = a.totals.time_s / other.totals.time_s
    note = f" ({other.notes[0]})" if other.roofs.matrix.precision != lower and other.notes else ""
    return Explanation("Lower precision", (
        f"In {lower} every value takes half the bytes and the matrix units run faster{note}: "
        f"the step would take {format_time(other.totals.time_s)} instead of "
        f"{format_time(a.totals.time_s)}, {speedup:.2f}× faster."), {"speedup": speedup,
                                                                      "time_s": other.totals.time_s})


def fused_attention(a: Analysis) -> Explanation | None:
    if a.params.attention != "naive" or a.model.item_unit != "tokens":
        return None
    fused = analyze(a.model, replace(a.params, attention="fused"), a.hardware)
    saved = a.totals.bytes - fused.totals.bytes
    return Explanation("Fused attention", (
        f"Naive attention writes the score matrix to memory and reads it back: "
        f"{format_si(saved, 'B')} more per step than a fused kernel that keeps it on chip. "
        f"Fused, the step takes {format_time(fused.totals.time_s)} instead of "
        f"{format_time(a.totals.time_s)}."), {"bytes_saved": float(saved), "time_s": fused.totals.time_s})


def _op_index(a: Analysis, name: str) -> int | None:
    return next((i for i, o in enumerate(a.ops) if o.name == name), None)


def op_crossing_batch(a: Analysis, name: str) -> int | None:
    """The smallest batch (a power of two up to the largest that fits) at which op ``name``
    is compute-bound in decode; None if it stays memory-bound."""
    top = batch_sweep(a.model, a.params, a.hardware).max_batch
    batch = 1
    while batch <= top:
        other = analyze(a.model, replace(a.params, batch=batch), a.hardware)
        index = _op_index(other, name)
        if index is not None and not bool(other.memory_bound[index]):
            return batch
        batch *= 2
    return None


def explain_op(a: Analysis, name: str) -> Explanation | None:
    """Which roof binds one op, by how much, and what would move it."""
    i = _op_index(a, name)
    if i is None or a.flops[i] == 0:
        return None
    o, hw = a.ops[i], a.hardware
    bandwidth = a.roofs.bandwidth_bytes_per_s
    memory_t, compute_t = float(a.bytes[i] / bandwidth), float(a.flops[i] / a.peaks[i])
    ridge, intensity = float(a.peaks[i] / bandwidth), float(a.intensity[i])
    performance = float(a.flops[i] / a.time_s[i])
    numbers = {"memory_time_s": memory_t, "compute_time_s": compute_t, "intensity": intensity,
               "ridge": ridge, "utilisation": performance / float(a.peaks[i])}
    if memory_t > compute_t:
        text = (f"{o.name} is memory-bound on the {hw.name}: moving its {format_si(a.bytes[i], 'B')} "
                f"takes {format_time(memory_t)}, its arithmetic {format_time(compute_t)}. At "
                f"{intensity:,.3g} FLOP/byte it sits {ridge / intensity:,.3g}× left of the ridge "
                f"({ridge:,.0f} FLOP/byte) and uses {performance / float(a.peaks[i]):.1%} of the "
                f"compute it could.")
        if a.params.phase == "decode" and a.model.item_unit == "tokens":
            crossing = op_crossing_batch(a, name)
            if crossing is not None and crossing > a.params.batch:
                numbers["crossing_batch"] = crossing
                text += f" At a batch of {crossing:,} it would be compute-bound."
            elif crossing is None:
                text += (" No batch that fits makes it compute-bound: its bytes grow with the batch "
                         "(each sequence reads its own data).")
    else:
        text = (f"{o.name} is compute-bound on the {hw.name}: its arithmetic takes "
                f"{format_time(compute_t)}, moving its bytes {format_time(memory_t)}. At "
                f"{intensity:,.3g} FLOP/byte it is {intensity / ridge:,.3g}× right of the ridge: only a "
                f"higher compute roof (matrix units, a lower precision) would speed it up.")
    return Explanation(f"Selected: {o.name}", text, numbers)


def memory_fit(a: Analysis) -> Explanation:
    t = a.totals
    parts = f"weights {format_bytes(t.weight_bytes)}"
    if t.kv_bytes_per_token:
        parts += (f", KV cache {format_bytes(t.kv_cache_bytes)} ({format_bytes(t.kv_bytes_per_token)} "
                  f"per token, {t.kv_cache_bytes / t.memory_capacity_bytes:.1%} of the device)")
    verdict = "fits" if t.fits_in_memory else "does NOT fit"
    return Explanation("Memory", (
        f"Resident during the step: {parts}, activations {format_bytes(t.activation_bytes)}. "
        f"Together {format_bytes(t.memory_required_bytes)} of "
        f"{format_bytes(t.memory_capacity_bytes)}: it {verdict}."),
        {"required_bytes": float(t.memory_required_bytes), "capacity_bytes": t.memory_capacity_bytes})


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
    """How much faster ``fast`` runs the step, split into what its bandwidth buys and what
    its compute buys: the slow device with only the fast one's bandwidth, then with its
    peaks too. The two factors multiply to the whole ratio."""
    t_slow = analyze(model, params, slow).totals.time_s
    t_fast = analyze(model, params, fast).totals.time_s
    main = slow.main_memory
    with_bandwidth = replace(slow, memory=tuple(
        replace(m, bandwidth_bytes_per_s=fast.bandwidth_bytes_per_s) if m is main else m
        for m in slow.memory))
    t_bw = analyze(model, params, with_bandwidth).totals.time_s
    ratio, from_bandwidth = t_slow / t_fast, t_slow / t_bw
    from_compute = t_bw / t_fast
    bandwidth_ratio = fast.bandwidth_bytes_per_s / slow.bandwidth_bytes_per_s
    text = (f"The {fast.name} runs this step {ratio:,.1f}× faster than the {slow.name} "
            f"({format_time(t_fast)} against {format_time(t_slow)}). Its memory is "
            f"{bandwidth_ratio:,.1f}× faster; giving the {slow.name} that bandwidth alone would "
            f"make it {from_bandwidth:,.1f}× faster, and the remaining {from_compute:,.2f}× comes "
            f"from the {fast.name}'s arithmetic.")
    return Explanation("CPU and GPU", text, {
        "ratio": ratio, "from_bandwidth": from_bandwidth, "from_compute": from_compute,
        "bandwidth_ratio": bandwidth_ratio, "time_slow_s": t_slow, "time_fast_s": t_fast})
