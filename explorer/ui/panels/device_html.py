"""A device as an HTML card: every number with its source, derived ones marked."""

from __future__ import annotations

from html import escape

from explorer.core.hardware import Hardware, Provenance
from explorer.core.units import format_bytes, format_si, format_time, rate_unit


def _mark(p: Provenance) -> str:
    if p.derived:
        return f" <i title='{escape(p.formula)}'>(derived: {escape(p.formula)})</i>"
    return ""


def _source(p: Provenance) -> str:
    return f"<a href='{escape(p.url)}'>source</a>"


def device_card(hw: Hardware, primary: bool = False, what_if: bool = False,
                replaces_bundled: bool = False) -> str:
    s = hw.specs
    clocks = format_si(s.boost_clock_hz, "Hz") + " boost"
    if s.base_clock_hz:
        clocks = format_si(s.base_clock_hz, "Hz") + " base, " + clocks
    head = [f"<h3>{escape(hw.name)}</h3>",
            f"<p>{escape(hw.vendor)} {hw.kind.upper()}, {hw.year}. {escape(hw.notes)}</p>"]
    if primary:
        head.append("<p><b>Primary device:</b> the workload's table and totals are computed for it.</p>")
    if replaces_bundled:
        head.append(f"<p><b>Your own version</b> ({escape(hw.origin)}): it replaces the bundled "
                    "entry with the same id. Move the file away to get the bundled one back.</p>")
    if what_if:
        head.append("<p><b>What-if active:</b> dragged roofs differ from the datasheet "
                    "(View › Reset what-ifs restores them).</p>")
    head.append(f"<p>{s.cores} {escape(s.core_label)}s, {clocks}"
                + (f", TDP {s.tdp_w:g} W" if s.tdp_w else "")
                + (f", matrix units: {escape(s.matrix_unit)}" if s.matrix_unit else "")
                + f" ({_source(s.provenance)}){_mark(s.provenance)}</p>")
    rows = "".join(
        f"<tr><td>{p.precision}</td><td>{p.unit}</td>"
        f"<td align='right'>{format_si(p.flops_per_s, rate_unit(p.precision))}</td>"
        f"<td align='right'>{p.flops_per_s / hw.bandwidth_bytes_per_s:.0f}</td>"
        f"<td>{_source(p.provenance)}{_mark(p.provenance)}"
        f"{(' ' + escape(p.provenance.note)) if p.provenance.note else ''}</td></tr>"
        for p in hw.peaks)
    peaks = ("<h4>Dense peaks</h4><table cellspacing='4'><tr><th>precision</th><th>unit</th>"
             f"<th>peak</th><th>ridge FLOP/B</th><th></th></tr>{rows}</table>")
    def bandwidth(m) -> str:
        return format_si(m.bandwidth_bytes_per_s, "B/s") if m.bandwidth_bytes_per_s else "–"

    rows = "".join(
        f"<tr><td>{escape(m.name)}{' (main)' if m.main else ''}</td>"
        f"<td align='right'>{format_bytes(m.capacity_bytes) if m.capacity_bytes else '–'}"
        f"{f' ({format_bytes(m.usable_bytes)} usable)' if m.usable_bytes else ''}</td>"
        f"<td align='right'>{bandwidth(m)}</td>"
        f"<td>{_source(m.provenance)}{_mark(m.provenance)}</td></tr>"
        for m in hw.memory)
    memory = ("<h4>Memory</h4><table cellspacing='4'><tr><th>level</th><th>capacity</th>"
              f"<th>bandwidth</th><th></th></tr>{rows}</table>")
    latency = "".join(
        f"<p>{escape(m.name)} latency {format_time(m.latency_s)}, measured: "
        f"{escape(m.latency_provenance.note)} ({_source(m.latency_provenance)}).</p>"
        for m in hw.memory if m.latency_s is not None and m.latency_provenance is not None)
    usable = "".join(
        f"<p>{escape(m.name)} usable: {format_bytes(m.usable_bytes)}, what the device reports: "
        f"{escape(m.usable_provenance.note)} ({_source(m.usable_provenance)}).</p>"
        for m in hw.memory if m.usable_bytes is not None and m.usable_provenance is not None)
    return "".join(head) + peaks + memory + latency + usable
