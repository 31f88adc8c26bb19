"""Scene fields of serving a decode step, each a claim worked out again from a fresh
analysis when checked, at the step's expected time where its device has published
efficiency, else at the bound (as the serving planner, ``core.analysis.serving``, times
its steps; the price is its ``cost_per_million_tokens``):

``{step/per-user}`` (tokens/s each sequence sees: one token a step), ``{step/per-device}``
(tokens/s each device gives: the batch's tokens a step over the devices),
``{step/cost:PRICE}`` (dollars per million output tokens at PRICE dollars a device-hour),
``{step/joules-per-token}`` (the TDP × time upper bound: every device at its TDP).
Prefills are left out: these are the decode steps of requests already running.
"""

from __future__ import annotations

from explorer.core.analysis.analysis import analyze
from explorer.core.analysis.expected import expected_for
from explorer.core.analysis.serving import cost_per_million_tokens
from explorer.core.words.claims import Quantity, State

STEP_FIELDS = ("per-user", "per-device", "joules-per-token")
PREFIXES = ("cost:",)


def handles(field: str) -> bool:
    return field in STEP_FIELDS or field.startswith(PREFIXES)


def step_seconds(state: State) -> float:
    """The decode step's time, worked out again: expected where published, else the bound."""
    if state.params.phase != "decode":
        raise KeyError("serving fields describe a decode step")
    a = analyze(state.model, state.params, state.hardware)
    e = expected_for(a)
    return e.time_s if e is not None else a.totals.time_s


def per_device(state: State) -> float:
    return state.params.batch / step_seconds(state) / state.params.split.devices


def step_field(state: State, field: str) -> tuple[str, Quantity]:
    """A ``{step/FIELD}`` this module knows (KeyError otherwise)."""
    if field == "per-user":
        value = 1 / step_seconds(state)
        text = f"{value:,.0f} tokens/s"
        return text, Quantity("tokens/s per user", value, text, lambda: 1 / step_seconds(state), rel=1e-9)
    if field == "per-device":
        value = per_device(state)
        text = f"{value:,.0f} tokens/s"
        return text, Quantity("tokens/s per device", value, text, lambda: per_device(state), rel=1e-9)
    if field == "joules-per-token":
        tdp = state.hardware.specs.tdp_w
        if not tdp:
            raise KeyError(f"{state.hardware.name} states no TDP")
        value = tdp / per_device(state)
        text = f"{value:.2g} J"
        return text, Quantity("joules per token at TDP", value, text, lambda: tdp / per_device(state),
                              rel=1e-9)
    price = float(field.removeprefix("cost:"))
    value = cost_per_million_tokens(price, 1, per_device(state))
    text = f"${value:,.2f}"
    return text, Quantity(f"$ per million tokens at ${price:g} a device-hour", value, text,
                          lambda: price / (per_device(state) * 3600) * 1e6, rel=1e-9)
