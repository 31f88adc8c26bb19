"""The energy constants a calibration fitted to its kernels (``energy`` in a calibrated
efficiency file, ``efficiency.Efficiency.energy``): joules a FLOP of one precision and a byte,
watts at rest, and how each is read from the file."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from explorer.core.files.datafile import Fields
from explorer.core.hardware.energy_constants import EnergyConstants
from explorer.core.units import DTYPE_BYTES


@dataclass(frozen=True)
class MeasuredEnergy:
    """Energy constants fitted to a calibration's kernels, ε_flop for ``precision``."""

    constants: EnergyConstants
    precision: str


ENERGY_LIMITS = {"flop_j": (0.0, 1e-6), "byte_j": (0.0, 1e-6), "constant_w": (0.0, 1e5)}


def energy_mapping(fields: Fields, raw: object) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise fields.error("energy", "expected the fitted constants: precision, flop_j, byte_j, constant_w, "
                                     f"source (leave it out where none were fitted), got {raw!r}")
    return raw


def _number_of(f: Fields, name: str, raw: object) -> float:
    """``raw`` as a finite number, or an error naming ``name`` (and YAML's text trap)."""
    if isinstance(raw, str):  # YAML 1.1 reads 1e-12, without a point, as text
        raise f.error(name, "expected a number: write it with a point and a signed exponent, as 1.0e-12")
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not math.isfinite(raw):
        raise f.error(name, f"expected a finite number, got {raw!r}")
    return float(raw) + 0.0  # (−0.0 is 0)


def read_energy(f: Fields) -> MeasuredEnergy:
    """``energy: {precision, flop_j, byte_j, constant_w, errors: [three], source}``: joules a
    FLOP and a byte (above 0, below a microjoule), watts at rest (0 to 100 kW)."""
    values = []
    for name, (low, high) in ENERGY_LIMITS.items():
        value = _number_of(f, name, f.raw(name))
        if not (low < value < high or (name == "constant_w" and value == 0)):  # (π₀ may fit to 0)
            raise f.error(name, f"expected a number above {low:g} and below {high:g}, got {value:g}")
        values.append(value)
    errors = f.raw("errors", required=False)
    if errors is not None and (not isinstance(errors, list) or len(errors) != 3):
        raise f.error("errors", "expected three standard errors (ε_flop, ε_byte, π₀), none below 0")
    spread: tuple[float, float, float] | None = None
    if errors is not None:
        first, second, third = (_number_of(f, "errors", v) for v in errors)
        spread = (first, second, third)
    if spread is not None and min(spread) < 0:
        raise f.error("errors", "expected three standard errors (ε_flop, ε_byte, π₀), none below 0")
    precision = f.text("precision", choices=sorted(DTYPE_BYTES))
    flop_j, byte_j, constant_w = values
    constants = EnergyConstants(flop_j, byte_j, constant_w, spread, f.text("source"))
    f.finish()
    return MeasuredEnergy(constants, precision)
