"""Label placement: each label tries its candidate positions in order and takes the first
that stays inside the plot and overlaps no label placed before it, no marker and no line it
does not belong to. A label with no free place goes to the key instead (never on top of
another). A pure function of the chart's geometry, so it is tested without Qt."""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import overload

from explorer.chart.elements import ElementKind, Line, Marker, Text
from explorer.chart.geometry import (
    Point,
    Rect,
    apart,
    bands,
    box,
    nearest,
    quad,
    segment_shape,
    split,
    square,
)

IGNORED_LINES = (ElementKind.GRID, ElementKind.TRACK, ElementKind.AXIS)  # labels may sit over these
SLACK = 1e-6  # pixels: far above the rounding of a page's coordinates, far below a marker
DRAG_TRIES = 16  # places a label whose hinted one is taken tries during a drag, besides it
Placement = tuple[list[Text], list[Text], tuple[int, ...]]


class Spots(Sequence[Text]):
    """Candidate places for a text, made only when looked at: most labels take one of
    their first places, and a chart has hundreds of candidates. A place's shape is worked
    out once: the spots of a roof's label are kept while the roof stays put (a change of
    batch, a star drag, another roof's drag), and their shapes with them."""

    def __init__(self, specs: list[tuple]) -> None:
        self._specs = specs  # (text, origin, angle, align, side, gap) for ``at``
        self._shapes: list[tuple | None] = [None] * len(specs)
        self._lines: tuple | None = None  # the lines ``_clear`` was worked out for
        self._clear: list[int | None] = []

    def __len__(self) -> int:
        return len(self._specs)

    @overload
    def __getitem__(self, index: int) -> Text: ...

    @overload
    def __getitem__(self, index: slice) -> list[Text]: ...

    def __getitem__(self, index: int | slice) -> Text | list[Text]:
        if isinstance(index, slice):
            return [at(*spec) for spec in self._specs[index]]
        return at(*self._specs[index])

    def corners(self, index: int) -> tuple[Point, ...]:
        """The corners of candidate ``index``, without making its text (the same as
        ``self[index].corners``)."""
        return self.shape(index)[0]

    def shape(self, index: int) -> tuple:
        """(corners, box, ``bands``) of candidate ``index`` (``_shape``)."""
        shape = self._shapes[index]
        if shape is None:
            text, origin, angle, align, side, gap = self._specs[index]
            dx, dy = _offsets(text, align, side, gap)
            if angle == 0.0:  # level: ``quad``'s corners, its box, no bands (the boxes settle it)
                (ax, ay), right, bottom = origin, dx + text.width, dy + text.height
                left, top, right, bottom = ax + dx, ay + dy, ax + right, ay + bottom
                corners = ((left, top), (right, top), (right, bottom), (left, bottom))
                shape = corners, (left, top, right, bottom), ()
            else:
                shape = _shape(quad(origin, text.width, text.height, math.radians(angle), dx, dy))
            self._shapes[index] = shape
        return shape

    def clear_of(self, lines: tuple) -> list[int | None]:
        """What ``lines`` leave of each place (``_free``: BLOCKED, APART, CLEAR; None: not
        yet known), for the lines of the last layout: a roof's places keep it while every
        line stays put (a change of batch, a star drag). ``lines`` holds the segments' shapes
        and the owner's among them, not the owner: a ``Spots`` belongs to one line."""
        if lines != self._lines:
            self._lines, self._clear = lines, [None] * len(self._specs)
        return self._clear

    def __add__(self, other: Spots) -> Spots:
        return Spots(self._specs + other._specs)


@dataclass(frozen=True)
class Request:
    """A label and where it may go: candidate texts (the same text, or a shorter one, at
    different places; the shortest last)."""

    candidates: Sequence[Text]
    owner: Line | Marker | None = None  # the line or marker it labels (not an obstacle to it)


def at(text: Text, origin: Point, angle: float = 0.0, align: str = "start", side: str = "above",
       gap: float = 4.0) -> Text:
    """``text`` placed at ``origin``: ``align`` start, end or middle along a line turned by
    ``angle`` degrees; ``side`` above, below or centre of it, ``gap`` pixels away."""
    dx, dy = _offsets(text, align, side, gap)
    return Text(text.text, origin, text.size, text.colour, text.kind, angle, dx, dy, text.bold, text.ref,
                text.tooltip)


def _offsets(text: Text, align: str, side: str, gap: float) -> tuple[float, float]:
    # (no dictionaries made per call: a chart tests hundreds of places)
    if align not in ("start", "end", "middle") or side not in ("above", "below", "centre"):
        raise ValueError(f"a label aligns to start, end or middle and sits above, below or centre: "
                         f"not {align}, {side}")
    dx = 0.0 if align == "start" else -text.width if align == "end" else -text.width / 2
    dy = -(text.height + gap) if side == "above" else gap if side == "below" else -text.height / 2
    return dx, dy


def stroke_shape(start: Point, end: Point, half: float) -> tuple[Point, ...]:
    """What a label must not touch of a line's segment: the band its stroke covers, ``half``
    its width each side (a projector's roofs are 5 to 7 px wide: a label that only misses
    the centre line would sit on the stroke), or the segment itself for a hairline."""
    if half < 0.75 or start == end:
        return segment_shape(start, end)
    (ax, ay), (bx, by) = start, end
    length = math.hypot(bx - ax, by - ay)
    nx, ny = -(by - ay) / length * half, (bx - ax) / length * half
    return ((ax + nx, ay + ny), (bx + nx, by + ny), (bx - nx, by - ny), (ax - nx, ay - ny))


def _separated(corners, owner: Line, segments: list[tuple]) -> bool:
    """Whether the label would read as another line's: another line runs between it and its
    own line (the straight path from the label's centre to its line crosses one: ``crosses``),
    or, for a level roof's label, another line passes nearer its centre than its own does
    (a label below its roof, just above another device's: issue 58). ``segments``: the lines' obstacles, their
    shapes and bands made once."""
    (x0, y0), (x1, y1), (x2, y2), (x3, y3) = corners
    cx, cy = (x0 + x1 + x2 + x3) / 4, (y0 + y1 + y2 + y3) / 4
    foot = min((nearest((cx, cy), a, b) for a, b in zip(owner.points, owner.points[1:], strict=False)),
               key=lambda p: (p[0] - cx) ** 2 + (p[1] - cy) ** 2)
    path = ((cx, cy), foot)
    own, across = box(path), bands(path)
    if any(line is not owner and not apart(own, near) and not split(across, shape)
           and not split(line_bands, path) for line, shape, line_bands, near in segments):
        return True
    if owner.points[0][1] != owner.points[-1][1]:
        return False  # a slope's label sits along it (its places keep near it)
    reach = (foot[0] - cx) ** 2 + (foot[1] - cy) ** 2
    # (only lines whose box comes that near can be nearer: most are passed over by their box)
    r = math.sqrt(reach)
    return any(line is not owner and not apart((cx - r, cy - r, cx + r, cy + r), near)
               and _squared((cx, cy), *_ends(shape)) < reach for line, shape, _, near in segments)


def _ends(shape: tuple) -> tuple[Point, Point]:
    """A segment's ends from its obstacle's shape (``stroke_shape``, ``segment_shape``)."""
    if len(shape) == 4:  # a stroke's band: the middles of its ends
        (ax, ay), (bx, by), (cx, cy), (dx, dy) = shape
        return ((ax + dx) / 2, (ay + dy) / 2), ((bx + cx) / 2, (by + cy) / 2)
    return shape[0], shape[1] if len(shape) == 2 else shape[0]


def _squared(point: Point, a: Point, b: Point) -> float:
    x, y = nearest(point, a, b)
    return (x - point[0]) ** 2 + (y - point[1]) ** 2


@overload
def place(requests: list[Request], plot: Rect, lines: list[Line], markers: list[Marker],
          margin: float = 2.0, hints: tuple[int, ...] = (), room: None = None) -> Placement: ...


@overload
def place(requests: list[Request], plot: Rect, lines: list[Line], markers: list[Marker],
          margin: float = 2.0, hints: tuple[int, ...] = (),
          room: Callable[[list[Text], list[Text]], bool] | None = None) -> Placement | None: ...


def place(requests: list[Request], plot: Rect, lines: list[Line], markers: list[Marker],
          margin: float = 2.0, hints: tuple[int, ...] = (),
          room: Callable[[list[Text], list[Text]], bool] | None = None) -> Placement | None:
    """(placed texts, texts with no room (each request's first, fullest text, for the key),
    the candidate each request took or -1) for
    ``requests`` in order of priority. ``hints``: the candidates taken last time (during a
    drag the chart changes a little between frames), tried first; a label that had no room
    last time is not tried again, and one whose place is taken tries only the ``DRAG_TRIES``
    places nearest it: a frame of a drag never searches every place (the full layout
    follows when the drag ends). ``room``: asked after each label with the texts placed
    and left so far; when it says no, the layout is given up (None)."""
    # What a label must not cover, as (owner, shape, its bands, box): the lines' segments,
    # the markers (``_Marks``) and the labels placed so far.
    segments = [_obstacle(line, shape, box(shape)) for line in lines if line.kind not in IGNORED_LINES
                for a, b in zip(line.points, line.points[1:], strict=False)
                for shape in (stroke_shape(a, b, line.stroke.width / 2),)]
    marks = _Marks([_obstacle(marker, corners, box(corners)) for marker in markers
                    for corners in (square(marker.center, marker.size / 2 + 1),)])
    bounds = (plot.left + margin, plot.top + margin, plot.right - margin, plot.bottom - margin)
    shapes = tuple(shape for _, shape, _, _ in segments)  # what the places' ``clear_of`` is for,
    owned: dict[int, list[int]] = {}  # with the segments of the label's own line
    for number, (line, *_) in enumerate(segments):
        owned.setdefault(id(line), []).append(number)
    labels: list[tuple] = []
    placed: list[Text] = []
    left: list[Text] = []
    chosen: list[int] = []
    for number, request in enumerate(requests):
        candidates, owner = request.candidates, request.owner
        hint = hints[number] if number < len(hints) else None
        clear: list[int | None] = candidates.clear_of((shapes, tuple(owned.get(id(owner), ())))) \
            if isinstance(candidates, Spots) else [None] * len(candidates)
        # (a place the lines block, as last found, is passed over without a test: ``_free``
        # would say no)
        taken = next((index for index in _order(len(candidates), hint) if clear[index] != BLOCKED
                      and _free(_shape_of(candidates, index), owner, labels, marks, segments, bounds, clear,
                                index)), -1)
        if taken == -1:
            left.append(candidates[0])  # the first is the fullest text: the key has room
        else:
            text = candidates[taken]
            labels.append(_obstacle(None, text.corners, box(text.corners)))
            placed.append(text)
        chosen.append(taken)
        if room is not None and not room(placed, left):
            return None
    return placed, left, tuple(chosen)


class _Marks:
    """The markers' obstacles by the left edge of their boxes: a place tests only those
    whose box can reach across it (the rest are apart from it, ``apart``)."""

    def __init__(self, obstacles: list[tuple]) -> None:
        self.obstacles = sorted(obstacles, key=lambda o: o[3][0])
        self.lefts = [o[3][0] for o in self.obstacles]
        self.reach = max((o[3][2] - o[3][0] for o in self.obstacles), default=0.0)

    def near(self, left: float, right: float) -> list[tuple]:
        """Those whose box may overlap the columns from ``left`` to ``right`` (and a few
        that do not: ``left - reach`` rounds, so the search starts ``SLACK`` further left;
        the test that follows settles each)."""
        start = bisect_right(self.lefts, left - self.reach - SLACK)
        return self.obstacles[start:bisect_left(self.lefts, right)]


def _shape(corners: tuple[Point, ...]) -> tuple:
    """What a label's test needs of a place: its corners, their box and ``bands``."""
    return corners, box(corners), bands(corners)


def _shape_of(candidates: Sequence[Text], index: int) -> tuple:
    return candidates.shape(index) if isinstance(candidates, Spots) else _shape(candidates[index].corners)


def _order(count: int, hint: int | None) -> list[int]:
    """The candidates a label tries, in order: all of them; none when it had no room last
    frame; the hinted one and the places nearest it (its neighbours along the line)."""
    if hint is None or hint >= count:
        return list(range(count))
    if hint == -1:
        return []
    nearest = sorted((i for i in range(count) if i != hint), key=lambda i: abs(i - hint))
    return [hint, *nearest[:DRAG_TRIES]]


def _obstacle(owner, shape, bounds: tuple) -> tuple:
    """What a label must not cover: its owner (a line or marker, None for a label), its
    shape, the ``bands`` a separating-axis test needs of it, and its box; a line segment's
    box is the segment's even where a point stands for a tiny triangle (``segment_shape``)."""
    return owner, shape, bands(shape), bounds


BLOCKED, APART, CLEAR = 0, 1, 2  # what a place's ``clear_of`` says of the lines (None: not known)


def _free(place: tuple, owner, labels: list[tuple], marks: _Marks, segments: list[tuple], bounds: tuple,
          clear: list[int | None], index: int) -> bool:
    """Whether a label's ``place`` (``_shape``) stays inside ``bounds``, covers no line but
    its ``owner`` and none of the ``labels`` placed and the ``marks`` near it, with no
    other line between it and its own line (``_separated``). What the lines say is kept
    in ``clear[index]``: BLOCKED, APART (from their segments; ``_separated`` not yet asked,
    as the labels or markers turned the place away) or CLEAR."""
    left, top, right, bottom = place[1]
    if left < bounds[0] or top < bounds[1] or right > bounds[2] or bottom > bounds[3]:
        return False
    known = clear[index]
    if known is None:
        known = clear[index] = APART if _apart(place, owner, segments) else BLOCKED
    if known == BLOCKED or not _apart(place, owner, labels) \
            or not _apart(place, owner, marks.near(left, right)):
        return False
    if known == APART:
        between = isinstance(owner, Line) and _separated(place[0], owner, segments)
        known = clear[index] = BLOCKED if between else CLEAR
    return known == CLEAR


def _apart(place: tuple, owner, obstacles: list[tuple]) -> bool:
    """Whether a place covers none of ``obstacles`` but its ``owner``: boxes first
    (``apart``), then the separating axes of each (``split``), every shape's bands
    worked out once."""
    corners, (left, top, right, bottom), own = place
    for other, shape, other_bands, near in obstacles:
        if near[2] <= left or right <= near[0] or near[3] <= top or bottom <= near[1] \
                or (other is not None and other is owner):  # boxes apart, or its own
            continue
        if not split(own, shape) and not split(other_bands, corners):
            return False
    return True
