"""The key beside the plot: the devices with their line styles and ridge marks, what the
star, hollow points and point sizes mean, the op colours, measured points, and any label
the plot had no room for. Laid out in a column of its own, so it never covers the data."""

from __future__ import annotations

from dataclasses import dataclass, replace

from explorer.chart import palette
from explorer.chart.elements import Line, Marker, Stroke, Text
from explorer.chart.text import text_width


@dataclass(frozen=True)
class Entry:
    text: str
    swatch: str  # "line" | "marker" | "heading"
    colour: str = ""
    symbol: str = ""
    dash: tuple[float, ...] = ()
    fill: str | None = None
    bold: bool = False


def entry_width(entry: Entry, size: float) -> float:
    return 2.4 * size + text_width(entry.text, size, entry.bold)


def key_width(entries: list[Entry], size: float) -> float:
    return max((entry_width(e, size) for e in entries), default=0.0) + size


def fitted(entry: Entry, size: float, width: float) -> Entry:
    """``entry`` with its text shortened (…) to fit ``width``."""
    text = entry.text
    while len(text) > 1 and entry_width(replace(entry, text=text), size) > width:
        text = text.rstrip("…")[:-1].rstrip() + "…"
    return replace(entry, text=text)


def draw_key(entries: list[Entry], left: float, top: float, right: float, bottom: float, size: float,
             foreground: str, background: str, scale: float) -> tuple[list[Line], list[Marker], list[Text]]:
    """The key's swatches and texts, one entry per row from ``top``, each shortened to end
    before ``right``; rows that would pass ``bottom`` are left out after a "…" row."""
    lines, markers, texts = [], [], []
    row = 1.45 * size
    y = top
    entries = [fitted(e, size, right - left) for e in entries]
    for index, entry in enumerate(entries):
        if y + 2 * row > bottom and index < len(entries) - 1:
            texts.append(Text("…", (left, y), size, foreground, "key"))
            break
        middle = y + row / 2
        swatch = (left, middle)
        if entry.swatch == "line":
            stroke = Stroke(entry.colour, 2.4 * scale, tuple(d * 2.4 * scale for d in entry.dash))
            lines.append(Line(((left, middle), (left + 1.8 * size, middle)), stroke, "key"))
            if entry.symbol:
                markers.append(Marker((left + 0.9 * size, middle), entry.symbol, 0.8 * size,
                                      Stroke(entry.colour, 1.4 * scale), background, "key"))
        elif entry.swatch == "marker":
            markers.append(Marker((left + 0.9 * size, middle), entry.symbol, 0.85 * size,
                                  Stroke(entry.colour, 1.6 * scale), entry.fill, "key"))
        text_left = left if entry.swatch == "heading" else swatch[0] + 2.4 * size
        texts.append(Text(entry.text, (text_left, middle), size, foreground, "key",
                          dy=-0.58 * size, bold=entry.bold))
        y += row
    return lines, markers, texts


def workload_entries(groups: list[str], suites: list[str], theme) -> list[Entry]:
    out = [Entry("whole step (drag: batch)", "marker", theme.foreground, "star", fill=palette.STAR_FILL),
           Entry("Ops (area: share of time)", "heading", bold=True)]
    out += [Entry(group, "marker", palette.GROUP_COLOURS[group], "circle", fill=theme.background)
            for group in groups]
    if suites:
        out.append(Entry("Measured (filled)", "heading", bold=True))
        out += [Entry(suite, "marker", palette.MEASURED, palette.SUITE_SHAPES.get(suite, "circle"),
                      fill=palette.MEASURED) for suite in suites]
    return out
