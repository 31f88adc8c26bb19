"""The energy roofline of Choi, Bedard, Fowler and Vuduc ("A roofline model of energy",
IPDPS 2013, https://doi.org/10.1109/IPDPS.2013.77): energy efficiency (FLOP/J) against
arithmetic intensity. A kernel of W FLOPs on Q bytes taking T seconds costs
W · ε_flop + Q · ε_byte + π₀ · T (``energy``); per FLOP, at intensity I = W / Q,

    ε_flop + ε_byte / I + π₀ · T / W,   with T / W = max(1 / peak, 1 / (I · bandwidth))

on its time roofline. Efficiency rises with intensity towards 1 / (ε_flop + π₀ / peak);
without constant power it is half its ceiling at the **energy balance** ε_byte / ε_flop,
the intensity where a byte's energy equals its arithmetic's (the time roofline's ridge is
where their times are equal). Their power cap, which stretches the time of a kernel whose
power would pass it, is not modelled.

Two kinds of roof are drawn:

- **circuit energies** (``operation_energy``: Horowitz, ISSCC 2014, a 45 nm chip): orders of
  magnitude for teaching, no constant power, the same for every device;
- **a run of this machine with measured power**: the constants fitted to its kernels
  (``energy.fit``), its time roof its own best measured rates.

The workload's ops are placed at the circuit energies, where each lies on the curve at its
intensity; measured kernels at their own FLOPs over their measured joules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from explorer.core.analysis.energy import EnergyConstants
from explorer.core.analysis.terms import once_per_step
from explorer.core.hardware.operation_energy import byte_joules, flop_joules

if TYPE_CHECKING:
    from explorer.core.analysis.analysis import Analysis

CIRCUIT_SOURCE = "https://doi.org/10.1109/ISSCC.2014.6757323"


@dataclass(frozen=True)
class EnergyRoof:
    """One energy roofline: its constants and, for the constant power's term, the time
    roofline it runs on (no peak: the constant power is not counted)."""

    label: str
    constants: EnergyConstants
    peak_flops: float | None = None
    bandwidth: float | None = None
    measured: bool = False  # fitted to measurements of this machine
    precision: str = ""  # of the arithmetic ε_flop prices

    def flops_per_joule(self, intensity: ArrayLike) -> Any:
        """FLOP/J at ``intensity`` (FLOP/byte; a number or an array)."""
        c, peak, bandwidth = self.constants, self.peak_flops, self.bandwidth
        per_flop = c.flop_j + c.byte_j / np.asarray(intensity, dtype=float)
        if peak and bandwidth and c.constant_w > 0:  # (``timed``)
            per_flop = per_flop + c.constant_w * np.maximum(
                1.0 / peak, 1.0 / (np.asarray(intensity, dtype=float) * bandwidth))
        return 1.0 / per_flop

    @property
    def timed(self) -> bool:
        """Whether the constant power is counted (a time roof is known and π₀ > 0)."""
        return bool(self.peak_flops and self.bandwidth and self.constants.constant_w > 0)

    @property
    def ceiling(self) -> float:
        """FLOP/J as intensity grows without end."""
        c, peak = self.constants, self.peak_flops
        return 1.0 / (c.flop_j + (c.constant_w / peak if peak and self.timed else 0.0))

    @property
    def balance(self) -> float:
        return self.constants.balance


def circuit_roof(dtype: str) -> EnergyRoof | None:
    """The roof at the 45 nm circuit energies for arithmetic of ``dtype`` (None: the table
    has no arithmetic of that width, fp8 or fp64)."""
    try:
        per_flop = flop_joules(dtype)
    except KeyError:
        return None
    constants = EnergyConstants(per_flop, byte_joules(), 0.0, source=CIRCUIT_SOURCE)
    return EnergyRoof(f"45 nm circuit energies, {dtype} (Horowitz, ISSCC 2014)", constants, precision=dtype)


def measured_roof(label: str, constants: EnergyConstants, peak_flops: float | None,
                  bandwidth: float | None, precision: str = "") -> EnergyRoof | None:
    """A run's roof from its fitted constants (None where the fit gives no positive
    ε_flop or ε_byte, or a negative π₀: too few or too alike kernels, or a noisy meter, for
    the model to mean anything)."""
    if not (constants.flop_j > 0 and constants.byte_j > 0 and constants.constant_w >= 0):
        return None
    return EnergyRoof(label, constants, peak_flops, bandwidth, measured=True, precision=precision)


@dataclass(frozen=True)
class EnergyPoint:
    """A kernel or step in the energy picture."""

    name: str
    role: str  # the op's role (its colour), "step" or "measured"
    intensity: float  # FLOP/byte
    flops_per_joule: float
    joules: float  # one device's share of the op's occurrences, of the step, or one launch


def workload_points(a: Analysis, roof: EnergyRoof) -> list[EnergyPoint]:
    """The step's ops with arithmetic and the whole step, one device's share as the
    analysis counts it (a pipeline stage's share of the layers, the once-a-step ops whole),
    at ``roof``'s energies and each op's bound time. The step counts every op's bytes, those
    without arithmetic too (an embedding's rows), but not communication's: its bytes cross a
    link, not memory."""
    points, total_flops, total_bytes, total_j = [], 0.0, 0.0, 0.0
    c, once = roof.constants, once_per_step(a.ops)
    for o, flops, moved, seconds, count, link, whole in zip(a.ops, a.flops, a.bytes, a.time_s, a.counts,
                                                            a.links, once, strict=True):
        if link is not None:
            continue
        share = int(count) / (1 if whole else a.params.pp)
        w, q, t = float(flops) * share, float(moved) * share, float(seconds) * share
        joules = w * c.flop_j + q * c.byte_j + (c.constant_w * t if roof.timed else 0.0)
        if w > 0 and q > 0:
            points.append(EnergyPoint(o.name, str(o.role), w / q, w / joules, joules))
        total_flops, total_bytes, total_j = total_flops + w, total_bytes + q, total_j + joules
    if total_flops > 0 and total_bytes > 0:
        points.append(EnergyPoint("step", "step", total_flops / total_bytes, total_flops / total_j, total_j))
    return points


@dataclass(frozen=True)
class EnergyView:
    """What the energy picture shows: its roofs (the circuit energies' first, where the
    workload's precision has them, then each measured run's), the workload's ops and step at
    the circuit energies, measured kernels (the roof they belong to, the point), the primary
    device's time ridge for comparison, and why anything is missing."""

    title: str
    roofs: tuple[EnergyRoof, ...]
    workload: tuple[EnergyPoint, ...]
    measured: tuple[tuple[str, EnergyPoint], ...]
    ridge: tuple[str, float] | None  # (device, FLOP/byte) where its time roofline bends
    notes: tuple[str, ...] = ()

    @property
    def step(self) -> EnergyPoint | None:
        return next((p for p in self.workload if p.role == "step"), None)
