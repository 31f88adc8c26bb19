"""Hardware descriptions: dense compute peaks per precision and unit, memory levels, sources.

A ``Hardware`` is immutable; an edited device is a new instance made with
``dataclasses.replace``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from explorer.core.units import PRECISIONS

KINDS = ("cpu", "gpu")
UNITS = ("vector", "matrix")


@dataclass(frozen=True)
class Provenance:
    """Where a number comes from: a published source, or a formula over published inputs."""

    url: str
    derived: bool = False
    formula: str = ""
    note: str = ""


@dataclass(frozen=True)
class ComputePeak:
    """Dense peak rate of one precision on one kind of unit (vector ALUs or matrix units)."""

    precision: str
    unit: str
    flops_per_s: float
    provenance: Provenance
    clock_hz: float | None = None

    @property
    def label(self) -> str:
        return f"{self.precision} {self.unit}"


@dataclass(frozen=True)
class MemoryLevel:
    """A level of the memory hierarchy; exactly one per device is the main memory."""

    name: str
    main: bool
    capacity_bytes: float | None
    bandwidth_bytes_per_s: float | None
    provenance: Provenance
    # Load-to-use latency of an unloaded chip (a pointer chase), from its own source.
    latency_s: float | None = None
    latency_provenance: Provenance | None = None
    # What the device makes usable (CUDA's total memory), below the nominal capacity.
    usable_bytes: float | None = None
    usable_provenance: Provenance | None = None


@dataclass(frozen=True)
class Specs:
    cores: int
    core_label: str
    boost_clock_hz: float
    provenance: Provenance
    base_clock_hz: float | None = None
    tdp_w: float | None = None
    tdp_provenance: Provenance | None = None  # when the TDP comes from another source
    matrix_unit: str | None = None


@dataclass(frozen=True)
class Hardware:
    id: str
    name: str
    vendor: str
    kind: str
    year: int
    specs: Specs
    peaks: tuple[ComputePeak, ...]
    memory: tuple[MemoryLevel, ...]
    sources: tuple[tuple[str, str], ...] = ()
    notes: str = ""
    origin: str = field(default="", compare=False)

    # -- queries --------------------------------------------------------------------------
    @property
    def main_memory(self) -> MemoryLevel:
        return next(level for level in self.memory if level.main)

    @property
    def bandwidth_bytes_per_s(self) -> float:
        bandwidth = self.main_memory.bandwidth_bytes_per_s
        assert bandwidth is not None  # the loader requires it for main memory
        return bandwidth

    @property
    def memory_capacity_bytes(self) -> float:
        capacity = self.main_memory.capacity_bytes
        assert capacity is not None
        return capacity

    @property
    def usable_memory_bytes(self) -> float:
        """Main memory a program can allocate: the reported total where the catalogue has
        it, else the nominal capacity."""
        return self.main_memory.usable_bytes or self.memory_capacity_bytes

    @property
    def precisions(self) -> tuple[str, ...]:
        present = {peak.precision for peak in self.peaks}
        return tuple(p for p in PRECISIONS if p in present)

    def peak(self, precision: str, unit: str | None = None) -> ComputePeak | None:
        """The fastest peak for ``precision`` (on ``unit`` if given), or None if unsupported."""
        candidates = [
            p for p in self.peaks if p.precision == precision and (unit is None or p.unit == unit)
        ]
        return max(candidates, key=lambda p: p.flops_per_s, default=None)

    def vector_peak(self, precision: str = "fp32") -> ComputePeak | None:
        """The vector units' peak for ``precision``, else its fastest peak of any unit."""
        return self.peak(precision, "vector") or self.peak(precision)

    def vector_lanes(self, precision: str = "fp32") -> tuple[int, int, float]:
        """(cores, lanes per core, clock) behind the ``precision`` vector peak: peak ÷ 2 FLOP
        per fused multiply-add ÷ clock (the clock the peak was quoted at) ÷ cores, rounded
        to whole lanes (published peaks are rounded). Derived, not published."""
        peak = self.vector_peak(precision)
        if peak is None:
            raise KeyError(f"{self.name} has no {precision} peak")
        clock = peak.clock_hz or self.specs.boost_clock_hz
        return self.specs.cores, round(peak.flops_per_s / 2 / clock / self.specs.cores), clock

    def peak_flops(self, precision: str, unit: str | None = None) -> float:
        found = self.peak(precision, unit)
        if found is None:
            what = f"{precision} on {unit} units" if unit else precision
            have = ", ".join(self.precisions)
            raise KeyError(f"{self.name} has no published {what} peak (it has {have})")
        return found.flops_per_s

    def ridge_point(self, precision: str, unit: str | None = None) -> float:
        """Intensity (FLOP/byte) where the main-memory roof meets the ``precision`` roof."""
        return self.peak_flops(precision, unit) / self.bandwidth_bytes_per_s

    @property
    def derived_fields(self) -> tuple[str, ...]:
        """Labels of every number on this device that is computed rather than published."""
        out = [f"peak {p.label}" for p in self.peaks if p.provenance.derived]
        out += [f"memory {m.name}" for m in self.memory if m.provenance.derived]
        if self.specs.provenance.derived:
            out.append("specs")
        return tuple(out)
