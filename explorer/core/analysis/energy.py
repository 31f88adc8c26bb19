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
from explorer.core.hardware.operation_energy import floor_byte_joules, floor_flop_joules

__all__ = [
    "IDLE_SHARE",
    "POWER_MODEL",
    "EnergyConstants",
    "FitError",
    "Sample",
    "StepEnergy",
    "describe",
    "estimate",
    "fit",
    "lower_bound_joules",
    "power_w",
]


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


# The power model (Choi et al.'s, its constants in shares of the TDP): a device draws
#
#     P = TDP × min(1, IDLE_SHARE + (1 − IDLE_SHARE) × occupancy)
#
# where occupancy is (compute time + memory time) / step time: the share of the step its
# arithmetic keeps the compute roof busy plus the share its bytes keep the memory roof busy
# (the two run at once and each draws power: SMs and HBM), each time at its datasheet peak.
# The energy of a step is then TDP × (IDLE_SHARE × T + (1 − IDLE_SHARE) × (compute + memory
# time)) below the TDP: ε_flop = (1 − IDLE_SHARE) × TDP / peak, ε_byte = (1 − IDLE_SHARE) ×
# TDP / bandwidth, π₀ = IDLE_SHARE × TDP, and only π₀'s term grows with the step's time.
# IDLE_SHARE, the one fitted constant, is what a device serving an LLM draws with both roofs
# idle (clocks up, memory refreshed, the board): fitted by least squares on the logarithm of
# the ratio to measured average GPU power at the measured time per token (ML.ENERGY's v2 and
# v3 leaderboards on A100, H100 and B200, and chuyishang/inference-energy's vLLM runs on an
# A100 80 GB, an RTX 6000 Ada and an RTX 3090: resources/validation/published-energy.yaml,
# each row's work costed as serve costs it, explorer/core/analysis/energy_validation.py);
# fitted without each device in turn it lies within 0.225–0.305.
IDLE_SHARE = 0.25
POWER_MODEL = (f"power = TDP × min(1, {IDLE_SHARE:g} + {1 - IDLE_SHARE:g} × occupancy), occupancy the "
               "compute roof's time plus the memory roof's over the step time, the idle share fitted to "
               "published measurements of serving's GPU power")


def power_w(tdp_w: float, occupancy: float, idle_share: float = IDLE_SHARE) -> float:
    """A device's average power at ``occupancy`` (the compute roof's time plus the memory
    roof's over the step's time; above 1 the device is at its TDP); ``idle_share`` the
    model's constant (another only to fit it)."""
    return tdp_w * (idle_share + (1.0 - idle_share) * min(max(occupancy, 0.0), 1.0))


def lower_bound_joules(flops: float, bytes_: float) -> float:
    """No less than what ``flops`` and ``bytes_`` (main memory) cost at the floor operation
    energies (``operation_energy.floor_flop_joules``, ``floor_byte_joules``): no constant
    power, no time, only the operations."""
    return flops * floor_flop_joules() + bytes_ * floor_byte_joules()


@dataclass(frozen=True)
class StepEnergy:
    """What a step costs: ``joules`` the estimate (the power model's average power over the
    step's time) and ``lower_j`` a lower bound (its FLOPs and bytes at the floor operation
    energies, no constant power), every device together."""

    joules: float  # the estimate, the step, all its devices together
    joules_per_item: float  # per token (or image) the step produces or processes
    power_w: float  # the estimate's average power, the devices together
    time: str  # whose time: "expected" or "bound"
    source: str  # where the TDP comes from
    lower_j: float = 0.0  # the lower bound, the step, all its devices together
    lower_per_item: float = 0.0
    activity: float = 1.0  # occupancy: the roofs' busy time over the step's time (at most 1 here)
    method: str = POWER_MODEL


def estimate(hardware: Hardware, devices: int, seconds: float, busy_seconds: float, items: int, time: str,
             flops: float = 0.0, bytes_: float = 0.0) -> StepEnergy | None:
    """The power model's estimate of a step of ``seconds`` on ``devices`` devices producing
    ``items``, each device's roofs busy ``busy_seconds`` (its compute time plus its memory
    time, each at the datasheet peak), doing ``flops`` and moving ``bytes_``, with its lower
    bound; None where the catalogue gives the device no TDP."""
    tdp = hardware.specs.tdp_w
    if not tdp:
        return None
    source = (hardware.specs.tdp_provenance or hardware.specs.provenance).url
    activity = min(busy_seconds / seconds, 1.0) if seconds > 0 else 1.0
    power = power_w(tdp, activity) * devices
    joules, lower = power * seconds, lower_bound_joules(flops, bytes_) * devices
    n = max(items, 1)
    return StepEnergy(joules, joules / n, power, time, source, lower, lower / n, activity)
