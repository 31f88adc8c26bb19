"""Scene fields of serving a decode step, each a claim worked out again from a fresh
analysis when checked, at the step's expected time where its device has published
efficiency, else at the bound (as the serving planner, ``core.analysis.serving``, times
its steps; the price is its ``cost_per_million_tokens``):

``{step/per-user}`` (tokens/s each sequence sees: one token a step), ``{step/per-device}``
(tokens/s each device gives: the batch's tokens a step over the devices),
``{step/cost:PRICE}`` (dollars per million output tokens at PRICE dollars a device-hour),
``{step/joules-per-token}`` (at TDP: every device at its TDP, not a bound).
Prefills are left out: these are the decode steps of requests already running.
"""

from __future__ import annotations

from explorer.core.analysis.analysis import analyze
from explorer.core.analysis.serving_request import cost_per_million_tokens, time_of
from explorer.core.model.applicability import Phase
from explorer.core.words.claims import Quantity, State

STEP_FIELDS = ("per-user", "per-device", "joules-per-token")
PREFIXES = ("cost:",)


def handles(field: str) -> bool:
    return field in STEP_FIELDS or field.startswith(PREFIXES)


def _seconds(state: State, fresh: bool = False) -> float:
    """The decode step's time as serving counts it (``serving_request.time_of``): from the state's
    analysis, or (``fresh``, a claim's check) from one worked out again."""
    if state.params.phase != Phase.DECODE:
        raise KeyError("serving fields describe a decode step")
    a = analyze(state.model, state.params, state.hardware) if fresh else state.analysis()
    return time_of(a)[0]


def _per_device(state: State, fresh: bool = False) -> float:
    return state.params.batch / _seconds(state, fresh) / state.params.split.devices


def rate_claims(state: State) -> tuple[Quantity, Quantity]:
    """Tokens/s per user (one token a step) and per device, from one step time."""
    seconds = _seconds(state)
    user, device = 1 / seconds, state.params.batch / seconds / state.params.split.devices
    return (Quantity("tokens/s per user", user, f"{user:,.0f} tokens/s",
                     lambda: 1 / _seconds(state, True), rel=1e-9),
            Quantity("tokens/s per device", device, f"{device:,.0f} tokens/s",
                     lambda: _per_device(state, True), rel=1e-9))


def step_field(state: State, field: str) -> tuple[str, Quantity]:
    """A ``{step/FIELD}`` this module knows (KeyError otherwise)."""
    if field in ("per-user", "per-device"):
        claim = rate_claims(state)[field == "per-device"]
        return claim.text, claim
    if field == "joules-per-token":
        tdp = state.hardware.specs.tdp_w
        if not tdp:
            raise KeyError(f"{state.hardware.name} states no TDP")
        value = tdp / _per_device(state)
        text = f"{value:.2g} J"
        return text, Quantity("joules per token at TDP", value, text, lambda: tdp / _per_device(state, True),
                              rel=1e-9)
    price = float(field.removeprefix("cost:"))
    value = cost_per_million_tokens(price, 1, _per_device(state))
    text = f"${value:,.2f}"
    return text, Quantity(f"$ per million tokens at ${price:g} a device-hour", value, text,
                          lambda: price / (_per_device(state, True) * 3600) * 1e6, rel=1e-9)
