"""A step's energy: every device at its TDP (an upper bound) or at the energy constants a
calibration fitted, why the fitted constants do not apply, as a dict for JSON and in words."""

from __future__ import annotations

from typing import Any

from explorer.core.analysis.analysis import Analysis
from explorer.core.analysis.energy import StepEnergy, tdp_bound
from explorer.core.analysis.expected import Expected
from explorer.core.hardware.efficiency import MeasuredEnergy
from explorer.core.units import format_si


def step_energy(a: Analysis, e: Expected | None) -> StepEnergy | None:
    """The TDP × time upper bound of ``a``'s step (``energy.tdp_bound``) at its expected time,
    else its bound; None where the device has no TDP."""
    seconds, time = (e.time_s, "expected") if e is not None else (a.totals.time_s, "bound")
    return tdp_bound(a.hardware, a.params.split.devices, seconds, a.totals.items_per_step, time)


def fitted_energy(a: Analysis, e: Expected | None) -> StepEnergy | None:
    """The step's energy at the constants a calibration of the device fitted to its measured
    power (Choi et al.'s model: each device's FLOPs, main-memory bytes and expected time),
    every device together; None where the expected time's profile keeps none, or where they
    do not describe the step (``fitted_energy_note`` says why)."""
    kept = e.efficiency.energy if e is not None else None
    joules = _fitted_estimate(a, e, kept) if e is not None and kept is not None else None
    if e is None or kept is None or joules is None:
        return None
    return StepEnergy(joules, joules / max(a.totals.items_per_step, 1), joules / e.time_s, "expected",
                      f"{e.efficiency.name}: {kept.constants.source}")


def _fitted_estimate(a: Analysis, e: Expected, kept: MeasuredEnergy) -> float | None:
    """Joules of the step, every device, at the kept constants (None: precisions differ)."""
    if kept.precision != a.params.dtype:
        return None
    per_device = kept.constants.joules(float(a.totals.flops), float(a.totals.bytes), e.time_s)
    joules = per_device * a.params.split.devices
    tdp = a.hardware.specs.tdp_w
    return None if tdp and joules / e.time_s > tdp * a.params.split.devices else joules


def fitted_energy_note(a: Analysis, e: Expected | None) -> str | None:
    """Why a calibration's energy constants are not applied to this step (None: they are,
    or there are none)."""
    kept = e.efficiency.energy if e is not None else None
    if e is None or kept is None or fitted_energy(a, e) is not None:
        return None
    if kept.precision != a.params.dtype:
        return (f"the calibration's energy constants are for {kept.precision} arithmetic, the step runs "
                f"{a.params.dtype}: a FLOP of one costs what a FLOP of the other does only by chance")
    power = kept.constants.joules(float(a.totals.flops), float(a.totals.bytes), e.time_s) / e.time_s
    return (f"the calibration's energy constants give {format_si(power, 'W')} a device, above the "
            f"{format_si(a.hardware.specs.tdp_w or 0.0, 'W')} TDP: a power cap would stretch the step, which "
            "the model does not follow")


def energy_dict(a: Analysis, e: Expected | None) -> dict[str, Any]:
    """``energy_j`` (the step, every device), ``joules_per_token`` (or per image) and
    ``power_w``: every device at its TDP for the step, an upper bound, with its source; and
    ``fitted``, the same at a calibration's fitted constants where the expected time's
    profile keeps them."""
    s, per_item = step_energy(a, e), f"joules_per_{a.totals.item_unit[:-1]}"
    fitted = fitted_energy(a, e)
    kept = e.efficiency.energy if e is not None else None  # (there when ``fitted`` is)
    fitted_dict = None
    if fitted is not None and kept is not None:
        fitted_dict = {"energy_j": fitted.joules, per_item: fitted.joules_per_item, "power_w": fitted.power_w,
                       "constants": {"flop_j": kept.constants.flop_j, "byte_j": kept.constants.byte_j,
                                     "constant_w": kept.constants.constant_w, "precision": kept.precision},
                       "source": fitted.source}
    out: dict[str, Any] = {"fitted_note": fitted_energy_note(a, e), "fitted": fitted_dict}
    if s is None:
        return {"energy_j": None, per_item: None, "power_w": None, "upper_bound": None,
                "source": f"no energy data: the catalogue gives {a.hardware.name} no TDP", **out}
    return {"energy_j": s.joules, per_item: s.joules_per_item,
            "power_w": s.power_w, "upper_bound": True,
            "source": f"every device at its TDP ({s.source}) for the {s.time} step time: an upper bound; "
                      "no per-operation energy is sourced for any catalogue device", **out}


def energy_words(a: Analysis, e: Expected | None) -> str:
    """"; 2.1 J a token at this machine's fitted constants" (a calibration's, where the
    expected time uses one), else "; at most 4.6 J a token at TDP", else nothing."""
    unit = a.totals.item_unit[:-1]
    fitted = fitted_energy(a, e)
    if fitted is not None:
        return (f"; {format_si(fitted.joules_per_item, 'J')} a {unit}, {format_si(fitted.power_w, 'W')} "
                "at this machine's fitted energy constants")
    bound = step_energy(a, e)
    return "" if bound is None else f"; at most {format_si(bound.joules_per_item, 'J')} a {unit} at TDP"
