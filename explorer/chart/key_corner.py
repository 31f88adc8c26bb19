"""The key inside the plot: an empty corner where it covers no line, point or label (the
bottom-right one, else the top-left), with a row for each label the plot had no room
for; and a watch that tells the label layout when the key can no longer fit there,
whatever the labels still to come do, so a crowded chart does not lay out every label
only to find the key must go beside it."""

from __future__ import annotations

from collections.abc import Callable

from explorer.chart.elements import Chart, ElementKind, Text
from explorer.chart.geometry import Rect, bands, box, overlap, segment_shape, split, square
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
    pad, shapes = 0.5 * chart.page.text, _shapes(lines, markers)
    return next((box for box in _corners(chart, rows) if _clear(box.grow(pad).corners(), shapes)
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


def _shapes(lines, markers) -> list[tuple]:
    """(shape, box) of every line segment (but the grid's and the axes') and marker the
    key must not cover, made once for every corner it tries."""
    segments = [segment_shape(a, b) for line in lines if line.kind not in (ElementKind.GRID, ElementKind.AXIS)
                for a, b in zip(line.points, line.points[1:], strict=False)]
    squares = [square(m.center, m.size / 2) for m in markers]
    return [(shape, box(shape)) for shape in (*segments, *squares)]


def _clear(corners, shapes: list[tuple]) -> bool:
    """Whether the box ``corners`` crosses no line and covers no marker of ``_shapes``
    (``crosses``, ``overlap``: boxes first, then the separating axes)."""
    left, top, right, bottom = box(corners)
    edges = None
    for shape, near in shapes:
        if near[2] <= left or right <= near[0] or near[3] <= top or bottom <= near[1]:  # ``apart``
            continue
        edges = bands(corners) if edges is None else edges
        if not split(edges, shape) and not split(bands(shape), corners):
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
        self._shapes: list[tuple] | None = None  # the lines' and markers' (``_shapes``), once
        self._short: dict[int, tuple] = {}  # a placed label's shortest form's corners, by its id

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
            if self._shapes is None:
                self._shapes = _shapes(self._lines, self._markers)
            clear = _clear(corners, self._shapes)
            self._free, self._seen = (corners, 0) if clear else (None, len(placed))

    def _covered(self, corners, texts: list[Text]) -> bool:
        return any(overlap(corners, self._shortest_corners(text)) for text in texts)

    def _shortest_corners(self, text: Text) -> tuple:
        # (by id: the placed labels stay in the layout's list while it asks)
        corners = self._short.get(id(text))
        if corners is None:
            corners = self._short[id(text)] = self._shortest(text).corners
        return corners
