"""Scene fields of the expected time, each a claim recomputed from the efficiency file:

``{step/expected}`` (the step's expected time, "8.1 ms"), ``{step/expected-ratio}`` (over
the bound, "1.79×"), ``{step/kernels}`` (the kernels a step launches), and
``{step/expected-share:CLASS}`` (the share of the expected time spent in products,
attention, memory, communication, kernels or step: "17%"), ``{step/efficiency:FACTOR}``
(a factor of the device's efficiency: a share as a percentage, kernel_us in µs).
"""

from __future__ import annotations

import numpy as np

from explorer.core.analysis.expected import Expected, OpClass, expected_for, launches, missing_efficiency
from explorer.core.units import format_share, format_time
from explorer.core.words.claims import Quantity, State

STEP_FIELDS = ("expected", "expected-ratio", "kernels")
PREFIXES = ("expected-share:", "efficiency:")
CLASSES = {"products": OpClass.GEMM, "attention": OpClass.ATTENTION, "memory": OpClass.MEMORY,
           "communication": OpClass.LINK, "kernels": OpClass.KERNELS, "step": OpClass.STEP}


def handles(field: str) -> bool:
    return field in STEP_FIELDS or field.startswith(PREFIXES)


def _expected(state: State) -> Expected:
    a = state.analysis()
    e = expected_for(a)
    if e is None:
        raise KeyError(missing_efficiency(a) or "the step's efficiency is 'bound': no expected time")
    return e


def _kernels(state: State) -> int:
    a = state.analysis()
    return round(float(np.asarray(a.counts) @ launches(a)))


def step_field(state: State, field: str) -> tuple[str, Quantity]:
    """A ``{step/FIELD}`` this module knows (KeyError otherwise)."""
    e = _expected(state)
    if field == "expected":
        text = format_time(e.time_s)
        return text, Quantity("expected step time", e.time_s, text, lambda: _expected(state).time_s, rel=1e-9)
    if field == "expected-ratio":
        text = f"{e.ratio:.2f}×"
        return text, Quantity("expected over bound", e.ratio, text, lambda: _expected(state).ratio, rel=1e-9)
    if field == "kernels":
        count = _kernels(state)
        return f"{count:,}", Quantity("kernels a step launches", count, f"{count:,}", lambda: _kernels(state))
    if field.startswith("expected-share:"):
        name = field.removeprefix("expected-share:")
        if name not in CLASSES:
            raise KeyError(f"unknown class {name!r}: one of {', '.join(CLASSES)}")

        def share() -> float:
            again = _expected(state)
            return again.parts[CLASSES[name]] / again.time_s

        value = share()
        text = format_share(value)
        return text, Quantity(f"share of the expected time in {name}", value, text, share, rel=1e-9)
    name = field.removeprefix("efficiency:")
    if name not in e.efficiency.factors:
        raise KeyError(f"unknown efficiency factor {name!r}")
    value = e.efficiency.value(name)
    text = f"{value:g} µs" if name == "kernel_us" else f"{value:g} ms" if name == "step_ms" \
        else f"{value:g}" if name in ("gemm_tile", "gemm_depth") else format_share(value)
    return text, Quantity(f"efficiency {name}", value, text, lambda: _expected(state).efficiency.value(name))
