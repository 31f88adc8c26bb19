"""Scene fields of a real run shown beside the step (its profile: one step of the steps
it covers), each a claim checked by a second route: the text from the comparison
(``core.analysis.profile_match``, the kernels by name) and the step's cached analysis,
the check from the profile's kernels one by one and the analysis worked out afresh:

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

from explorer.core.analysis.analysis import Analysis, analyze
from explorer.core.analysis.expected import Expected, expected_for, missing_efficiency
from explorer.core.analysis.profile_match import CLASSES, compare, kernel_class
from explorer.core.model.profile import Profile, ProfiledKernel
from explorer.core.units import format_number, format_share, format_si, format_time, rate_unit
from explorer.core.words.claims import Quantity, State

PREFIX = "measured"


def handles(field: str) -> bool:
    return field == PREFIX or field.startswith((f"{PREFIX}:", f"{PREFIX}-"))


def _profile(state: State) -> Profile:
    if state.profile is None:
        raise KeyError("the step shows no profile of a real run (a scene's start: profile)")
    if state.profile.time_s <= 0:
        raise KeyError("the profile's kernels took no time")
    return state.profile


def _expected(state: State, again: bool) -> tuple[Analysis, Expected]:
    """The step's analysis and expected time: the cached ones, or (``again``) worked out
    afresh, for a check that does not share their route."""
    a = analyze(state.model, state.params, state.hardware) if again else state.analysis()
    e = expected_for(a)
    if e is None:
        raise KeyError(missing_efficiency(a) or "the step's efficiency is 'bound': no expected time")
    return a, e


def _kernels(state: State, op_class: str | None, again: bool) -> list[ProfiledKernel]:
    """The profile's kernels of ``op_class`` (None: all): by name, or (``again``) one by one."""
    profile = _profile(state)
    kernels = profile.kernels if again else profile.folded(0.0)
    return [k for k in kernels if op_class is None or kernel_class(k) == op_class]


def _class_time(state: State, op_class: str, again: bool) -> tuple[float, float]:
    """(one step's measured seconds of ``op_class``, its expected seconds): from the
    comparison's row, or (``again``) from the kernels and a fresh expected time."""
    if again:
        steps = _profile(state).steps * _profile(state).devices  # one step of one GPU
        return (sum(k.time_s for k in _kernels(state, op_class, True)) / steps,
                _expected(state, True)[1].parts[op_class])
    a, e = _expected(state, False)
    row = next((r for r in compare(_profile(state), a, e).rows if r.op_class == op_class), None)
    if row is None:
        raise KeyError(f"neither the step nor the profile has any {op_class}")
    return row.measured_s, row.expected_s or 0.0


def _value(state: State, what: str, op_class: str | None, again: bool = False) -> float:
    """One number of the profile against the step (``step_field``'s ``what``); ``again``:
    by a second route (the check's)."""
    profile = _profile(state)
    kernels = _kernels(state, op_class, again)
    per = profile.steps * profile.devices  # one step of one GPU
    seconds = sum(k.time_s for k in kernels) / per
    if what == "kernels":
        return sum(k.launches for k in kernels) / per
    if what in ("rate", "roof"):
        if seconds <= 0 or not any(k.total_flops for k in kernels):
            raise KeyError("the profile counts no FLOPs for these kernels")
        rate = sum(k.total_flops for k in kernels) / per / seconds
        return rate if what == "rate" else rate / _expected(state, again)[0].roofs.matrix.flops_per_s
    if what == "share":
        return seconds * per / profile.time_s
    if op_class is None:  # the whole step: its time, over the expected time or the bound
        whole = (profile.time_s if not again else sum(k.time_s for k in profile.folded(0.0))) / per
        a, e = _expected(state, again)
        return {"time": whole, "ratio": whole / e.time_s, "bound-ratio": whole / a.totals.time_s}[what]
    measured, expected = _class_time(state, op_class, again)
    if what == "time":
        return measured
    if not expected:
        raise KeyError(f"the step expects no time in {op_class}")
    return measured / expected


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
    value = _value(state, what, op_class)
    recompute: Callable[[], float] = lambda: _value(state, what, op_class, again=True)  # noqa: E731
    text = _text(state, what, value)
    about = f"measured {what}" + (f" of {name}" if name else "")
    return text, Quantity(about, value, text, recompute, rel=1e-9)
