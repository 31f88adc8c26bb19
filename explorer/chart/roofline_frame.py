"""The frame around a roofline chart's plot: its title (the workload and the devices by
default), the axes' decades, ticks and titles, the memory note, the key's column or band,
and the plot rectangle they leave (kept during a drag)."""

from __future__ import annotations

import math
from functools import lru_cache

from explorer.chart.axes_frame import tick_label
from explorer.chart.elements import Chart, ElementKind, Line, Page, Stroke, Text
from explorer.chart.geometry import Rect, overlap
from explorer.chart.heading import heading
from explorer.chart.heading import lines as wrapped
from explorer.chart.key import Entry, key_width
from explorer.chart.memory_note import memory_note
from explorer.chart.options import ChartOptions
from explorer.chart.snapshot import Snapshot, Source
from explorer.chart.text import LINE_HEIGHT, text_width
from explorer.core.analysis.report_words import step_words

X_TITLE, Y_TITLE = "Arithmetic intensity (FLOP/byte)", "Performance (FLOP/s)"


def default_title(shot: Snapshot | Source) -> str:
    """"Llama 3 8B on H100 SXM vs MI300X: decode, batch 1 …, bf16"."""
    shot = shot if isinstance(shot, Snapshot) else Snapshot.of(shot)
    names = " vs ".join(d.hardware.label for d in shot.devices)
    a = shot.analysis
    return f"{a.model.name} on {names}: {step_words(a.model, a.params)}, {a.params.dtype}"


def _decades(low: float, high: float, length: float, room: float) -> list[float]:
    first, last = math.ceil(math.log10(low) - 1e-9), math.floor(math.log10(high) + 1e-9)
    step = max(1, math.ceil((last - first + 1) * room / max(length, 1.0)))
    return [10.0 ** e for e in range(first, last + 1, step)]


def frame(shot: Snapshot, page: Page, options: ChartOptions, theme, entries: list[Entry], band: float = 0.0):
    """The title, subtitle and key column (or a ``band`` under the chart for the key), and
    the plot rectangle they leave."""
    pad = 0.6 * page.text
    width = page.width - 2 * pad
    texts, y = heading(options.title or default_title(shot), options.subtitle or "", page, theme.foreground) \
        if options.heading else ([], pad)
    # The key takes at most 30 % of the width (longer entries are shortened with "…").
    key = min(key_width(entries, page.text), 0.3 * page.width) if entries else 0.0
    tick = text_width("100 G", page.text)
    axis = LINE_HEIGHT * page.text
    right = max(pad, tick / 2 + 2)  # room for half the last tick's label ("100 k")
    bottom = page.height - pad - 2.7 * page.text - band
    note = memory_note(shot.analysis)
    lines = wrapped(note, page.text, width, 2) if note is not None else []
    bottom -= len(lines) * LINE_HEIGHT * page.text  # the note goes under the axis title
    for i, line in enumerate(lines):
        texts.append(Text(line, (page.width / 2, bottom + (2.8 + i * LINE_HEIGHT) * page.text), page.text,
                          theme.foreground, ElementKind.NOTE, dx=-text_width(line, page.text) / 2))
    plot = Rect(pad + axis + tick + pad, y + pad, page.width - right - (key + pad if key else 0.0), bottom)
    return plot, texts


@lru_cache(maxsize=16)  # the same for every frame of a drag: the ranges stay put
def axes(chart: Chart, theme) -> tuple[tuple[Line, ...], tuple[Text, ...]]:
    page, plot = chart.page, chart.plot
    size = page.text
    grid = Stroke(theme.axis, max(1.0, 0.6 * page.lines), opacity=0.25)
    axis = Stroke(theme.axis, 1.2 * page.lines)
    lines = [Line(((plot.left, plot.bottom), (plot.right, plot.bottom)), axis, ElementKind.AXIS),
             Line(((plot.left, plot.top), (plot.left, plot.bottom)), axis, ElementKind.AXIS)]
    texts = []
    for value in _decades(*chart.x_range, plot.width, 3.5 * size):
        x = chart.x_px(value)
        lines.append(Line(((x, plot.top), (x, plot.bottom)), grid, ElementKind.GRID))
        label = tick_label(value)
        texts.append(Text(label, (x, plot.bottom + 0.3 * size), size, theme.foreground, ElementKind.TICK,
                          dx=-text_width(label, size) / 2))
    x_ticks = list(texts)
    for value in _decades(*chart.y_range, plot.height, 2.2 * size):
        y = chart.y_px(value)
        lines.append(Line(((plot.left, y), (plot.right, y)), grid, ElementKind.GRID))
        label = tick_label(value)
        tick = Text(label, (plot.left - 0.4 * size, y), size, theme.foreground, ElementKind.TICK,
                    dx=-text_width(label, size), dy=-0.58 * size)
        if not any(overlap(tick.corners, other.corners) for other in x_ticks):  # the bottom corner
            texts.append(tick)
    title = X_TITLE if text_width(X_TITLE, size) < plot.width else "Intensity (FLOP/byte)"
    texts.append(Text(title, ((plot.left + plot.right) / 2, plot.bottom + 1.55 * size), size,
                      theme.foreground, ElementKind.AXIS, dx=-text_width(title, size) / 2))
    y_title = Y_TITLE if text_width(Y_TITLE, size) < plot.bottom - plot.top else "FLOP/s"  # a short plot
    texts.append(Text(y_title, (0.6 * size, (plot.top + plot.bottom) / 2), size, theme.foreground,
                      ElementKind.AXIS, angle=-90.0, dx=-text_width(y_title, size) / 2))
    return tuple(lines), tuple(texts)


def kept_plot(shot, page, options, theme, plot, frame_texts, band, beside, below):
    """(plot, frame texts, key band) with last frame's plot kept during a drag: its first
    move adds "(what-if)" and a row to the key, and a wider key column or a taller band
    would move everything on the plot (and make last frame's label places mean other
    places). A column keeps its width (entries wrap in it); a band gives up the rows that
    no longer fit (the key ends with "…" until the full layout when the drag ends)."""
    kept, place = options.plot, "beside" if beside else "below" if below else "inside"
    if kept is None or options.key_place != place or (kept.left, kept.top) != (plot.left, plot.top) \
            or kept == plot:  # (a key that moved out of its corner: the plot it had was the whole area)
        return plot, frame_texts, band
    if beside and kept.bottom == plot.bottom:
        return kept, frame_texts, band
    if below and kept.right == plot.right:
        band -= kept.bottom - plot.bottom
        plot, frame_texts = frame(shot, page, options, theme, [], band)
        if abs(plot.bottom - kept.bottom) < 1e-6:
            return kept, frame_texts, band
    return plot, frame_texts, band

