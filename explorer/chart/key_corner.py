"""The key inside the plot: an empty corner where it covers no line, point or label (the
bottom-right one, else the top-left), with a row for each label the plot had no room
for; and a watch that tells the label layout when the key can no longer fit there,
whatever the labels still to come do, so a crowded chart does not lay out every label
only to find the key must go beside it."""

from __future__ import annotations

from collections.abc import Callable

from explorer.chart.elements import Chart, ElementKind, Text
from explorer.chart.geometry import Rect, apart, bands, box, overlap, segment_shape, split, square
from explorer.chart.key import Entry, fitted, key_width

UNLABELLED = "Unlabelled (no room)"


def overflow_rows(overflow: list[Text], theme, width: float | None, size: float) -> list[Entry]:
    """The key's rows for labels with no room on the plot, under a heading; ``width``: the
    key column's (None: the key is as wide as its longest row)."""
    if not overflow:
        return []
    return [Entry(UNLABELLED, "heading", bold=True, live=True),
            *(_unlabelled(t, theme, width, size) for t in overflow)]


def _unlabelled(text: Text, theme, width: float | None, size: float) -> Entry:
    """A key row for a label with no room on the plot: its full text ("RTX 4090: fp32 vector
    82.6 TFLOP/s"), or without the device's name (its colour and line say it) when the full
    text would take more than two rows of a key column ``width`` wide or be cut: a number
    must never be cut, and every unlabelled roof must find a row."""
    def entry(words: str) -> Entry:
        if text.kind == ElementKind.COMPARED:
            return Entry(words, "marker", text.colour, "hexagon", fill=theme.track, live=True)
        return Entry(words, "marker" if text.kind == ElementKind.RIDGE else "line", text.colour,
                     "diamond" if text.kind == ElementKind.RIDGE else "", fill=theme.background, live=True)

    full = entry(text.text)
    if width is None or ": " not in text.text:
        return full
    rows = fitted(full, size, width)
    if len(rows) <= 2 and not rows[-1].text.endswith("…"):
        return full
    return entry(text.text.split(": ", 1)[1])


def empty_corner(chart: Chart, rows: list[Entry], lines, markers, texts) -> Rect | None:
    """Where the key fits inside the plot without covering a line, a point or a label:
    the bottom-right corner, else the top-left one (None: neither)."""
    pad = 0.5 * chart.page.text
    return next((box for box in _corners(chart, rows) if _clear(box.grow(pad).corners(), lines, markers)
                 and not any(overlap(box.grow(pad).corners(), t.corners) for t in texts)), None)


def _corners(chart: Chart, rows: list[Entry]) -> list[Rect]:
    """The key's box in each corner it may take, the first preferred: a key of more or
    wider rows has a box that holds the smaller one's (each grows out of its corner)."""
    size, plot = chart.page.text, chart.plot
    width = key_width(rows, size) + size
    height = 1.45 * size * len(rows) + 0.5 * size
    pad = 0.5 * size
    boxes = []
    places = ((plot.right - width - pad, plot.bottom - height - pad), (plot.left + pad, plot.top + pad))
    for left, top in places:
        if left >= plot.left and top >= plot.top:
            boxes.append(Rect(left, top, left + width, top + height))
    return boxes


def _clear(corners, lines, markers) -> bool:
    """Whether the box ``corners`` crosses no line (but the grid and axes) and covers no
    marker (``crosses``, ``overlap``: boxes first, the box's own bands worked out once)."""
    own, edges = box(corners), bands(corners)
    for line in lines:
        if line.kind in (ElementKind.GRID, ElementKind.AXIS):
            continue
        for a, b in zip(line.points, line.points[1:], strict=False):
            shape = segment_shape(a, b)
            if not apart(own, box(shape)) and not split(edges, shape) and not split(bands(shape), corners):
                return False
    for m in markers:
        shape = square(m.center, m.size / 2)
        if not apart(own, box(shape)) and not split(edges, shape) and not split(bands(shape), corners):
            return False
    return True


class CornerWatch:
    """Asked by the label layout after each label (the texts placed and left so far):
    whether the key may still find an empty corner. It says no only when no corner can
    hold the key whatever the labels still to come do: a label left adds a row (a box
    that holds the one before), and a label placed stays on the plot, at least in its
    shortest form (``shortest``: the form it may still take, a roof label without its
    device's name)."""

    def __init__(self, chart: Chart, lines, markers, rows: Callable[[list[Text]], list[Entry]],
                 shortest: Callable[[Text], Text]) -> None:
        self._chart, self._lines, self._markers = chart, lines, markers
        self._rows, self._shortest = rows, shortest
        self._left = -1  # the number of labels left the corners were made for
        self._corners: list = []  # the padded boxes not yet looked at, the preferred first
        self._free = None  # a padded box clear of everything so far
        self._seen = 0  # the placed labels it was checked against

    def __call__(self, placed: list[Text], left: list[Text]) -> bool:
        if len(left) != self._left:
            pad = 0.5 * self._chart.page.text
            self._corners = [box.grow(pad).corners() for box in _corners(self._chart, self._rows(left))]
            self._left, self._free = len(left), None
        while True:
            if self._free is not None and not self._covered(self._free, placed[self._seen:]):
                self._seen = len(placed)
                return True
            if not self._corners:
                return False
            corners = self._corners.pop(0)
            clear = _clear(corners, self._lines, self._markers)
            self._free, self._seen = (corners, 0) if clear else (None, len(placed))

    def _covered(self, corners, texts: list[Text]) -> bool:
        return any(overlap(corners, self._shortest(text).corners) for text in texts)
