"""Roofline math, vectorised with NumPy.

Conventions (docs/accounting.md, shown in the UI too):
- intensity = FLOPs / bytes moved to or from the memory level in question;
- attainable FLOP/s = min(peak, intensity × bandwidth);
- ridge point = peak / bandwidth, the intensity where the two roofs meet;
- predicted time = max(FLOPs / peak, bytes / bandwidth): compute and memory
  traffic overlap perfectly, the slower of the two decides;
- an op is "memory"-bound when its memory time exceeds its compute time
  (equivalently its intensity is below the ridge point), else "compute"-bound.

Every function accepts scalars or arrays and broadcasts, so a sweep over
thousands of points, roofs or devices is one call.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np
from numpy.typing import ArrayLike, NDArray

from explorer.core.hardware.hardware import Hardware


class BoundKind(StrEnum):
    """What limits an op or a step (also a roof's kind: compute roofs and memory roofs). A
    StrEnum: it prints, compares and is written to JSON as its word."""

    MEMORY = "memory"
    COMPUTE = "compute"
    COMMUNICATION = "communication"  # an op or step limited by the links between devices


MEMORY, COMPUTE, COMMUNICATION = BoundKind.MEMORY, BoundKind.COMPUTE, BoundKind.COMMUNICATION


def attainable(intensity: ArrayLike, peak_flops: ArrayLike, bandwidth: ArrayLike) -> NDArray[np.float64]:
    """Attainable FLOP/s at ``intensity`` FLOP/byte under one compute and one bandwidth roof."""
    x = np.asarray(intensity, dtype=np.float64)
    return np.minimum(np.asarray(peak_flops, dtype=np.float64), x * np.asarray(bandwidth, dtype=np.float64))


def ridge_point(peak_flops: ArrayLike, bandwidth: ArrayLike) -> NDArray[np.float64]:
    """Intensity (FLOP/byte) at which the compute and bandwidth roofs meet."""
    return np.asarray(peak_flops, dtype=np.float64) / np.asarray(bandwidth, dtype=np.float64)


def compute_time(flops: ArrayLike, peak_flops: ArrayLike) -> NDArray[np.float64]:
    return np.asarray(flops, dtype=np.float64) / np.asarray(peak_flops, dtype=np.float64)


def memory_time(bytes_moved: ArrayLike, bandwidth: ArrayLike) -> NDArray[np.float64]:
    return np.asarray(bytes_moved, dtype=np.float64) / np.asarray(bandwidth, dtype=np.float64)


def predicted_time(flops: ArrayLike, bytes_moved: ArrayLike, peak_flops: ArrayLike,
                   bandwidth: ArrayLike) -> NDArray[np.float64]:
    """Seconds for work that overlaps compute and memory traffic perfectly."""
    return np.maximum(compute_time(flops, peak_flops), memory_time(bytes_moved, bandwidth))


def is_memory_bound(flops: ArrayLike, bytes_moved: ArrayLike, peak_flops: ArrayLike,
                    bandwidth: ArrayLike) -> NDArray[np.bool_]:
    """True where moving the bytes takes longer than doing the FLOPs."""
    return memory_time(bytes_moved, bandwidth) > compute_time(flops, peak_flops)


def bound_labels(memory_bound: ArrayLike) -> NDArray[np.str_]:
    """``"memory"`` / ``"compute"`` for each element of a boolean array."""
    return np.where(np.asarray(memory_bound, dtype=bool), MEMORY, COMPUTE)


@dataclass(frozen=True)
class Roof:
    """One ceiling: a compute roof (FLOP/s) or a bandwidth roof (bytes/s)."""

    label: str
    value: float
    derived: bool = False
    what_if: bool = False  # moved on the chart, not the datasheet value


@dataclass(frozen=True)
class RoofSegment:
    """A drawable piece of a roof in data coordinates (FLOP/byte, FLOP/s)."""

    roof: Roof
    kind: str  # "compute" or "bandwidth"
    x: tuple[float, float]
    y: tuple[float, float]


@dataclass(frozen=True)
class Ceilings:
    """A device's roofs: one per precision and unit, one per memory level with a bandwidth.

    The first bandwidth roof is the main memory's.
    """

    compute: tuple[Roof, ...]
    bandwidth: tuple[Roof, ...]

    @classmethod
    def from_hardware(cls, hardware: Hardware,
                      precisions: tuple[str, ...] | None = None) -> Ceilings:
        peaks = [p for p in hardware.peaks if precisions is None or p.precision in precisions]
        peaks.sort(key=lambda p: p.flops_per_s, reverse=True)
        levels = sorted(
            (m for m in hardware.memory if m.bandwidth_bytes_per_s is not None),
            key=lambda m: (not m.main, m.bandwidth_bytes_per_s),
        )
        return cls(
            compute=tuple(Roof(p.label, p.flops_per_s, p.provenance.derived, p.provenance.what_if)
                          for p in peaks),
            bandwidth=tuple(Roof(m.name, rate, m.provenance.derived, m.provenance.what_if)
                            for m in levels if (rate := m.bandwidth_bytes_per_s) is not None),
        )

    @property
    def compute_values(self) -> NDArray[np.float64]:
        return np.array([r.value for r in self.compute], dtype=np.float64)

    @property
    def bandwidth_values(self) -> NDArray[np.float64]:
        return np.array([r.value for r in self.bandwidth], dtype=np.float64)

    def ridges(self) -> NDArray[np.float64]:
        """Ridge points, shape (compute roofs, bandwidth roofs)."""
        return ridge_point(self.compute_values[:, None], self.bandwidth_values[None, :])

    def attainable(self, intensity: ArrayLike, compute: int = 0, bandwidth: int = 0) -> NDArray[np.float64]:
        """Attainable FLOP/s under compute roof ``compute`` and bandwidth roof ``bandwidth``.

        Defaults: the highest compute roof and the main memory.
        """
        return attainable(intensity, self.compute[compute].value, self.bandwidth[bandwidth].value)

    def predicted_time(self, flops: ArrayLike, bytes_per_level: ArrayLike,
                       compute: int = 0) -> NDArray[np.float64]:
        """Seconds under compute roof ``compute`` and every bandwidth roof at once.

        ``bytes_per_level`` has the bandwidth roofs on its last axis (bytes moved through
        each level); the slowest of the compute time and each level's time decides.
        """
        moved = np.asarray(bytes_per_level, dtype=np.float64)
        if moved.shape[-1:] != (len(self.bandwidth),):
            raise ValueError(f"bytes_per_level needs a last axis of {len(self.bandwidth)} "
                             f"(one per bandwidth roof), got shape {moved.shape}")
        level_times = moved / self.bandwidth_values
        slowest_level: NDArray[np.float64] = level_times.max(axis=-1)
        return np.maximum(compute_time(flops, self.compute[compute].value), slowest_level)

    def limiting_roof(self, flops: ArrayLike, bytes_per_level: ArrayLike,
                      compute: int = 0) -> NDArray[np.str_]:
        """Label of the roof that decides each prediction: the compute roof or a memory level."""
        moved = np.asarray(bytes_per_level, dtype=np.float64)
        times = np.concatenate(
            [np.asarray(compute_time(flops, self.compute[compute].value))[..., None],
             moved / self.bandwidth_values], axis=-1)
        labels = np.array([self.compute[compute].label, *(r.label for r in self.bandwidth)])
        limiting: NDArray[np.str_] = labels[np.argmax(times, axis=-1)]
        return limiting

    def segments(self, x_min: float, x_max: float) -> list[RoofSegment]:
        """Line pieces to draw on [x_min, x_max]: every compute roof starts at its ridge
        with the main memory, every bandwidth roof ends at its ridge with the top roof."""
        if not (0 < x_min < x_max):
            raise ValueError(f"need 0 < x_min < x_max, got {x_min}, {x_max}")
        out: list[RoofSegment] = []
        main_bw = self.bandwidth[0].value
        for roof in self.compute:
            start = min(max(roof.value / main_bw, x_min), x_max)
            out.append(RoofSegment(roof, COMPUTE, (start, x_max), (roof.value, roof.value)))
        top = self.compute[0].value
        for roof in self.bandwidth:
            end = min(max(top / roof.value, x_min), x_max)
            out.append(RoofSegment(roof, "bandwidth", (x_min, end),
                                   (x_min * roof.value, end * roof.value)))
        return out
