"""Label placement: each label tries its candidate positions in order and takes the first
that stays inside the plot and overlaps no label placed before it, no marker and no line it
does not belong to. A label with no free place goes to the key instead (never on top of
another). A pure function of the chart's geometry, so it is tested without Qt."""

from __future__ import annotations

from dataclasses import dataclass, replace

from explorer.chart.elements import Line, Marker, Text
from explorer.chart.geometry import Point, Rect, apart, box, crosses, inside, overlap, square

IGNORED_LINES = ("grid", "track", "axis")  # labels may sit over these


@dataclass(frozen=True)
class Request:
    """A label and where it may go: candidate texts (the same text, or a shorter one, at
    different places; the shortest last)."""

    candidates: tuple[Text, ...]
    owner: Line | Marker | None = None  # the line or marker it labels (not an obstacle to it)


def at(text: Text, origin: Point, angle: float = 0.0, align: str = "start", side: str = "above",
       gap: float = 4.0) -> Text:
    """``text`` placed at ``origin``: ``align`` start, end or middle along a line turned by
    ``angle`` degrees; ``side`` above, below or centre of it, ``gap`` pixels away."""
    dx = {"start": 0.0, "end": -text.width, "middle": -text.width / 2}[align]
    dy = {"above": -(text.height + gap), "below": gap, "centre": -text.height / 2}[side]
    return replace(text, origin=origin, angle=angle, dx=dx, dy=dy)


def _nearest(point: Point, start: Point, end: Point) -> Point:
    (px, py), (ax, ay), (bx, by) = point, start, end
    dx, dy = bx - ax, by - ay
    t = max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy or 1.0)))
    return ax + t * dx, ay + t * dy


def _separated(corners, owner: Line, segments) -> bool:
    """Whether another line runs between a label and its own line (the label would read as
    that line's): the straight path from the label's centre to its line crosses one."""
    cx, cy = sum(x for x, _ in corners) / 4, sum(y for _, y in corners) / 4
    foot = min((_nearest((cx, cy), a, b) for a, b in zip(owner.points, owner.points[1:], strict=False)),
               key=lambda p: (p[0] - cx) ** 2 + (p[1] - cy) ** 2)
    path = ((cx, cy), foot)
    return any(line is not owner and crosses(path, a, b) for line, a, b, _ in segments)


def place(requests: list[Request], plot: Rect, lines: list[Line], markers: list[Marker],
          margin: float = 2.0) -> tuple[list[Text], list[Text]]:
    """(placed texts, texts with no room) for ``requests`` in order of priority."""
    placed: list[tuple[Text, tuple]] = []
    left: list[Text] = []
    segments = [(line, a, b, box((a, b))) for line in lines if line.kind not in IGNORED_LINES
                for a, b in zip(line.points, line.points[1:], strict=False)]
    boxes = [(marker, corners, box(corners)) for marker in markers
             for corners in (square(marker.center, marker.size / 2 + 1),)]
    for request in requests:
        for candidate in request.candidates:
            corners = candidate.corners
            if not inside(corners, plot, margin):
                continue
            own = box(corners)
            if any(overlap(corners, other.corners, (own, b)) for other, b in placed if not apart(own, b)):
                continue
            if any(marker is not request.owner and overlap(corners, c, (own, b))
                   for marker, c, b in boxes if not apart(own, b)):
                continue
            if any(line is not request.owner and _crosses(corners, a, b_, (own, b))
                   for line, a, b_, b in segments if not apart(own, b)):
                continue
            if isinstance(request.owner, Line) and _separated(corners, request.owner, segments):
                continue
            placed.append((candidate, own))
            break
        else:
            left.append(request.candidates[-1])  # the last is the shortest text
    return [text for text, _ in placed], left


def _crosses(corners, start: Point, end: Point, boxes) -> bool:
    return crosses(corners, start, end) if start == end else overlap(corners, (start, end), boxes)
