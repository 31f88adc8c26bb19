"""The three constants of Choi et al.'s energy model (``analysis.energy``): joules a FLOP,
joules a byte moved to or from memory, and the constant power drawn whatever the chip does.
Here, below the analysis, so that a device's calibration file (``efficiency``) can keep
them."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class EnergyConstants:
    """ε_flop (J/FLOP), ε_byte (J/byte), π₀ (W), each with its standard error where fitted."""

    flop_j: float
    byte_j: float
    constant_w: float
    errors: tuple[float, float, float] | None = None  # of the three, in their units
    source: str = ""

    @property
    def balance(self) -> float:
        """The energy balance: FLOP/byte where a FLOP's energy equals a byte's share of it."""
        return self.byte_j / self.flop_j

    def joules(self, flops: float, moved: float, seconds: float) -> float:
        return flops * self.flop_j + moved * self.byte_j + self.constant_w * seconds


def describe(constants: EnergyConstants) -> str:
    """"ε_flop 12 ± 3 pJ/FLOP, ε_byte 410 ± 40 pJ/byte, π₀ 38 ± 2 W (balance 34 FLOP/byte)"."""
    e_flop, e_byte, e_w = constants.errors or (math.nan, math.nan, math.nan)
    balance = f"{constants.balance:.3g} FLOP/byte" if constants.flop_j > 0 else "undefined: ε_flop ≤ 0"
    return (f"ε_flop {constants.flop_j * 1e12:.3g} ± {e_flop * 1e12:.2g} pJ/FLOP, "
            f"ε_byte {constants.byte_j * 1e12:.3g} ± {e_byte * 1e12:.2g} pJ/byte, "
            f"π₀ {constants.constant_w:.3g} ± {e_w:.2g} W (energy balance {balance})")
