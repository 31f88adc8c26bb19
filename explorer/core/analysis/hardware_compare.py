"""Devices side by side: every roof (per precision and unit), memory level and link of each,
one row per quantity, with the source of every cell: what ``hardware compare`` prints."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from explorer.core.hardware.hardware import LINK_TIERS, UNITS, Hardware, Provenance
from explorer.core.units import PRECISIONS, format_bytes


@dataclass(frozen=True)
class Cell:
    """One device's value in a row: the number, how it reads, where it comes from."""

    value: float
    text: str
    provenance: Provenance | None = None


@dataclass(frozen=True)
class Row:
    """One quantity across the compared devices (None where a device has none)."""

    section: str  # "specs", "peaks", "memory", "links"
    label: str
    unit: str
    cells: tuple[Cell | None, ...]


def _number(value: float) -> str:
    """A value in its row's unit: one decimal from 10 up (989.4, 1307.4), else 3 digits."""
    return f"{value:.1f}" if abs(value) >= 10 else f"{value:.3g}"


def _peak_rows(devices: tuple[Hardware, ...]) -> list[Row]:
    rows = []
    for precision in PRECISIONS:
        for unit in UNITS:
            peaks = [hw.peak(precision, unit) for hw in devices]
            if not any(peaks):
                continue
            integer = precision.startswith("int")
            scale_unit = "TOP/s" if integer else "TFLOP/s"
            rows.append(Row("peaks", f"{precision} {unit}", scale_unit, tuple(
                Cell(p.flops_per_s, _number(p.flops_per_s / 1e12), p.provenance) if p else None
                for p in peaks)))
    return rows


def _memory_rows(devices: tuple[Hardware, ...]) -> list[Row]:
    rows = [
        Row("memory", "main memory", "", tuple(Cell(0, hw.main_memory.name) for hw in devices)),
        Row("memory", "main capacity", "", tuple(
            Cell(hw.memory_capacity_bytes, format_bytes(hw.memory_capacity_bytes),
                 hw.main_memory.provenance) for hw in devices)),
        Row("memory", "main bandwidth", "GB/s", tuple(
            Cell(hw.bandwidth_bytes_per_s, _number(hw.bandwidth_bytes_per_s / 1e9),
                 hw.main_memory.provenance) for hw in devices)),
    ]
    names = list(dict.fromkeys(m.name for hw in devices for m in hw.memory if not m.main))
    for name in names:
        levels = [next((m for m in hw.memory if m.name == name and not m.main), None) for hw in devices]
        for what, unit, attr in (("capacity", "", "capacity_bytes"),
                                 ("bandwidth", "GB/s", "bandwidth_bytes_per_s")):
            values = [getattr(m, attr) if m else None for m in levels]
            if any(v is not None for v in values):
                rows.append(Row("memory", f"{name} {what}", unit, tuple(
                    Cell(v, format_bytes(v) if what == "capacity" else _number(v / 1e9), m.provenance)
                    if m is not None and v is not None else None
                    for m, v in zip(levels, values, strict=True))))
    return rows


def _link_rows(devices: tuple[Hardware, ...]) -> list[Row]:
    rows = []
    for tier in LINK_TIERS:
        links = [hw.link(tier) for hw in devices]  # type: ignore[arg-type]  # a Tier's value
        if not any(links):
            continue
        rows.append(Row("links", f"{tier} link", "GB/s", tuple(
            Cell(x.bandwidth_bytes_per_s,
                 f"{_number(x.bandwidth_bytes_per_s / 1e9)} ({x.name}, {x.direction})", x.provenance)
            if x else None for x in links)))
    return rows


def _spec_rows(devices: tuple[Hardware, ...]) -> list[Row]:
    rows = [
        Row("specs", "vendor", "", tuple(Cell(0, hw.vendor) for hw in devices)),
        Row("specs", "kind", "", tuple(Cell(0, str(hw.kind)) for hw in devices)),
        Row("specs", "class", "", tuple(Cell(0, str(hw.device_class)) if hw.device_class else None
                                        for hw in devices)),
        Row("specs", "year", "", tuple(Cell(hw.year, str(hw.year)) for hw in devices)),
        Row("specs", "cores", "", tuple(
            Cell(hw.specs.cores, f"{hw.specs.cores} {hw.specs.core_label}", hw.specs.provenance)
            for hw in devices)),
        Row("specs", "boost clock", "GHz", tuple(
            Cell(hw.specs.boost_clock_hz, f"{hw.specs.boost_clock_hz / 1e9:.3g}", hw.specs.provenance)
            for hw in devices)),
    ]
    if any(hw.specs.tdp_w for hw in devices):
        rows.append(Row("specs", "TDP", "W", tuple(
            Cell(hw.specs.tdp_w, f"{hw.specs.tdp_w:g}", hw.specs.tdp_provenance or hw.specs.provenance)
            if hw.specs.tdp_w else None for hw in devices)))
    return rows


def compare_rows(devices: tuple[Hardware, ...]) -> list[Row]:
    """Specs, every peak, memory level and link of ``devices``, aligned row by row."""
    return _spec_rows(devices) + _peak_rows(devices) + _memory_rows(devices) + _link_rows(devices)


def source_key(hw: Hardware, provenance: Provenance) -> str:
    """The device's own name for a source (its ``sources`` key), else the address."""
    return next((key for key, url in hw.sources if url == provenance.url), provenance.url)


def compare_dict(devices: tuple[Hardware, ...]) -> dict[str, Any]:
    """The comparison as JSON types: each row's value per device id, with its source."""

    def cell(hw: Hardware, c: Cell | None) -> dict[str, Any] | None:
        if c is None:
            return None
        out: dict[str, Any] = {"value": c.value if c.value or not c.text else c.text, "text": c.text}
        if c.provenance is not None:
            p = c.provenance
            out.update(source=p.url, source_key=source_key(hw, p), derived=p.derived)
            if p.formula:
                out["formula"] = p.formula
        return out

    return {
        "devices": [{"id": hw.id, "name": hw.name, "vendor": hw.vendor, "kind": str(hw.kind),
                     "class": hw.device_class and str(hw.device_class), "sources": dict(hw.sources)}
                    for hw in devices],
        "rows": [{"section": r.section, "label": r.label, "unit": r.unit,
                  "values": {hw.id: cell(hw, c) for hw, c in zip(devices, r.cells, strict=True)}}
                 for r in compare_rows(devices)],
    }
