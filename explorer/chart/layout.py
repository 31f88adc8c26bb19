"""Label placement: each label tries its candidate positions in order and takes the first
that stays inside the plot and overlaps no label placed before it, no marker and no line it
does not belong to. A label with no free place goes to the key instead (never on top of
another). A pure function of the chart's geometry, so it is tested without Qt."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from explorer.chart.elements import ElementKind, Line, Marker, Text
from explorer.chart.geometry import Point, Rect, apart, box, crosses, inside, nearest, overlap, square

IGNORED_LINES = (ElementKind.GRID, ElementKind.TRACK, ElementKind.AXIS)  # labels may sit over these
DRAG_TRIES = 16  # places a label whose hinted one is taken tries during a drag, besides it


class Spots(Sequence):
    """Candidate places for a text, made only when looked at: most labels take one of
    their first places, and a chart has hundreds of candidates."""

    def __init__(self, specs: list[tuple]) -> None:
        self._specs = specs  # (text, origin, angle, align, side, gap) for ``at``

    def __len__(self) -> int:
        return len(self._specs)

    def __getitem__(self, index: int) -> Text:
        return at(*self._specs[index])

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
    dx = {"start": 0.0, "end": -text.width, "middle": -text.width / 2}[align]
    dy = {"above": -(text.height + gap), "below": gap, "centre": -text.height / 2}[side]
    return Text(text.text, origin, text.size, text.colour, text.kind, angle, dx, dy, text.bold, text.ref,
                text.tooltip)


def _separated(corners, owner: Line, segments) -> bool:
    """Whether another line runs between a label and its own line (the label would read as
    that line's): the straight path from the label's centre to its line crosses one."""
    cx, cy = sum(x for x, _ in corners) / 4, sum(y for _, y in corners) / 4
    foot = min((nearest((cx, cy), a, b) for a, b in zip(owner.points, owner.points[1:], strict=False)),
               key=lambda p: (p[0] - cx) ** 2 + (p[1] - cy) ** 2)
    path = ((cx, cy), foot)
    own = box(path)
    return any(line is not owner and not apart(own, b) and crosses(path, a, b_)
               for line, a, b_, b in segments)


def place(requests: list[Request], plot: Rect, lines: list[Line], markers: list[Marker],
          margin: float = 2.0, hints: tuple[int, ...] = ()) -> tuple[list[Text], list[Text], tuple[int, ...]]:
    """(placed texts, texts with no room (each request's first, fullest text, for the key),
    the candidate each request took or -1) for
    ``requests`` in order of priority. ``hints``: the candidates taken last time (during a
    drag the chart changes a little between frames), tried first; a label that had no room
    last time is not tried again, and one whose place is taken tries only the ``DRAG_TRIES``
    places nearest it: a frame of a drag never searches every place (the full layout
    follows when the drag ends)."""
    placed: list[tuple[Text, tuple]] = []
    left: list[Text] = []
    chosen: list[int] = []
    segments = [(line, a, b, box((a, b))) for line in lines if line.kind not in IGNORED_LINES
                for a, b in zip(line.points, line.points[1:], strict=False)]
    boxes = [(marker, corners, box(corners)) for marker in markers
             for corners in (square(marker.center, marker.size / 2 + 1),)]

    def free(candidate: Text, owner) -> tuple | None:
        corners = candidate.corners
        if not inside(corners, plot, margin):
            return None
        own = box(corners)
        if any(overlap(corners, other.corners, (own, b)) for other, b in placed if not apart(own, b)):
            return None
        if any(marker is not owner and overlap(corners, c, (own, b))
               for marker, c, b in boxes if not apart(own, b)):
            return None
        if any(line is not owner and _crosses(corners, a, b_, (own, b))
               for line, a, b_, b in segments if not apart(own, b)):
            return None
        if isinstance(owner, Line) and _separated(corners, owner, segments):
            return None
        return own

    for number, request in enumerate(requests):
        count = len(request.candidates)
        hint = hints[number] if number < len(hints) and hints[number] < count else None
        if hint == -1:
            order = []
        elif hint is not None:  # the places nearest the hinted one (its neighbours along the line)
            nearest = sorted((i for i in range(count) if i != hint), key=lambda i: abs(i - hint))
            order = [hint, *nearest[:DRAG_TRIES]]
        else:
            order = list(range(count))
        for index in order:
            candidate = request.candidates[index]
            own = free(candidate, request.owner)
            if own is not None:
                placed.append((candidate, own))
                chosen.append(index)
                break
        else:
            left.append(request.candidates[0])  # the first is the fullest text: the key has room
            chosen.append(-1)
    return [text for text, _ in placed], left, tuple(chosen)


def _crosses(corners, start: Point, end: Point, boxes) -> bool:
    return crosses(corners, start, end) if start == end else overlap(corners, (start, end), boxes)
