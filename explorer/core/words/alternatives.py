"""Explanations of a change the user could make (a lower precision, fused attention): what
the step would take then, from the same analysis. Part of ``explain``, kept apart to keep it
readable; ``state_of`` and ``unfit`` are shared by both."""

from __future__ import annotations

from explorer.core.analysis.analysis import Analysis
from explorer.core.analysis.roofline import MEMORY
from explorer.core.hardware.hardware import ComputePeak
from explorer.core.model.quantization import applied
from explorer.core.units import format_si, format_time
from explorer.core.words.claims import Bound, Claim, Fits, Quantity, State, faster, times
from explorer.core.words.sentences import Explanation

LOWER_PRECISION = {"fp32": "bf16", "bf16": "fp8", "fp16": "fp8"}


def state_of(a: Analysis) -> State:
    return State(a.model, a.params, a.hardware)


def unfit(state: State) -> tuple[Fits, ...]:
    """The claim behind "if it fit": the step does not fit (nothing when it does)."""
    return () if state.analysis().totals.fits_in_memory else (Fits(state, False),)


def _halved(a: Analysis, lower: str) -> str:
    """What a lower ``dtype`` halves: every value, or the activations and cache when the
    weights (or the cache) are stored apart, as a quantized checkpoint's are."""
    params = a.params
    if applied(a.model, params) is not None:
        cache = "" if params.kv_dtype else " and the KV cache"
        return f"the activations{cache} take (the weights stay as the checkpoint stores them)"
    if params.weight_dtype is None and params.kv_dtype is None:
        return "every value takes"
    kept = [f"the {what} stay {dtype}" for what, dtype in (("weights", params.weight_dtype),
                                                           ("KV cache", params.kv_dtype)) if dtype]
    moved = ["the activations"] + [what for what, dtype in (("the weights", params.weight_dtype),
                                                            ("the KV cache", params.kv_dtype)) if not dtype]
    return f"{' and '.join(moved)} take ({', '.join(kept)})" if kept else f"{' and '.join(moved)} take"


def _roof_change(a: Analysis, then: ComputePeak, lower: str) -> tuple[str, list[Claim]]:
    """The sentence on the arithmetic: unsupported, a roof that rises (split into the
    units' gain and the precision's where the chip has TF32), or one that falls."""
    hw, now = a.hardware, a.roofs.matrix
    claims: list[Claim] = []
    rise = then.flops_per_s / now.flops_per_s

    def ratio(name: str, value: float, first: tuple[str, str], second: tuple[str, str]) -> Quantity:
        claim = Quantity(name, value, times(value),
                         lambda: hw.peak_flops(*first) / hw.peak_flops(*second))
        claims.append(claim)
        return claim

    if then.precision != lower:
        text = (f"The {hw.name} has no {lower} arithmetic: its products would be converted to "
                f"{then.precision} and run on its {then.label} units")
        if rise > 1:
            up = ratio("roof after / roof now", rise, (then.precision, then.unit), (now.precision, now.unit))
            text += (f", whose roof is {up.phrase} the {now.label} roof this step runs under "
                     f"({then.precision} itself would get that too)")
        return text + ".", claims
    if rise > 1 and now.unit == "vector" and then.unit == "matrix":
        up = ratio("roof after / roof now", rise, (then.precision, then.unit), (now.precision, now.unit))
        text = (f"Its products would move from the {now.label} units to the {then.label} units, "
                f"a roof {up.phrase} higher")
        tf32 = hw.peak("tf32", "matrix")
        if now.precision == "fp32" and tf32 is not None:
            units = ratio("tf32 matrix / fp32 vector", tf32.flops_per_s / now.flops_per_s, ("tf32", "matrix"),
                          (now.precision, now.unit))
            bits = ratio(f"{then.label} / tf32 matrix", then.flops_per_s / tf32.flops_per_s,
                         (then.precision, then.unit), ("tf32", "matrix"))
            text += (f": {units.phrase} from the matrix units themselves (TF32 on them shows it) and "
                     f"{bits.phrase} from the lower precision")
        return text + ".", claims
    if rise > 1:
        up = ratio("roof after / roof now", rise, (then.precision, then.unit), (now.precision, now.unit))
        return f"Its {then.unit} roof rises {up.phrase} ({now.label} to {then.label}).", claims
    if rise < 1:
        return f"Its compute roof is lower in {lower} ({then.label}, not {now.label}).", claims
    return f"Its compute roof stays the same ({then.label}).", claims


def lower_precision(a: Analysis) -> Explanation | None:
    """What the next lower precision would do; says so when the device cannot compute in
    it, when the gain is only the halved bytes, or when the step would get slower."""
    lower = LOWER_PRECISION.get(a.params.dtype)
    if lower is None:
        return None
    state = state_of(a)
    other = state.at(dtype=lower)
    after = other.analysis()
    change = faster(state, other)
    roof, claims = _roof_change(a, after.roofs.matrix, lower)
    step = "If it fit, the step" if not a.totals.fits_in_memory else "The step"
    text = (f"In {lower} {_halved(a, lower)} half the bytes. {roof} {step} would take "
            f"{format_time(after.totals.time_s)} instead of {format_time(a.totals.time_s)} at the bound: "
            f"{change.phrase}")
    memory_bound = [x.totals.bound == MEMORY for x in (a, after)]
    if change.word == "faster" and all(memory_bound):
        bound = Bound(other, MEMORY)
        claims.append(bound)
        text += f", all of it from moving fewer bytes (the step stays {bound.phrase})"
    return Explanation("Lower precision", text + ".", (change, *claims),
                       {"speedup": change.factor, "time_s": after.totals.time_s}, unfit(state))


def fused_attention(a: Analysis) -> Explanation | None:
    if a.params.attention != "naive" or a.model.item_unit != "tokens":
        return None
    state = state_of(a)
    fused = state.at(attention="fused")
    change = faster(state, fused)
    saved = a.totals.bytes - fused.analysis().totals.bytes
    return Explanation("Fused attention", (
        f"Naive attention writes the score matrix to memory and reads it back: "
        f"{format_si(saved, 'B')} more per step than a fused kernel that keeps it on chip. "
        f"{'Fused' if a.totals.fits_in_memory else 'Fused, if it fit'}, the step would take "
        f"{format_time(fused.analysis().totals.time_s)} instead of "
        f"{format_time(a.totals.time_s)} at the bound, {change.phrase}. (A fused kernel is counted at its "
        f"compulsory traffic, each input read once and the output written once: a lower bound, "
        f"as FlashAttention reads K and V again for every tile of queries.)"),
        (change,), {"bytes_saved": float(saved), "speedup": change.factor,
                    "time_s": fused.analysis().totals.time_s}, unfit(state))
