"""Roofs on the page: every shown device's compute and bandwidth roofs as lines in its own
style (kept while the device is shown), the datasheet roof under a what-if, ridge marks,
and the labels that name them (as placement requests with candidate positions)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache

from explorer.chart.elements import Chart, ElementKind, Line, Marker, Stroke, Text
from explorer.chart.layout import Request, Spots
from explorer.chart.text import text_width
from explorer.core.analysis.analysis import Analysis
from explorer.core.analysis.roofline import COMPUTE, Ceilings, Roof
from explorer.core.hardware.hardware import Hardware
from explorer.core.units import format_number, format_si, rate_unit
from explorer.document import RoofRef

# Line styles by device slot: dash patterns in multiples of the line width.
DASHES = ((), (4.0, 2.5), (6.0, 2.0, 1.5, 2.0), (1.2, 2.0))
SYMBOLS = ("diamond", "square", "triangle", "circle")
WHAT_IF_OPACITY = 0.55


@dataclass(frozen=True)
class Shown:
    """A device on the chart: as drawn (what-ifs applied), its datasheet entry, the roofs
    drawn, its style slot, and the compute roof its workload runs under."""

    hardware: Hardware
    datasheet: Hardware
    ceilings: Ceilings
    slot: int
    binding: Roof  # the matrix roof of the workload's precision on this device

    # The device's style, kept for as long as it is shown: colour, dash, ridge marker.
    def colour(self, theme) -> str:
        return theme.devices[self.slot % len(theme.devices)]

    @property
    def dash(self) -> tuple[float, ...]:  # in multiples of the line width
        return DASHES[self.slot % len(DASHES)]

    @property
    def symbol(self) -> str:
        return SYMBOLS[self.slot % len(SYMBOLS)]


def merged(ceilings: Ceilings) -> Ceilings:
    """One line for compute roofs of equal value (an MI300X's fp32 vector and matrix)."""
    out: list[Roof] = []
    for roof in ceilings.compute:
        same = next((i for i, r in enumerate(out) if r.value == roof.value), None)
        if same is None:
            out.append(roof)
            continue
        first = out[same]
        a, b = first.label.split(), roof.label.split()
        label = f"{a[0]} {a[1]} & {b[1]}" if a[0] == b[0] else f"{first.label} = {roof.label}"
        out[same] = Roof(label, first.value, first.derived or roof.derived, first.what_if or roof.what_if)
    return Ceilings(tuple(out), ceilings.bandwidth)


def roof_text(shown: Shown | tuple[str, ...], roof: Roof, kind: str, multi: bool) -> str:
    """"H100 SXM: bf16 matrix 989 TFLOP/s" (``shown``: the device, or the names of the
    devices whose roofs coincide there: "H100 SXM, H200 SXM: …"); a memory level without
    its parenthesis ("DDR5-4800", the card has "(12 channels)")."""
    unit = rate_unit(roof.label.split()[0]) if kind == COMPUTE else "B/s"
    names = (shown.hardware.label,) if isinstance(shown, Shown) else shown
    prefix = f"{', '.join(names)}: " if multi else ""
    tag = " (what-if)" if roof.what_if else (" (derived)" if roof.derived else "")
    label = roof.label if kind == COMPUTE else re.sub(r"\s*\(.*\)", "", roof.label)
    return f"{prefix}{label} {format_si(roof.value, unit)}{tag}"


def _stroke(theme, shown: Shown, roof: Roof, main: bool, scale: float) -> Stroke:
    width = (2.6 if main else 1.6) * scale * theme.pen_factor
    dash = tuple(d * width for d in shown.dash)
    return Stroke(shown.colour(theme), width, dash,
                  WHAT_IF_OPACITY if roof.what_if else 1.0)


def _page_points(chart: Chart, segment) -> tuple | None:
    """A roof segment's ends on the page; a bandwidth roof starts where it enters the plot."""
    (xa, xb), (ya, yb) = segment.x, segment.y
    if segment.kind != COMPUTE and ya < chart.y_range[0]:
        xa, ya = chart.y_range[0] / (yb / xb), chart.y_range[0]
        if xa >= xb:
            return None
    return (chart.x_px(xa), chart.y_px(ya)), (chart.x_px(xb), chart.y_px(yb))


def roof_lines(chart: Chart, theme, devices: list[Shown], multi: bool) -> tuple[list[Line], list[tuple]]:
    """(every line drawn for the roofs, (roof line, its label's request) for each roof) for
    ``devices``; ``multi``: labels name the device. A roof moved by a what-if keeps its
    datasheet position as a faint dotted line. Roofs of several devices that coincide (an
    H100's and an H200's compute roofs, the same value) get one label that names them all
    ("H100 SXM, H200 SXM: bf16 matrix 989 TFLOP/s"), owned by the longest of their lines."""
    lines: list[Line] = []
    roofs: list[tuple[Line, Shown, Roof]] = []
    for shown in devices:
        device_lines, device_roofs = _device_roof_lines(chart, theme, shown)
        lines += device_lines
        roofs += device_roofs
    groups: dict[tuple, list[tuple[Line, Shown, Roof]]] = {}
    for line, shown, roof in roofs:
        assert line.ref is not None  # (a roof's line names its roof)
        text = roof_text(shown, roof, line.ref.kind, False)
        groups.setdefault((line.ref.kind, roof.value, text), []).append((line, shown, roof))
    labelled = []
    for group in groups.values():
        line, shown, roof = max(group, key=lambda item: _length(item[0]))
        names = tuple(dict.fromkeys(s.hardware.label for _, s, _ in group))
        labelled.append((line, _roof_request(chart, line, names, roof, multi)))
    return lines, labelled


def _length(line: Line) -> float:
    (xa, ya), (xb, yb) = line.points[0], line.points[-1]
    return math.hypot(xb - xa, yb - ya)


def covered(labelled: list[tuple], lines: list[Line]) -> list[Line]:
    """``lines`` without the roofs that lie under a longer one of another device (the same
    value): the label of the longer names both, and may sit along it."""
    owners = {id(line) for line, _ in labelled}
    return [line for line in lines if line.kind != ElementKind.ROOF or id(line) in owners]


@lru_cache(maxsize=32)  # a drag moves one device's roofs: the others' stay as they were
def _device_roof_lines(chart: Chart, theme, shown: Shown) -> tuple[tuple, tuple]:
    lines: list[Line] = []
    labelled: list[tuple[Line, Shown, Roof]] = []
    x_low, x_high = chart.x_range
    scale = chart.page.lines
    ceilings = merged(shown.ceilings)
    precisions = tuple(sorted({r.label.split()[0] for r in ceilings.compute}))
    now = {r.label: r.value for r in (*ceilings.compute, *ceilings.bandwidth)}
    for segment in merged(Ceilings.from_hardware(shown.datasheet, precisions)).segments(x_low, x_high):
        points = _page_points(chart, segment)
        if points and now.get(segment.roof.label, segment.roof.value) != segment.roof.value:
            stroke = Stroke(theme.track, 1.4 * scale, (2.0 * scale, 3.0 * scale))
            lines.append(Line(points, stroke, ElementKind.ORIGINAL,
                              RoofRef(shown.hardware.id, segment.kind, segment.roof.label),
                              f"datasheet value of {segment.roof.label} (before the what-if)"))
    for segment in ceilings.segments(x_low, x_high):
        points = _page_points(chart, segment)
        if points is None:
            continue
        main = segment.roof is ceilings.compute[0] or segment.roof is ceilings.bandwidth[0]
        ref = RoofRef(shown.hardware.id, segment.kind, datasheet_label(segment.roof.label))
        line = Line(points, _stroke(theme, shown, segment.roof, main, scale), ElementKind.ROOF, ref,
                    roof_tooltip(shown.hardware, ref))
        lines.append(line)
        labelled.append((line, shown, segment.roof))
    return tuple(lines), tuple(labelled)


@lru_cache(maxsize=64)  # a label's places, and their shapes, kept while its roof stays put
def _roof_request(chart: Chart, line: Line, names: tuple[str, ...], roof: Roof, multi: bool) -> Request:
    """A label for a roof line, in the line's colour, naming the devices ``names`` whose
    roofs lie there. With several devices, where the label with the names finds no room,
    the label without them (the key names the device by the line's colour and style)."""
    assert line.ref is not None  # (a roof's line names its roof)
    kind = line.ref.kind
    texts = dict.fromkeys(roof_text(names, roof, kind, named) for named in (multi, False))
    candidates = Spots([])
    for words in texts:
        text = Text(words, line.points[0], chart.page.text, line.stroke.colour, ElementKind.ROOF,
                    ref=line.ref)
        candidates += line_spots(chart, line, text)
    return Request(candidates, line)


def line_label(chart: Chart, line: Line, text: Text) -> Request:
    """Where ``text`` may label a roof ``line``: along the flat part of a compute roof (its
    right end first), along the slope of a bandwidth roof (near its start first); above the
    line first, then below."""
    return Request(line_spots(chart, line, text), line)


def line_spots(chart: Chart, line: Line, text: Text) -> Spots:
    """The places ``line_label`` offers, in its order."""
    (xa, ya), (xb, yb) = line.points[0], line.points[-1]
    candidates: list[tuple[Text, tuple[float, float], float, str, str, float]] = []
    if ya == yb:  # flat: a compute roof
        places = ((xb - 6, "end"), (xa + 0.75 * (xb - xa), "middle"), (xa + 0.5 * (xb - xa), "middle"),
                  (xa + 0.25 * (xb - xa), "middle"), (xa + 6, "start"))
        for gap in (3.0 * chart.page.lines, text.height + 5.0 * chart.page.lines):
            for x, align in places:
                for side in ("above", "below"):
                    candidates.append((text, (x, ya), 0.0, align, side, gap))
    else:
        angle = math.degrees(math.atan2(yb - ya, xb - xa))
        for gap in (3.0 * chart.page.lines, 0.6 * text.height):
            for fraction in (0.04, 0.14, 0.24, 0.34, 0.44, 0.54, 0.64, 0.74):
                origin = (xa + fraction * (xb - xa), ya + fraction * (yb - ya))
                for side in ("above", "below"):
                    candidates.append((text, origin, angle, "start", side, gap))
    return Spots(candidates)


def datasheet_label(label: str) -> str:
    """The catalogue label of a drawn roof: the first of a merged pair ("fp32 vector & matrix"
    → "fp32 vector")."""
    return label.split(" = ")[0].split(" & ")[0]


def roof_tooltip(hw: Hardware, ref: RoofRef) -> str:
    """The roof's full device name, value, provenance and what a drag does."""
    if ref.kind == COMPUTE:
        precision, unit = ref.label.split()
        peak = hw.peak(precision, unit)
        assert peak is not None  # (the roof was drawn from it)
        lines = [f"{hw.name}: {ref.label} peak {format_si(peak.flops_per_s, rate_unit(precision))}"]
        provenance = peak.provenance
    else:
        level = next(m for m in hw.memory if m.name == ref.label)
        assert level.bandwidth_bytes_per_s is not None  # (the roof was drawn from it)
        lines = [f"{hw.name}: {level.name} bandwidth {format_si(level.bandwidth_bytes_per_s, 'B/s')}"]
        provenance = level.provenance
    if provenance.derived:
        lines.append(f"derived: {provenance.formula}")
    if provenance.note:
        lines.append(provenance.note)
    lines.append(f"source: {provenance.url}")
    if ref.kind == COMPUTE or ref.label == hw.main_memory.name:
        lines.append("drag up or down to ask “what if?”; Esc or right-click cancels")
    return "\n".join(lines)


def ridges(chart: Chart, theme, devices: list[Shown], what_if: set[str]) -> tuple[list, list[Request]]:
    """A mark where each device's binding roof meets its main-memory roof; the primary
    device's is labelled with its intensity (and its name, when several devices are shown)."""
    markers, requests = [], []
    for index, shown in enumerate(devices):
        ridge = shown.binding.value / shown.hardware.bandwidth_bytes_per_s
        if not chart.x_range[0] < ridge < chart.x_range[1]:
            continue
        colour = shown.colour(theme)
        size = 11 * chart.page.lines
        center = (chart.x_px(ridge), chart.y_px(shown.binding.value))
        tooltip = (f"{shown.hardware.name}: ridge {format_number(ridge)} FLOP/byte ({shown.binding.label} "
                   f"peak / main-memory bandwidth)")
        marker = Marker(center, shown.symbol, size,
                        Stroke(colour, 1.6 * chart.page.lines), theme.background, ElementKind.RIDGE,
                        shown.hardware.id,
                        tooltip)
        markers.append(marker)
        if index:
            continue
        badge = " (what-if)" if shown.hardware.id in what_if else ""
        whose = f"{shown.hardware.label} " if len(devices) > 1 else ""  # several ridges: say whose
        text = Text(f"{whose}ridge {format_number(ridge)} FLOP/byte{badge}", center, chart.page.text,
                    colour, ElementKind.RIDGE, tooltip=tooltip)
        gap = size / 2 + 3
        candidates = Spots([(text, (center[0] + dx * gap, center[1] + dy * gap), 0.0, align, side, 0.0)
                            for dx, dy, align, side in ((-1, -1, "end", "above"), (1, 1, "start", "below"),
                                                        (-1, 1, "end", "below"), (1, -1, "start", "above"))])
        requests.append(Request(candidates, marker))
    return markers, requests


def link_roofs(chart: Chart, a: Analysis, theme, multi: bool = False) -> list[tuple[Line, Text]]:
    """A roof for each link the workload's communication ops cross (a step spread over
    devices): bytes/s of the link per direction, slanted like a memory roof, up to the
    binding compute roof; each with its label ("NVLink 4 450 GB/s per direction", after the
    primary device's name when several are shown: the links are the primary's). A
    communication op's point sits on or below it: its time adds the link's latency."""
    crossed = {link.name: link for link in a.links if link is not None}
    out = []
    unit = chart.page.lines * theme.pen_factor
    colour = dict(theme.groups)["communication"]
    (x_low, x_high), (y_low, _) = chart.x_range, chart.y_range
    for link in crossed.values():
        rate = link.per_direction_bytes_per_s
        start = max(x_low, y_low / rate)
        end = min(a.roofs.matrix.flops_per_s / rate, x_high)
        if start >= end:
            continue
        ends = ((chart.x_px(start), chart.y_px(start * rate)), (chart.x_px(end), chart.y_px(end * rate)))
        owner = f"{a.hardware.label}: " if multi else ""
        words = f"{owner}{link.name} {format_si(rate, 'B/s')} per direction"
        published = "both directions together" if link.direction == "both" else "each direction"
        latency, measured = link.latency_s, link.latency_provenance
        assert latency is not None and measured is not None  # the catalogue requires a link's latency
        tooltip = (f"{a.hardware.name}: {link.name}, {format_si(link.bandwidth_bytes_per_s, 'B/s')} "
                   f"published ({published}); a ring sends and receives at once: {format_si(rate, 'B/s')}\n"
                   f"plus {latency * 1e6:.1f} µs a transfer step ({measured.note})\n"
                   f"source: {link.provenance.url}")
        dashed = Stroke(colour, 2.0 * unit, (2.0 * unit, 2.5 * unit))
        line = Line(ends, dashed, ElementKind.LINK, tooltip=tooltip)
        out.append((line, Text(words, ends[0], chart.page.text, colour, ElementKind.LINK, tooltip=tooltip)))
    return out


def one_naming(placed: list[Text], labels: tuple[str, ...],
               left: list[Text] | None = None) -> tuple[list[Text], list[Text]]:
    """(``placed``, ``left``) with their roof and link labels all carrying their device's
    name or none: where one on the plot found room only without it, the others drop theirs
    too, each in place (a shorter text at the same anchor covers part of the longer one's
    box, so nothing new collides), and so do the labels ``left`` for the key (the key's
    rows show each device's line, as the plot does). ``labels``: the shown devices' names."""
    names = name_prefixes(labels)
    left = list(left or [])
    named = {t.text.startswith(names) for t in placed if t.kind in NAMED_KINDS}
    if False not in named:
        return placed, left
    return [unnamed(t, names) for t in placed], [unnamed(t, names) for t in left]


NAMED_KINDS = (ElementKind.ROOF, ElementKind.LINK)


def name_prefixes(labels: tuple[str, ...]) -> tuple[str, ...]:
    """What a roof or link label may start with: "H100 SXM: ", or for coinciding roofs the
    devices' names in their order ("H100 SXM, H200 SXM: "), the longest first."""
    subsets = (tuple(label for i, label in enumerate(labels) if mask >> i & 1)
               for mask in range(1, 2 ** len(labels)))
    return tuple(sorted((", ".join(subset) + ": " for subset in subsets), key=len, reverse=True))


def unnamed(t: Text, names: tuple[str, ...]) -> Text:
    """A roof or link label ``t`` without the device's name it starts with (``names``:
    "H100 SXM: " …), in place; any other text as it is."""
    if t.kind not in NAMED_KINDS or not t.text.startswith(names):
        return t
    words = t.text[len(next(n for n in names if t.text.startswith(n))):]  # "Lab: A100" stays whole
    width = text_width(words, t.size, t.bold)
    # ``replace(t, text=words, dx=…)`` written out (a layout asks often); dx is 0, −width or −width/2
    return Text(words, t.origin, t.size, t.colour, t.kind, t.angle, t.dx * width / t.width, t.dy, t.bold,
                t.ref, t.tooltip)
