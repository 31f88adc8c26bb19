"""The energy of running a kernel or a step, after Choi, Bedard, Fowler and Vuduc, "A roofline
model of energy" (IPDPS 2013, https://doi.org/10.1109/IPDPS.2013.77):

    E = W · ε_flop + Q · ε_byte + π₀ · T

W FLOPs at ε_flop joules each, Q bytes moved to or from memory at ε_byte joules each, and a
constant power π₀ (what the chip draws whatever it does: leakage, clocks, the rest of the
board) over the T seconds it runs. Their ratio ε_byte / ε_flop is the **energy balance**:
the intensity (FLOP/byte) at which arithmetic and data movement cost the same energy, the
energy roofline's counterpart of the time roofline's ridge.

``fit`` recovers the three constants from measured kernels (each its FLOPs, bytes, time
and joules) by least squares, with their standard errors: a sweep of intensities tells
the FLOP term from the byte term, and kernels reaching different shares of the roofs (so
that time does not follow FLOPs or bytes alone) the constant power. Where every kernel
runs on the roof, time is proportional to bytes below the ridge and to FLOPs above it,
and the errors say how little the constant power is then pinned down.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from explorer.core.hardware.energy_constants import EnergyConstants, describe
from explorer.core.hardware.hardware import Hardware

__all__ = ["EnergyConstants", "FitError", "Sample", "StepEnergy", "describe", "fit", "tdp_bound"]


@dataclass(frozen=True)
class Sample:
    """One measured kernel launch: its work, its time and the energy it took."""

    flops: float
    bytes: float
    seconds: float
    joules: float


class FitError(ValueError):
    """The samples cannot determine the three constants; the message says why."""


def fit(samples: list[Sample], source: str = "") -> EnergyConstants:
    """ε_flop, ε_byte and π₀ by least squares over ``samples`` (at least four, spanning
    intensities), with standard errors from the residuals."""
    if len(samples) < 4:
        raise FitError(f"fitting three energy constants needs at least four kernels, got {len(samples)}")
    x = np.array([[s.flops, s.bytes, s.seconds] for s in samples], dtype=float)
    y = np.array([s.joules for s in samples], dtype=float)
    scale = np.abs(x).max(axis=0)
    if np.any(scale == 0):
        raise FitError("every kernel did no arithmetic, moved no bytes or took no time: the constants "
                       "cannot be told apart")
    scaled = x / scale
    coefficients, _, rank, _ = np.linalg.lstsq(scaled, y, rcond=None)
    if rank < 3:
        raise FitError("the kernels do not vary enough (their FLOPs, bytes and times are "
                       "proportional): sweep the intensity to tell the constants apart")
    residual = y - scaled @ coefficients
    variance = float(residual @ residual) / (len(samples) - 3)
    covariance = variance * np.linalg.inv(scaled.T @ scaled)
    values = coefficients / scale
    e = [float(math.sqrt(max(c, 0.0)) / k) for c, k in zip(np.diag(covariance), scale, strict=True)]
    return EnergyConstants(float(values[0]), float(values[1]), float(values[2]), (e[0], e[1], e[2]), source)


@dataclass(frozen=True)
class StepEnergy:
    """At most what a step costs: every device at its TDP for the step's time (Choi et al.'s
    power cap as the whole bill). No catalogue device has sourced ε_flop, ε_byte and π₀, so
    this upper bound is what a prediction can say; ``fit`` gives the constants of this
    machine from its own kernels."""

    joules: float  # the step, all its devices together
    joules_per_item: float  # per token (or image) the step produces or processes
    power_w: float  # the devices' TDPs together
    time: str  # whose time: "expected" or "bound"
    source: str  # where the TDP comes from


def tdp_bound(hardware: Hardware, devices: int, seconds: float, items: int, time: str) -> StepEnergy | None:
    """The TDP × time upper bound of a step of ``seconds`` on ``devices`` devices producing
    ``items``; None where the catalogue gives the device no TDP."""
    tdp = hardware.specs.tdp_w
    if not tdp:
        return None
    source = (hardware.specs.tdp_provenance or hardware.specs.provenance).url
    joules = tdp * devices * seconds
    return StepEnergy(joules, joules / max(items, 1), tdp * devices, time, source)
