"""A step's energy: a lower bound (its operations at the floor operation energies), an
estimate (the power model's average power over the step's time) and, where a calibration
fitted them, the energy constants of this machine; why the fitted constants do not apply; as a
dict for JSON and in words."""

from __future__ import annotations

from typing import Any

from explorer.core.analysis.analysis import Analysis
from explorer.core.analysis.energy import StepEnergy, estimate
from explorer.core.analysis.expected import Expected
from explorer.core.hardware.efficiency import MeasuredEnergy
from explorer.core.model.applicability import Phase
from explorer.core.units import format_si


def device_busy_s(a: Analysis) -> float:
    """One device's seconds at its roofs in ``a``'s step (compute time plus memory time). In
    inference the totals run every pipeline stage in turn, one device's each: a device is busy
    for its stage's, the totals over PP (in training they are already one stage's). A CPU a
    run uses part of (``threads``) is busy in that share of its cores: the power model's
    activity is the chip's, its idle power whole."""
    t = a.totals
    stages = a.params.split.pp if a.params.phase != Phase.TRAIN else 1
    specs = a.hardware.specs
    cores = specs.cores / specs.cores_of if specs.cores_of else 1.0
    return (t.compute_time_s + t.memory_time_s) / stages * cores


def step_energy(a: Analysis, e: Expected | None) -> StepEnergy | None:
    """The estimate of ``a``'s step (``energy.estimate``) at its expected time, else its bound,
    with its lower bound; None where the device has no TDP."""
    seconds, time = (e.time_s, "expected") if e is not None else (a.totals.time_s, "bound")
    t = a.totals
    return estimate(a.hardware, a.params.split.devices, seconds, device_busy_s(a),
                    t.items_per_step, time, float(t.flops), float(t.bytes))


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
    """``joules_estimate`` (the step, every device), ``joules_per_token_estimate`` (or per
    image) and ``power_w_estimate`` from the power model named in ``method``;
    ``joules_lower_bound`` and ``joules_per_token_lower_bound``, the step's operations at the
    floor operation energies; and ``fitted``, at a calibration's fitted constants where the
    expected time's profile keeps them."""
    unit = a.totals.item_unit[:-1]
    s, per_item = step_energy(a, e), f"joules_per_{unit}"
    fitted = fitted_energy(a, e)
    kept = e.efficiency.energy if e is not None else None  # (there when ``fitted`` is)
    fitted_dict = None
    if fitted is not None and kept is not None:
        fitted_dict = {"energy_j": fitted.joules, per_item: fitted.joules_per_item, "power_w": fitted.power_w,
                       "constants": {"flop_j": kept.constants.flop_j, "byte_j": kept.constants.byte_j,
                                     "constant_w": kept.constants.constant_w, "precision": kept.precision},
                       "source": fitted.source}
    out: dict[str, Any] = {"fitted_note": fitted_energy_note(a, e), "fitted": fitted_dict}
    lower_method = ("the step's FLOPs and main-memory bytes at the floor operation energies (an 8-bit "
                    "integer multiply-add a FLOP pair, HBM2's access energy a byte), no constant power")
    if s is None:
        return {"joules_estimate": None, f"{per_item}_estimate": None, "power_w_estimate": None,
                "joules_lower_bound": None, f"{per_item}_lower_bound": None,
                "method": f"no energy data: the catalogue gives {a.hardware.name} no TDP", **out}
    return {"joules_estimate": s.joules, f"{per_item}_estimate": s.joules_per_item,
            "power_w_estimate": s.power_w, "activity": s.activity, "time": s.time,
            "joules_lower_bound": s.lower_j, f"{per_item}_lower_bound": s.lower_per_item,
            "method": f"estimate: {s.method}, over the {s.time} step time (TDP: {s.source}); "
                      f"lower bound: {lower_method}", **out}


def energy_words(a: Analysis, e: Expected | None) -> str:
    """"; 2.1 J a token at this machine's fitted constants" (a calibration's, where the
    expected time uses one), else "; about 0.11 J a token (at least 0.016 J)", else nothing."""
    unit = a.totals.item_unit[:-1]
    fitted = fitted_energy(a, e)
    if fitted is not None:
        return (f"; {format_si(fitted.joules_per_item, 'J')} a {unit}, {format_si(fitted.power_w, 'W')} "
                "at this machine's fitted energy constants")
    s = step_energy(a, e)
    return "" if s is None else (f"; about {format_si(s.joules_per_item, 'J')} a {unit} (power model), "
                                 f"at least {format_si(s.lower_per_item, 'J')}")


def energy_lines(a: Analysis, e: Expected | None) -> list[str]:
    """The estimate and the lower bound, each named, in a line each (none without a TDP)."""
    s, unit = step_energy(a, e), a.totals.item_unit[:-1]
    if s is None:
        return [f"energy: no data (the catalogue gives {a.hardware.name} no TDP)"]
    tdp, each = a.hardware.specs.tdp_w or 0.0, s.power_w / a.params.split.devices
    return [f"energy estimate {format_si(s.joules, 'J')} a step, {format_si(s.joules_per_item, 'J')} "
            f"a {unit} (power model: {format_si(each, 'W')} a device, {each / tdp:.0%} of its "
            f"{format_si(tdp, 'W')} TDP, its roofs busy {s.activity:.0%} of the {s.time} time)",
            f"energy lower bound {format_si(s.lower_j, 'J')} a step, {format_si(s.lower_per_item, 'J')} "
            f"a {unit} (its FLOPs and bytes at the floor operation energies, no constant power)"]
