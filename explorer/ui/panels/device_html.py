"""A device as an HTML card: every number with its source, derived ones marked."""

from __future__ import annotations

from html import escape

from explorer.core.hardware.device_sheet import Cell, device_sheet
from explorer.core.hardware.hardware import Hardware, Provenance


def _mark(cell: Cell) -> str:
    formula = cell.derived
    return f" <i title='{escape(formula)}'>(derived: {escape(formula)})</i>" if formula else ""


def _source(p: Provenance | None) -> str:
    return f"<a href='{escape(p.url)}'>source</a>" if p is not None else ""


def _table(title: str, headers: tuple[str, ...], rows: list[tuple]) -> str:
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<h4>{title}</h4><table cellspacing='4'><tr>{head}</tr>{body}</table>"


def device_card(hw: Hardware, primary: bool = False, what_if: bool = False,
                replaces_bundled: bool = False) -> str:
    sheet = device_sheet(hw)
    head = [f"<h3>{escape(sheet.name)}</h3>", f"<p>{escape(sheet.summary)}</p>"]
    if primary:
        head.append("<p><b>Primary device:</b> the workload's table and totals are computed for it.</p>")
    if replaces_bundled:
        head.append(f"<p><b>Your own version</b> ({escape(hw.origin)}): it replaces the bundled "
                    "entry with the same id. Move the file away to get the bundled one back.</p>")
    if what_if:
        head.append("<p><b>What-if active:</b> dragged roofs differ from the datasheet "
                    "(View › Reset what-ifs restores them).</p>")
    head.append(f"<p>{escape(sheet.specs.text)} ({_source(sheet.specs.provenance)}){_mark(sheet.specs)}</p>")
    peaks = _table("Dense peaks", ("precision", "unit", "peak", "ridge FLOP/B", ""), [
        (precision, unit, peak.text, ridge, _source(peak.provenance) + _mark(peak)
         + (f" {escape(note)}" if peak.provenance is not None and (note := peak.provenance.note) else ""))
        for precision, unit, peak, _clock, ridge in sheet.peaks])
    memory = _table("Memory", ("level", "capacity", "bandwidth", ""), [
        (escape(level), capacity.text, bandwidth.text, _source(bandwidth.provenance) + _mark(bandwidth))
        for level, capacity, bandwidth in sheet.memory])
    measured = "".join(f"<p>{escape(text)} ({_source(p)}).</p>" for text, p in sheet.measured)
    return "".join(head) + peaks + memory + measured
