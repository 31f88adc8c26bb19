"""What a serving plan (``core.analysis.serving.plan``) says, in sentences: where its times
come from, what bounds it, and the point it chose and why no larger batch. The serve
command prints them and the Serving dialog shows them, so both say the same."""

from __future__ import annotations

from explorer.core.analysis.energy import IDLE_SHARE
from explorer.core.analysis.engine_terms import band_words
from explorer.core.analysis.serving import Plan
from explorer.core.hardware.hardware import Hardware
from explorer.core.units import format_number


def plan_sentences(plan: Plan, model_name: str, hardware: Hardware) -> list[str]:
    """The plan's summary, its notes and its verdict, one sentence (or two) each."""
    times = f"expected ({plan.efficiency} efficiency)" if plan.time_source == "expected" \
        else "the roofline bound"
    energy = ("; J/token at TDP is TDP ÷ tokens/s, every device at its TDP (not a bound), and the "
              f"estimate the power model's, TDP × ({IDLE_SHARE:g} + {1 - IDLE_SHARE:g} × occupancy) at the "
              "expected time"
              if hardware.specs.tdp_w else f"; the catalogue gives {hardware.name} no TDP, so no J/token")
    out = [f"{model_name} on {plan.devices} × {hardware.name}: times are {times}; tokens/s count each "
           f"request's prefill and a user's the other requests' prefills it waits through; the KV cache "
           f"holds at most {plan.kv_wall_sequences:,} requests at full length (prompt + output){energy}."]
    out += [f"Note: {note}." for note in plan.notes]
    c = plan.chosen
    if c is None:  # under a load, its note has said why
        if plan.arrival_rate is None:
            out.append("No batch meets the targets: the time to first token or the time per output token "
                       "at batch 1 is already above them.")
        return out
    why = c.limited_by if plan.arrival_rate is not None else f"no larger batch: {c.limited_by}"
    low, high = c.tpot_band_s or (0.0, 0.0)
    band = "" if c.tpot_band_s is None else \
        f" ({low * 1e3:.2f}–{high * 1e3:.2f} ms: {band_words(hardware, plan.band_unchecked)})"
    out.append(f"Chosen: batch {c.batch:,}, {format_number(c.tokens_per_s_per_device)} tokens/s a "
               f"device, {format_number(c.tokens_per_s_per_user)} a user, {c.tpot_s * 1e3:.2f} ms a "
               f"token{band}; {why}.")
    return out
