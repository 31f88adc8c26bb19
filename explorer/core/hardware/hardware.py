"""Hardware descriptions: dense compute peaks per precision and unit, memory levels, sources.

A ``Hardware`` is immutable; an edited device is a new instance made with
``dataclasses.replace``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from typing import Any

from explorer.core.units import PRECISIONS


class DeviceKind(StrEnum):
    """A CPU, a GPU or an accelerator: the catalogue's ``kind`` and a kernel backend's
    ``device_kind``. An accelerator has no SIMT cores: large matrix units (a TPU's systolic
    MXUs, Gaudi's MMEs) fed by scalar and vector cores."""

    CPU = "cpu"
    GPU = "gpu"
    ACCELERATOR = "accelerator"


CPU, GPU, ACCELERATOR = DeviceKind.CPU, DeviceKind.GPU, DeviceKind.ACCELERATOR
KINDS = tuple(DeviceKind)


def kind_label(kind: DeviceKind) -> str:
    """What a sentence calls a device of ``kind``: "CPU", "GPU", "accelerator"."""
    return "accelerator" if kind == DeviceKind.ACCELERATOR else kind.value.upper()


class DeviceClass(StrEnum):
    """Where a device is meant to run: the catalogue's ``class``, the hardware panel's second
    level and a word a search finds.

    - ``datacenter``: sold for servers in racks, passively cooled or liquid-cooled (SXM, OAM,
      server PCIe cards, server CPUs, TPUs) and rented from clouds;
    - ``workstation``: professional desktop parts with their own fans (RTX PRO, Radeon PRO,
      a Mac Studio's Ultra chip);
    - ``desktop``: consumer desktop parts (GeForce cards, Ryzen and Core desktop CPUs);
    - ``laptop``: chips of laptops (a MacBook Pro's Max chip), within a laptop's power;
    - ``edge``: embedded modules and single-board computers (Jetson, Raspberry Pi), tens of
      watts at most.
    """

    DATACENTER = "datacenter"
    WORKSTATION = "workstation"
    DESKTOP = "desktop"
    LAPTOP = "laptop"
    EDGE = "edge"


CLASSES = tuple(DeviceClass)
_CLASS_LABELS = {DeviceClass.DATACENTER: "Data centre"}
# Other words a user may type for a class ("data center", "server").
CLASS_WORDS = {DeviceClass.DATACENTER: "data centre center datacentre server cloud",
               DeviceClass.DESKTOP: "consumer", DeviceClass.LAPTOP: "mobile notebook",
               DeviceClass.EDGE: "embedded"}


def class_label(device_class: DeviceClass | str) -> str:
    """A class's title: "Data centre", "Workstation", "Desktop", "Laptop", "Edge"."""
    return _CLASS_LABELS.get(DeviceClass(device_class), str(device_class).capitalize())


UNITS = ("vector", "matrix")


class Tier(StrEnum):
    """Where a link leads: the catalogue's ``tier``."""

    NODE = "node"  # GPU to GPU inside one server (NVLink, Infinity Fabric)
    NETWORK = "network"  # from a GPU to other servers (InfiniBand, Ethernet)
    HOST = "host"  # the GPU's PCIe link to the CPU (GPU-to-GPU traffic crosses it without a node link)


LINK_TIERS = tuple(tier.value for tier in Tier)  # plain strings: what files hold
# How a published link figure counts: "both" directions together (NVIDIA's "900 GB/s"
# for NVLink 4, PCIe's "128 GB/s" for 5.0 x16) or "each" direction (a network port's
# "400 Gb/s").
LINK_DIRECTIONS = ("both", "each")


@dataclass(frozen=True)
class Provenance:
    """Where a number comes from: a published source, or a formula over published inputs."""

    url: str
    derived: bool = False
    formula: str = ""
    note: str = ""
    what_if: bool = False  # moved by a what-if (a drag, a bytes-in-flight cap), not the datasheet's


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
class Link:
    """An interconnect of a device: its published rate, what the rate counts, how many
    devices reach each other at that rate, and the latency a transfer step pays."""

    name: str
    tier: Tier
    bandwidth_bytes_per_s: float  # as published
    direction: str  # LINK_DIRECTIONS: what the published figure counts
    provenance: Provenance
    group: int = 0  # node links: devices all reaching each other (HGX: 8)
    # Node links made of point-to-point links, one per peer (MI300X: 7 Infinity Fabric links
    # in an 8-GPU platform), rather than a switch: the published rate is the sum over them,
    # and a group of n devices uses n − 1 of them (0: a switch, every rate to every group).
    mesh: int = 0
    latency_s: float | None = None  # per transfer step (a hop of a ring), from its source
    latency_provenance: Provenance | None = None
    # The switch adds the devices' buffers itself (NVLink SHARP, NVSwitch from its third
    # generation): an all-reduce can send each buffer once (NCCL's NVLS algorithm).
    switch_reduction: bool = False

    def for_group(self, devices: int) -> Link:
        """This link as a group of ``devices`` sees it: on a mesh, the share of its
        point-to-point links that join the group's members."""
        used = devices - 1
        if not self.mesh or used >= self.mesh:
            return self
        return replace(self, name=f"{self.name} ({used} of its {self.mesh} links)",
                       bandwidth_bytes_per_s=self.bandwidth_bytes_per_s * used / self.mesh)

    @property
    def per_direction_bytes_per_s(self) -> float:
        """What one device can send while it receives as much: half a "both directions"
        figure. Ring collectives send and receive at once, so this is their rate."""
        return self.bandwidth_bytes_per_s / 2 if self.direction == "both" else self.bandwidth_bytes_per_s


@dataclass(frozen=True)
class Specs:
    """A device's cores and clock as its datasheet gives them, with where they come from."""

    cores: int
    core_label: str
    boost_clock_hz: float
    provenance: Provenance
    base_clock_hz: float | None = None
    tdp_w: float | None = None
    tdp_provenance: Provenance | None = None  # when the TDP comes from another source
    matrix_unit: str | None = None
    cores_of: int | None = None  # a CPU a run uses part of: all its cores (``cores``: those used)


@dataclass(frozen=True)
class Hardware:
    """One device of the catalogue: its specs, peaks, memory levels and links, with their sources."""

    id: str
    name: str
    vendor: str
    kind: DeviceKind
    year: int
    specs: Specs
    peaks: tuple[ComputePeak, ...]
    memory: tuple[MemoryLevel, ...]
    sources: tuple[tuple[str, str], ...] = ()
    notes: str = ""
    origin: str = field(default="", compare=False)
    short_name: str = ""  # for charts and slides ("H100 SXM"); the name when not given
    links: tuple[Link, ...] = ()  # interconnects (none listed: a single device)
    device_class: DeviceClass | None = None  # the file's ``class``; every bundled device has one

    def __hash__(self) -> int:
        """The compared fields' hash, as a frozen dataclass's, worked out once: a chart's
        caches look each shown device up several times per frame (5 µs each)."""
        cached = self.__dict__.get("_hash")
        if cached is None:
            cached = hash(tuple(getattr(self, f.name) for f in fields(self) if f.compare))
            object.__setattr__(self, "_hash", cached)
        return cached

    def __getstate__(self) -> dict[str, Any]:
        """Without the hash kept (a text's hash differs between processes)."""
        return {key: value for key, value in self.__dict__.items() if key != "_hash"}

    @property
    def label(self) -> str:
        """What a chart calls the device: its short name, else its name."""
        return self.short_name or self.name

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

    def link(self, tier: Tier) -> Link | None:
        """The fastest link of ``tier``, or None."""
        return max((x for x in self.links if x.tier == tier), key=lambda x: x.per_direction_bytes_per_s,
                   default=None)

    @property
    def derived_fields(self) -> tuple[str, ...]:
        """Labels of every number on this device that is computed rather than published."""
        out = [f"peak {p.label}" for p in self.peaks if p.provenance.derived]
        out += [f"memory {m.name}" for m in self.memory if m.provenance.derived]
        if self.specs.provenance.derived:
            out.append("specs")
        return tuple(out)


# -- formulas -------------------------------------------------------------------------------------

_SCALES = {"GHz": 1e9, "MHz": 1e6, "MT/s": 1e6, "PFLOP/s": 1e15, "TFLOP/s": 1e12,
           "POP/s": 1e15, "TOP/s": 1e12, "GFLOP/s": 1e9,
           "GB/s": 1e9, "TB/s": 1e12}
_FACTOR = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*(\S*)")


def formula_terms(formula: str) -> list[list[tuple[float, str, str]]]:
    """A catalogue formula as '+'-separated terms of (value, unit word, operator) factors:
    each factor is a number first, then what it counts; anything after ';' is a comment.
    Raises ValueError for a factor that does not start with a number."""
    terms = []
    for term in formula.split(";")[0].split("+"):
        factors, op = [], "×"
        for piece in re.split(r"([×÷])", term):
            if piece in ("×", "÷"):
                op = piece
                continue
            match = _FACTOR.match(piece)
            if match is None:
                raise ValueError(f"a factor must start with a number: {piece.strip()!r}")
            factors.append((float(match.group(1)) * _SCALES.get(match.group(2), 1.0), match.group(2), op))
        terms.append(factors)
    return terms


def evaluate_formula(formula: str) -> float:
    """The value a catalogue formula stands for."""
    total = 0.0
    for term in formula_terms(formula):
        value = 1.0
        for factor, _, op in term:
            value = value * factor if op == "×" else value / factor
        total += value
    return total


def vector_lanes(hw: Hardware, precision: str = "fp32") -> tuple[str, int] | None:
    """How ``hw``'s ``precision`` vector roof is built, as (a formula for people, the chip's
    lanes), derived: the catalogue's own formula where the peak is derived (lanes are its
    factors without the 2 FLOP of a fused multiply-add and the clock, summed over core
    types), else cores × lanes × 2 FLOP × clock from the published peak when that gives
    whole lanes per core. None when neither works out."""
    peak = hw.vector_peak(precision)
    if peak is None:
        return None
    formula = peak.provenance.formula
    if formula:
        try:
            terms = formula_terms(formula)
        except ValueError:
            terms = []
        # A lane formula: every term counts units × lanes × FLOP × a clock.
        lane_terms = all(any(u.startswith("FLOP") for _, u, _ in t)
                         and any(u in ("GHz", "MHz") for _, u, _ in t) for t in terms)
        lanes = sum(math.prod(v for v, unit, op in term if op == "×" and not unit.startswith("FLOP")
                              and unit not in _SCALES) for term in terms) if terms and lane_terms else None
        if lanes and math.isclose(evaluate_formula(formula), peak.flops_per_s, rel_tol=0.01):
            return formula.split(";")[0].strip(), round(lanes)
    clock = peak.clock_hz or hw.specs.boost_clock_hz
    per_core = peak.flops_per_s / 2 / clock / hw.specs.cores
    if round(per_core) < 1 or abs(per_core - round(per_core)) > 0.01 * per_core:
        return None
    from explorer.core.units import format_si

    return (f"{hw.specs.cores} {hw.specs.core_label}s × {round(per_core)} {precision} lanes × 2 FLOP "
            f"(a fused multiply-add) × {format_si(clock, 'Hz')}", hw.specs.cores * round(per_core))
