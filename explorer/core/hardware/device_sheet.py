"""A device described once for people, with the source of every number: the rows that
``hardware show`` prints as text and the Hardware panel shows as an HTML card."""

from __future__ import annotations

from dataclasses import dataclass

from explorer.core.hardware.hardware import Hardware, Provenance, class_label
from explorer.core.units import format_bytes, format_si, format_time, rate_unit


@dataclass(frozen=True)
class Cell:
    """A number as text, where it comes from, and whether it is derived (its formula)."""

    text: str
    provenance: Provenance | None = None

    @property
    def derived(self) -> str:
        """The formula of a derived number ("" for a published one)."""
        p = self.provenance
        return p.formula if p is not None and p.derived else ""

    @property
    def note(self) -> str:
        p = self.provenance
        return p.formula or p.note if p is not None else ""


@dataclass(frozen=True)
class Sheet:
    """A device's card as text: summary, specs, peaks, memory and links, each with its source."""

    name: str
    ident: str
    summary: str  # "NVIDIA GPU (data centre), 2022. Hopper. …"
    specs: Cell  # "132 SMs, 1.98 GHz boost, TDP 700 W, matrix units: Tensor Cores"
    peaks: tuple[tuple[str, str, Cell, str, str], ...]  # precision, unit, peak, at clock, ridge
    memory: tuple[tuple[str, Cell, Cell], ...]  # level, capacity (usable), bandwidth
    measured: tuple[tuple[str, Provenance], ...]  # "HBM3 latency 406 ns, measured: …", links
    sources: tuple[tuple[str, str], ...]


def device_sheet(hw: Hardware) -> Sheet:
    s = hw.specs
    clocks = format_si(s.boost_clock_hz, "Hz") + " boost"
    if s.base_clock_hz:
        clocks = format_si(s.base_clock_hz, "Hz") + " base, " + clocks
    specs = (f"{s.cores} {s.core_label}s, {clocks}" + (f", TDP {s.tdp_w:g} W" if s.tdp_w else "")
             + (f", matrix units: {s.matrix_unit}" if s.matrix_unit else ""))
    bandwidth = hw.bandwidth_bytes_per_s
    peaks = tuple((p.precision, p.unit, Cell(format_si(p.flops_per_s, rate_unit(p.precision)), p.provenance),
                   format_si(p.clock_hz, "Hz") if p.clock_hz else "–", f"{p.flops_per_s / bandwidth:.1f}")
                  for p in hw.peaks)
    memory = tuple((m.name + (" (main)" if m.main else ""),
                    Cell((format_bytes(m.capacity_bytes) if m.capacity_bytes else "–")
                         + (f" ({format_bytes(m.usable_bytes)} usable)" if m.usable_bytes else "")),
                    Cell(format_si(m.bandwidth_bytes_per_s, "B/s") if m.bandwidth_bytes_per_s else "–",
                         m.provenance))
                   for m in hw.memory)
    measured = tuple((f"{m.name} latency {format_time(m.latency_s)}, measured: {m.latency_provenance.note}",
                      m.latency_provenance)
                     for m in hw.memory if m.latency_s is not None and m.latency_provenance is not None)
    measured += tuple((f"{m.name} usable: {format_bytes(m.usable_bytes)}, what the device reports: "
                       f"{m.usable_provenance.note}", m.usable_provenance)
                      for m in hw.memory if m.usable_bytes is not None and m.usable_provenance is not None)
    for link in hw.links:
        counts = "both directions together" if link.direction == "both" else "each direction"
        group = f", {link.group} devices joined at this rate" if link.group else ""
        measured += ((f"{link.name} ({link.tier} link): {format_si(link.bandwidth_bytes_per_s, 'B/s')} "
                      f"published ({counts}), {format_si(link.per_direction_bytes_per_s, 'B/s')} per "
                      f"direction{group}" + (f"; {link.provenance.note}" if link.provenance.note else ""),
                      link.provenance),)
        if link.latency_s is not None and link.latency_provenance is not None:
            measured += ((f"{link.name} latency {format_time(link.latency_s)} a transfer step: "
                          f"{link.latency_provenance.note}", link.latency_provenance),)
    where = f" ({class_label(hw.device_class).lower()})" if hw.device_class else ""
    return Sheet(hw.name, hw.id, f"{hw.vendor} {hw.kind.upper()}{where}, {hw.year}. {hw.notes}".rstrip(),
                 Cell(specs, s.provenance), peaks, memory, measured, hw.sources)
