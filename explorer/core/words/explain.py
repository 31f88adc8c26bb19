"""Explanations in words, generated from the analysis: every number in the text comes from
``core`` for the state shown, never typed into prose.

Each function returns an ``Explanation``: a title, the text, the claims it makes (checked
against an independent recomputation by ``claims.verify``) and its numbers by name.
``explain_state`` is what the Explain panel and ``roofline-explorer explain`` show.
"""

from __future__ import annotations

from dataclasses import replace

from explorer.core.analysis.analysis import Analysis
from explorer.core.analysis.batching import crossing_batch, levels_off_batch
from explorer.core.analysis.memory import memory_budget
from explorer.core.analysis.roofline import COMMUNICATION, COMPUTE, MEMORY
from explorer.core.analysis.serving_request import time_of
from explorer.core.hardware.hardware import CPU, GPU, DeviceKind, Hardware, kind_label
from explorer.core.model.applicability import Phase
from explorer.core.model.models import ModelSpec
from explorer.core.model.workload import WorkloadError, WorkloadParams
from explorer.core.units import format_bytes, format_number, format_share, format_si, format_time, rate_unit
from explorer.core.words import expected_claims, serving_claims
from explorer.core.words.alternatives import fused_attention, lower_precision, state_of
from explorer.core.words.batch_claims import Crossing, LevelsOff, MaxBatch
from explorer.core.words.claims import (
    Bound,
    Claim,
    Fits,
    Quantity,
    Ridge,
    State,
    faster,
    step_time,
    throughput,
    times,
)
from explorer.core.words.parallel_claims import communication_seconds
from explorer.core.words.sentences import Explanation

__all__ = ["Explanation", "explain_state"]

LEVELS_OFF = 0.95  # throughput has "levelled off" at this share of its value at the largest batch


def _decode_of_tokens(a: Analysis) -> bool:
    return a.params.phase == Phase.DECODE and a.model.item_unit == "tokens"


def converted(a: Analysis) -> str:
    """"The A100 has no fp8 arithmetic: ..." when the step's precision is not the one its
    products run in (empty otherwise)."""
    matrix = a.roofs.matrix
    if matrix.precision == a.params.dtype:
        return ""
    return (f"The {a.hardware.name} has no {a.params.dtype} arithmetic: values are converted to "
            f"{matrix.precision} and multiplied on its {matrix.label} units. ")


def binding_roof(a: Analysis) -> Explanation:
    """What the step takes, which roof binds it, and how much of the other it uses."""
    t, hw, state = a.totals, a.hardware, state_of(a)
    peak = a.roofs.matrix
    achieved = t.flops / t.time_s
    utilisation = achieved / peak.flops_per_s
    bandwidth_use = t.bytes / t.time_s / a.roofs.bandwidth_bytes_per_s
    bound = Bound.of(state)
    time = step_time(state)
    # The step's time is the sum over ops of each op's slower side; the two sums below are
    # what all its traffic and all its arithmetic would take on their own.
    traffic = f"moving its {format_si(t.bytes, 'B')} takes {format_time(t.memory_time_s)} in all"
    arithmetic = f"its arithmetic takes {format_time(t.compute_time_s)}"
    claims = [time, bound]
    opening = f"On the {hw.name} at datasheet peaks this step takes {time.phrase} and is {bound.phrase}"
    if bound.bound == COMMUNICATION:
        talk = Quantity("communication time", t.link_time_s, format_time(t.link_time_s),
                        lambda: communication_seconds(state), rel=1e-9)
        latency = communication_seconds(state, latency_only=True) / t.link_time_s
        claims.append(talk)
        share = f"{latency:.1%}" if latency > 0.99 else format_share(latency)
        text = (f"{opening}: its messages between the {t.devices:,} devices take {talk.phrase}, "
                f"{share} of it the links' latency, longer than moving its bytes "
                f"({format_time(t.memory_time_s)}) or its arithmetic ({format_time(t.compute_time_s)}).")
    elif bound.bound == MEMORY:
        only = "only " if t.compute_time_s < t.memory_time_s / 2 else ""
        text = (f"{opening}: {traffic}, its arithmetic {only}{format_time(t.compute_time_s)}. It uses "
                f"{format_share(utilisation)} of the {peak.label} peak "
                f"({format_si(achieved, rate_unit(peak.precision))} of "
                f"{format_si(peak.flops_per_s, rate_unit(peak.precision))}) and "
                f"{format_share(bandwidth_use)} of the memory bandwidth.")
    else:
        text = (f"{opening}: {arithmetic} in all, moving its bytes {format_time(t.memory_time_s)}. It "
                f"reaches {format_share(utilisation)} of the {peak.label} peak.")
    if t.link_bytes:
        if bound.bound != COMMUNICATION:
            text += f" Its messages between the {t.devices:,} devices take {format_time(t.link_time_s)}."
        text += " Communication is not overlapped with the other ops here: their times add up."
    elif t.time_s > 1.05 * max(t.memory_time_s, t.compute_time_s):
        text += (" Each op waits for the longer of its arithmetic and its traffic, so the step "
                 "takes more than either sum.")
    text += f" {converted(a)}".rstrip()
    text += _expected_sentence(state, claims)
    if not t.fits_in_memory:
        fits = Fits(state, False)
        claims.append(fits)
        text += f" These times assume it fit: it {fits.phrase} (see Memory)."
    return Explanation("What limits the step", text, tuple(claims), {
        "memory_time_s": t.memory_time_s, "compute_time_s": t.compute_time_s,
        "utilisation": utilisation, "bandwidth_use": bandwidth_use, "time_s": t.time_s})


def _expected_sentence(state: State, claims: list[Claim]) -> str:
    """What to expect of real kernels, when the workload asks for an expected time and the
    device has one; its claims join ``claims``."""
    try:
        _, expected = expected_claims.step_field(state, "expected")
        _, ratio = expected_claims.step_field(state, "expected-ratio")
    except KeyError:  # the bound alone, or no efficiency for this device
        return ""
    claims += [expected, ratio]
    return (f" Real kernels reach only part of each roof: with {state.params.efficiency} efficiency "
            f"expect {expected.phrase}, {ratio.phrase} the bound.")


def _budget_words(hardware: Hardware, params: WorkloadParams) -> str:
    """"the 64.8 GiB a serving engine may use (90% of 72 GiB usable)"; in training "the
    64.8 GiB it may use"."""
    usable = hardware.usable_memory_bytes
    nominal = hardware.memory_capacity_bytes
    reported = "" if usable == nominal else f" of {format_bytes(nominal)} nominal"
    who = "the step" if params.phase == Phase.TRAIN else "a serving engine"
    return (f"the {format_bytes(memory_budget(hardware, params))} {who} may use "
            f"({params.budget_share:.0%} of {format_bytes(usable)} usable{reported})")


def batch_crossing(a: Analysis) -> Explanation | None:
    """How throughput grows with the batch and where it levels off, and the exact batch at
    which decode turns compute-bound."""
    if not _decode_of_tokens(a):
        return None
    state = state_of(a)
    top = MaxBatch(state, MaxBatch.largest(state))
    if top.batch < 1:
        t = a.totals
        budget = _budget_words(a.hardware, a.params)
        if t.weight_bytes > t.memory_budget_bytes:
            text = f"The weights alone ({format_bytes(t.weight_bytes)}) {top.phrase} in {budget}."
        else:
            one = state.at(batch=1).analysis().totals
            text = (f"Not even one sequence fits: the weights ({format_bytes(t.weight_bytes)}) "
                    f"leave {format_bytes(t.memory_budget_bytes - t.weight_bytes)} of {budget}, and "
                    f"one sequence's KV cache and activations at a context of {a.params.context:,} "
                    f"need {format_bytes(one.kv_cache_bytes + one.activation_bytes)}; they {top.phrase}.")
        return Explanation("Batching", text, (top,), {"max_batch": 0})
    if top.batch == 1:
        first = throughput(state.at(batch=1))
        text = (f"Only one sequence fits at a context of {a.params.context:,} ({first.phrase}; "
                f"a second would not fit): batching cannot help until memory is freed, with a "
                f"shorter context or a lower KV-cache precision.")
        return Explanation("Batching", text, (top, first), {"max_batch": 1})
    crossing = Crossing(state, crossing_batch(a.model, a.params, a.hardware))
    knee = LevelsOff(state, levels_off_batch(a.model, a.params, a.hardware, top.batch, LEVELS_OFF),
                     top.batch, LEVELS_OFF)
    first, last = throughput(state.at(batch=1)), throughput(state.at(batch=top.batch))
    claims = [top, crossing, first, last]
    numbers = {"max_batch": top.batch, "tokens_per_s_batch_1": first.per_s,
               "tokens_per_s_max_batch": last.per_s, "levels_off_batch": knee.batch}
    text = (f"Every sequence in a batch reuses the same weights, so throughput grows with the batch: "
            f"at the bound, from {first.phrase} at batch 1 to {last.phrase} at batch {top.phrase}, the "
            f"largest that fits at a context of {a.params.context:,}.")
    if crossing.batch is None:
        apart = "Apart from its communication, the step" if a.totals.link_bytes else "The step"
        text += (f" {apart} stays {crossing.phrase} all the way: each sequence reads its own KV "
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


def serving(a: Analysis) -> Explanation | None:
    """What the decode step shown means for a serving engine: tokens/s each user sees and
    each device gives at this batch, at the time the step is expected to take (the bound
    where no efficiency is published), and how many such sequences the KV cache holds."""
    if not _decode_of_tokens(a) or not a.totals.fits_in_memory:
        return None
    state = state_of(a)
    user, device = serving_claims.rate_claims(state)
    top = MaxBatch(state, MaxBatch.largest(state))
    which = time_of(a)[1]
    devices = "each device" if a.totals.devices > 1 else "the device"
    text = (f"A serving engine decoding {a.params.batch:,} sequence{'s' if a.params.batch > 1 else ''} "
            f"at this context gives each user {user.phrase} and {devices} {device.phrase} (at the "
            f"{which} step time); the KV cache holds at most {top.phrase} such sequences.")
    claims = [user, device, top]
    double = a.params.batch * 2
    if double <= top.batch:
        user2, device2 = serving_claims.rate_claims(state.at(batch=double))
        claims += [user2, device2]
        trade = user2.value < user.value and device2.value > device.value and user2.phrase != user.phrase
        whose = "the devices'" if a.totals.devices > 1 else "the device's"
        text += (f" At batch {double:,}: {user2.phrase} for each user, {device2.phrase} for {devices}"
                 + (f": batching trades each user's speed for {whose} throughput." if trade else "."))
    text += " roofline-explorer serve plans it batch by batch, and across splits of the devices."
    return Explanation("Serving", text, tuple(claims),
                       {"tokens_per_s_per_user": user.value, "tokens_per_s_per_device": device.value,
                        "max_batch": top.batch})


def op_crossing_batch(a: Analysis, name: str) -> int | None:
    """The exact smallest batch that fits at which op ``name`` is compute-bound in decode;
    None if it stays memory-bound."""
    return crossing_batch(a.model, a.params, a.hardware, op=name)


def explain_op(a: Analysis, name: str) -> Explanation | None:
    """Which roof binds one op, by how much, and what would move it."""
    i = next((i for i, o in enumerate(a.ops) if o.name == name), None)
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
    bound = Bound(state, MEMORY if memory_t > compute_t else COMPUTE, o.name)
    claims: list[Claim] = [bound]
    numbers = {"memory_time_s": memory_t, "compute_time_s": compute_t, "intensity": intensity,
               "ridge": balance, "utilisation": float(a.flops[i] / a.time_s[i] / a.peaks[i])}
    if blended:
        where = (f"its products run under the {a.roofs.matrix.label} roof and its softmax under the "
                 f"{a.roofs.vector.label} roof, so it breaks even at {format_number(balance)} FLOP/byte")
    else:
        ridge = Ridge(a.hardware, roof.label, roof.flops_per_s / bandwidth)
        claims.append(ridge)
        where = f"it runs under the {roof.label} roof, whose ridge is at {ridge.phrase}"
    if bound.bound == MEMORY:
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
        remedy = ("a lower precision, or matrix units with a higher peak" if o.unit != "vector"
                  else "vector units with a higher peak (its arithmetic does not run on matrix units)")
        text = (f"{o.name} is {bound.phrase}: its arithmetic takes {format_time(compute_t)}, moving "
                f"its bytes {format_time(memory_t)}. At {format_number(intensity)} FLOP/byte {where}: "
                f"it sits {times(intensity / balance)} right of it, so only a higher compute roof "
                f"would speed it up: {remedy}.")
    return Explanation(f"Selected: {o.name}", text, tuple(claims), numbers)


def memory_fit(a: Analysis) -> Explanation:
    t, state = a.totals, state_of(a)
    parts = f"weights {format_bytes(t.weight_bytes)}"
    if t.state_bytes:
        parts += f", gradients and Adam's state {format_bytes(t.state_bytes)}"
    if t.kv_bytes_per_token:
        parts += (f", KV cache {format_bytes(t.kv_cache_bytes)} ({format_bytes(t.kv_bytes_per_token)} "
                  f"per token, {format_share(t.kv_cache_bytes / t.memory_budget_bytes)} of the budget)")
    fits = Fits(state, t.fits_in_memory)
    kept = " kept for the backward pass" if a.params.phase == Phase.TRAIN else ""
    where = f" on each of its {t.devices:,} devices" if t.devices > 1 else ""
    return Explanation("Memory", (
        f"Resident during the step{where}: {parts}, activations{kept} {format_bytes(t.activation_bytes)}. "
        f"Together {format_bytes(t.memory_required_bytes)} of {_budget_words(a.hardware, a.params)}: "
        f"it {fits.phrase}."), (fits,),
        {"required_bytes": float(t.memory_required_bytes), "budget_bytes": t.memory_budget_bytes,
         "capacity_bytes": t.memory_capacity_bytes})


def explain_workload(a: Analysis) -> list[Explanation]:
    out = [binding_roof(a)]
    for extra in (batch_crossing, serving, lower_precision, fused_attention):
        try:
            found = extra(a)
        except WorkloadError:
            found = None
        if found is not None:
            out.append(found)
    out.append(memory_fit(a))
    context = [n for n in a.notes if "trained context" in n]
    if context:
        out.append(Explanation("Note", f"{context[0][0].upper()}{context[0][1:]}: the model was not "
                                       "trained for this, though the costs are computed all the same."))
    return out


def compare_devices(model: ModelSpec, params: WorkloadParams, slow: Hardware, fast: Hardware) -> Explanation:
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
                         lambda: fast.bandwidth_bytes_per_s / slow.bandwidth_bytes_per_s)
    # Named once each; then "the GPU" and "the CPU" (or the names, for two of a kind).
    one, other = (f"the {kind_label(h.kind)}" if slow.kind != fast.kind else f"the {h.name}"
                  for h in (fast, slow))
    unfit = [(name, st.analysis().totals) for name, st in ((one, after), (other, before))
             if not st.analysis().totals.fits_in_memory]
    lead = "If it fit, the" if unfit else "The"
    text = (f"{lead} {fast.name} would run this step {whole.phrase} than the {slow.name} " if unfit
            else f"The {fast.name} runs this step {whole.phrase} than the {slow.name} ")
    text += (f"({format_time(after.analysis().totals.time_s)} against "
             f"{format_time(before.analysis().totals.time_s)}). Its memory bandwidth is "
             f"{bandwidth.phrase} {other}'s: with that bandwidth alone {other} would be "
             f"{from_bandwidth.phrase}")
    if from_compute.word == "unchanged":
        text += f", and {one}'s arithmetic makes it {from_compute.phrase}: no compute roof binds this step."
    else:
        text += f"; {one}'s arithmetic makes it {from_compute.phrase} than that."
    fits = [Fits(st, False) for st in (after, before) if not st.analysis().totals.fits_in_memory]
    for name, t in unfit:
        text += (f" It does not fit on {name}: {format_bytes(t.memory_required_bytes)} against a "
                 f"{format_bytes(t.memory_budget_bytes)} budget.")
    claims = (whole, bandwidth, from_bandwidth, from_compute, *fits)
    title = " and ".join(kind_label(k) for k in DeviceKind if k in (slow.kind, fast.kind))
    return Explanation(title if slow.kind != fast.kind else "Two devices", text, claims, {
        "ratio": whole.factor, "from_bandwidth": from_bandwidth.factor, "from_compute": from_compute.factor,
        "bandwidth_ratio": ratio, "time_slow_s": before.analysis().totals.time_s,
        "time_fast_s": after.analysis().totals.time_s})


def explain_state(model: ModelSpec, params: WorkloadParams, devices: list[Hardware],
                  selected_op: str | None = None) -> list[Explanation]:
    """The Explain panel's paragraphs for a state: the selected op, what limits the step on
    the primary device (the first), CPU against GPU when both are shown, batching, lower
    precision, fused attention, memory."""
    from explorer.core.analysis.analysis import analyze

    a = analyze(model, params, devices[0])
    out = explain_workload(a)
    cpu = next((d for d in devices if d.kind == CPU), None)
    gpu = next((d for d in devices if d.kind == GPU), None)
    if cpu and gpu:
        out.insert(1, compare_devices(model, params, cpu, gpu))
    op = explain_op(a, selected_op) if selected_op else None
    if op is not None:
        out.insert(0, op)
    return out
