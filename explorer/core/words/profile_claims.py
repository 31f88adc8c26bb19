"""Scene fields of a real run shown beside the step (its profile, one step of it), each a
claim recomputed from the profile and the step's analysis (``core.analysis.profile_match``):

``{step/measured}`` (the profile's kernel time, "31.8 ms"), ``{step/measured-kernels}``
(its kernel launches), ``{step/measured-ratio}`` (over the expected time, "2.04×"),
``{step/measured-bound-ratio}`` (over the bound); per class of op (products, attention,
memory, communication: the kernels told apart by their names) ``{step/measured:CLASS}``
(time), ``{step/measured-kernels:CLASS}``, ``{step/measured-share:CLASS}`` (of the
profile's time), ``{step/measured-ratio:CLASS}`` (over the class's expected time),
``{step/measured-rate:CLASS}`` (the FLOPs the profile counted for the class over its
time) and ``{step/measured-roof:CLASS}`` (that rate over the step's matrix roof).
"""

from __future__ import annotations

from collections.abc import Callable

from explorer.core.analysis.expected import expected_for, missing_efficiency
from explorer.core.analysis.profile_match import CLASSES, class_of, compare
from explorer.core.profile import Profile
from explorer.core.units import format_number, format_share, format_si, format_time, rate_unit
from explorer.core.words.claims import Quantity, State

PREFIX = "measured"


def handles(field: str) -> bool:
    return field == PREFIX or field.startswith((f"{PREFIX}:", f"{PREFIX}-"))


def _profile(state: State) -> Profile:
    if state.profile is None:
        raise KeyError("the step shows no profile of a real run (a scene's start: profile)")
    return state.profile


def _comparison(state: State):
    a = state.analysis()
    e = expected_for(a)
    if e is None:
        raise KeyError(missing_efficiency(a) or "the step's efficiency is 'bound': no expected time")
    return a, e, compare(_profile(state), a, e)


def _kernels(state: State, op_class: str | None) -> list:
    """The profile's kernels (by name) of ``op_class`` (None: all of them)."""
    return [k for k in _profile(state).folded(0.0) if op_class is None or class_of(k.name) == op_class]


def _row(state: State, op_class: str):
    row = next((r for r in _comparison(state)[2].rows if r.op_class == op_class), None)
    if row is None:
        raise KeyError(f"neither the step nor the profile has any {op_class}")
    return row


def _value(state: State, what: str, op_class: str | None) -> float:
    """One number of the profile against the step (``step_field``'s ``what``)."""
    kernels = _kernels(state, op_class)
    seconds = sum(k.time_s for k in kernels)
    if what == "time":
        return seconds
    if what == "kernels":
        return sum(k.launches for k in kernels)
    if what == "share":
        return seconds / _profile(state).time_s
    if what in ("rate", "roof"):
        if seconds <= 0 or not any(k.total_flops for k in kernels):
            raise KeyError("the profile counts no FLOPs for these kernels")
        rate = sum(k.total_flops for k in kernels) / seconds
        return rate if what == "rate" else rate / state.analysis().roofs.matrix.flops_per_s
    a, e, _ = _comparison(state)
    if op_class is not None:
        row = _row(state, op_class)
        if not row.expected_s:
            raise KeyError(f"the step expects no time in {op_class}")
        return row.measured_s / row.expected_s
    return seconds / (e.time_s if what == "ratio" else a.totals.time_s)


WORDS = {"": "time", "-kernels": "kernels", "-ratio": "ratio", "-bound-ratio": "bound-ratio",
         "-share": "share", "-rate": "rate", "-roof": "roof"}


def _text(state: State, what: str, value: float) -> str:
    if what == "time":
        return format_time(value)
    if what == "kernels":
        return f"{round(value):,}"
    if what in ("share", "roof"):
        return format_share(value)
    if what == "rate":
        return format_si(value, rate_unit(state.params.dtype))
    return f"{format_number(value)}×"


def step_field(state: State, field: str) -> tuple[str, Quantity]:
    """A ``{step/measured…}`` field (KeyError otherwise)."""
    head, _, name = field.partition(":")
    what = WORDS.get(head.removeprefix(PREFIX))
    if what is None or not head.startswith(PREFIX):
        raise KeyError(f"unknown field {field!r}")
    if name and name not in CLASSES:
        raise KeyError(f"unknown class {name!r}: one of {', '.join(CLASSES)}")
    if what == "bound-ratio" and name:
        raise KeyError("measured-bound-ratio is of the whole step, not of a class")
    op_class = CLASSES[name] if name else None
    recompute: Callable[[], float] = lambda: _value(state, what, op_class)  # noqa: E731
    value = recompute()
    text = _text(state, what, value)
    about = f"measured {what}" + (f" of {name}" if name else "")
    return text, Quantity(about, value, text, recompute, rel=1e-9)
