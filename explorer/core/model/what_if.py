"""A what-if: a device's roofs scaled by the user (a dragged bandwidth or peak, a Little's-law
cap on the bytes in flight), kept in the session and applied to the catalogue's device."""

from __future__ import annotations

import math
from collections.abc import Container, Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol

from explorer.core.files.datafile import Fields, brief
from explorer.core.hardware.hardware import Hardware, MemoryLevel, Provenance
from explorer.core.hardware.littles_law import NoLatencyError, effective_bandwidth, latency_of
from explorer.core.units import BYTES, format_bytes, format_time

WHAT_IF_RANGE = (1e-3, 1e3)  # a what-if scales a roof by at most a factor 1000 either way


def _check_scale(name: str, value: float) -> None:
    low, high = WHAT_IF_RANGE
    # compared, not converted: an integer of 400 digits (YAML reads it) holds no float; NaN fails
    if not (isinstance(value, int | float) and not isinstance(value, bool) and low <= value <= high):
        raise ValueError(f"{name} must be between {low:g} and {high:g}, got {brief(value)}")


class _Marking(Protocol):
    """Marks a provenance as a what-if's (``formula``: how the number was derived)."""

    def __call__(self, provenance: Provenance, formula: str = ...) -> Provenance: ...


@dataclass(frozen=True)
class WhatIf:
    """Scale factors applied to one device's roofs: its main-memory bandwidth, and each
    compute peak by label (``"bf16 matrix"``)."""

    bandwidth_scale: float = 1.0
    peak_scales: tuple[tuple[str, float], ...] = ()
    # Little's law: main-memory bandwidth capped at in_flight / latency (None: no cap).
    in_flight_bytes: float | None = None

    def __post_init__(self) -> None:
        _check_scale("bandwidth_scale", self.bandwidth_scale)
        if self.in_flight_bytes is not None:
            if not (math.isfinite(self.in_flight_bytes) and self.in_flight_bytes >= 1):
                raise ValueError(f"bytes in flight must be at least 1, got {self.in_flight_bytes!r}")
            object.__setattr__(self, "in_flight_bytes", float(self.in_flight_bytes))
        for label, value in self.peak_scales:
            _check_scale(f"peak_scale of {label}", value)
        # Plain floats (a drag hands NumPy scalars), so the session saves as YAML.
        object.__setattr__(self, "bandwidth_scale", float(self.bandwidth_scale))
        object.__setattr__(self, "peak_scales", tuple((str(k), float(v)) for k, v in self.peak_scales))

    @property
    def active(self) -> bool:
        return (self.bandwidth_scale != 1.0 or any(v != 1.0 for _, v in self.peak_scales)
                or self.in_flight_bytes is not None)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.bandwidth_scale != 1.0:
            out["bandwidth_scale"] = self.bandwidth_scale
        if self.peak_scales:
            out["peak_scale"] = dict(self.peak_scales)
        if self.in_flight_bytes is not None:
            out["in_flight"] = f"{self.in_flight_bytes:.17g} B"
        return out

    def peak_scale(self, label: str) -> float:
        return dict(self.peak_scales).get(label, 1.0)

    def with_peak_scale(self, label: str, factor: float) -> WhatIf:
        others = tuple((k, v) for k, v in self.peak_scales if k != label)
        return replace(self, peak_scales=others + (((label, factor),) if factor != 1.0 else ()))

    def _main(self, level: MemoryLevel, what_if: _Marking) -> MemoryLevel:
        bandwidth, provenance = level.bandwidth_bytes_per_s, level.provenance
        assert bandwidth is not None  # the loader requires it for main memory
        if self.bandwidth_scale != 1.0:
            bandwidth *= self.bandwidth_scale
            provenance = what_if(provenance)
        if self.in_flight_bytes is not None and level.latency_s is not None:
            limit = float(effective_bandwidth(bandwidth, level.latency_s, self.in_flight_bytes))
            if limit < bandwidth:
                bandwidth = limit
                provenance = what_if(provenance, (
                    f"Little's law: {format_bytes(self.in_flight_bytes)} in flight / "
                    f"{format_time(level.latency_s)} latency"))
        if provenance is level.provenance:  # nothing moved
            return level
        return replace(level, bandwidth_bytes_per_s=bandwidth, provenance=provenance)

    def apply(self, hardware: Hardware) -> Hardware:
        """The device with its roofs scaled; a scaled number is marked derived ("what-if")."""
        if not self.active:
            return hardware
        if self.in_flight_bytes is not None:
            latency_of(hardware)  # a clear error for a device without a measured latency

        def what_if(provenance: Provenance, formula: str = "what-if: dragged on the chart") -> Provenance:
            return replace(provenance, derived=True, formula=formula, what_if=True)

        memory = tuple(self._main(m, what_if) if m.main else m for m in hardware.memory)
        peaks = tuple(
            replace(p, flops_per_s=p.flops_per_s * self.peak_scale(p.label),
                    provenance=what_if(p.provenance))
            if self.peak_scale(p.label) != 1.0 else p for p in hardware.peaks)
        return replace(hardware, memory=memory, peaks=peaks)


def read_what_ifs(fields: Fields, hardware_ids: Container[str] | None,
                  name: str = "what_if") -> tuple[tuple[str, WhatIf], ...]:
    """What-ifs by device. ``hardware_ids``: the known ids, or the catalogue itself (a
    mapping), which also lets a Little's-law cap be checked against the device."""
    what_ifs = []
    for ident, raw in fields.mapping(name, required=False).items():
        if hardware_ids is not None and ident not in hardware_ids:
            raise fields.error(f"{name}.{ident}", f"unknown device {ident!r}")
        entry = fields.child(raw, f"{name}.{ident}")
        bandwidth = entry.number("bandwidth_scale", required=False, default=1.0)
        peaks = entry.mapping("peak_scale", required=False)
        if not all(isinstance(k, str) and isinstance(v, int | float) and not isinstance(v, bool)
                   for k, v in peaks.items()):
            raise entry.error("peak_scale", "expected roof labels mapped to numbers, "
                                            "like {bf16 matrix: 2.0}")
        in_flight = entry.quantity("in_flight", BYTES, required=False)
        try:
            what_if = WhatIf(bandwidth, tuple(peaks.items()), in_flight)
        except ValueError as exc:
            raise entry.error("peak_scale" if peaks else "bandwidth_scale", str(exc)) from None
        if in_flight is not None and isinstance(hardware_ids, Mapping):
            try:
                latency_of(hardware_ids[ident])
            except NoLatencyError as exc:
                raise entry.error("in_flight", str(exc)) from None
        what_ifs.append((str(ident), what_if))
        entry.finish()
    return tuple(what_ifs)
