"""A key under the chart: where a page is taller than it is wide (a narrow window's
chart), a column beside the plot would leave it a third of the width, so a key with no
empty corner goes into a band under the axis title, in up to three columns."""

from __future__ import annotations

import math
from dataclasses import replace

from explorer.chart.elements import Chart, Page, Rect
from explorer.chart.key import Entry, draw_key, fitted, key_width

KEY_BELOW_ASPECT = 1.25  # a page narrower than this (width ÷ height) puts a key with no corner below
MAX_BAND = 0.4  # a key band taller than this share of the page goes beside the plot instead


def key_band(entries: list[Entry], page: Page) -> tuple[int, float]:
    """(columns, height) of a key under the chart: as many columns as its widest entry
    allows (at most three), tall enough for its rows and for the labels that may find no
    room on the plot (two rows for each line the key shows, a device's roofs among them)."""
    pad, size = 0.6 * page.text, page.text
    width = page.width - 2 * pad
    column = min(key_width(entries, size), width)
    columns = max(1, min(3, int(width // max(column, 1.0))))
    rows = sum(len(fitted(e, size, width / columns)) for e in entries)
    rows += 1 + 2 * sum(1 for e in entries if e.swatch == "line")  # "Unlabelled", and its labels
    return columns, ((math.ceil(rows / columns) + 1) * 1.45 + 0.5) * size  # + the "…" row's room


def with_key_below(chart: Chart, lines, markers, texts, rows: list[Entry], band: float, columns: int,
                    theme, overflow, chosen) -> Chart:
    """The chart with its key in ``columns`` columns in the band under the axis title."""
    page = chart.page
    pad, size = 0.6 * page.text, page.text
    top = page.height - pad - band
    box = Rect(pad, top, page.width - pad, page.height - pad)
    width = (box.right - box.left) / columns
    per_column = math.ceil(sum(len(fitted(e, size, width)) for e in rows) / columns)
    parts: list[list] = [[], [], []]
    start = 0
    for c in range(columns):
        chunk, count = [], 0
        while start < len(rows) and (count < per_column or c == columns - 1):
            count += len(fitted(rows[start], size, width))
            chunk.append(rows[start])
            start += 1
        left = box.left + c * width
        for part, drawn in zip(parts, draw_key(chunk, left, box.top, left + width - pad, box.bottom, size,
                                               theme.foreground, theme.background, page.lines), strict=True):
            part.extend(drawn)
    return replace(chart, lines=(*lines, *parts[0]), markers=(*markers, *parts[1]), texts=(*texts, *parts[2]),
                   overflow=tuple(overflow), key=box, placement=chosen)
