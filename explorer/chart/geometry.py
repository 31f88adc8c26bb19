"""Shapes on the page for label placement: a label is a (possibly rotated) rectangle given
by its four corners; obstacles are other labels, markers (their bounding squares) and
line segments. Page coordinates are pixels, y downward."""

from __future__ import annotations

import math
from dataclasses import dataclass

Point = tuple[float, float]


@dataclass(frozen=True)
class Rect:
    """A rectangle in page pixels (y grows downwards)."""

    left: float
    top: float
    right: float
    bottom: float

    @property
    def width(self) -> float:
        return self.right - self.left

    @property
    def height(self) -> float:
        return self.bottom - self.top

    def corners(self) -> tuple[Point, Point, Point, Point]:
        return ((self.left, self.top), (self.right, self.top), (self.right, self.bottom),
                (self.left, self.bottom))

    def contains(self, point: Point, margin: float = 0.0) -> bool:
        x, y = point
        return (self.left + margin <= x <= self.right - margin
                and self.top + margin <= y <= self.bottom - margin)

    def grow(self, by: float) -> Rect:
        return Rect(self.left - by, self.top - by, self.right + by, self.bottom + by)


def quad(anchor: Point, width: float, height: float, angle: float, dx: float, dy: float) -> tuple[Point, ...]:
    """The corners of a ``width`` × ``height`` box whose top-left corner sits at offset
    (``dx``, ``dy``) from ``anchor`` in the box's own frame, the frame rotated by ``angle``
    radians (positive: clockwise on the page, as y points down)."""
    c, s = math.cos(angle), math.sin(angle)
    ax, ay = anchor
    right, bottom = dx + width, dy + height  # (written out: a chart tests hundreds of places)
    return ((ax + dx * c - dy * s, ay + dx * s + dy * c), (ax + right * c - dy * s, ay + right * s + dy * c),
            (ax + right * c - bottom * s, ay + right * s + bottom * c),
            (ax + dx * c - bottom * s, ay + dx * s + bottom * c))


def nearest(point: Point, start: Point, end: Point) -> Point:
    """The point of the segment from ``start`` to ``end`` nearest to ``point``."""
    (px, py), (ax, ay), (bx, by) = point, start, end
    dx, dy = bx - ax, by - ay
    t = max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy or 1.0)))
    return ax + t * dx, ay + t * dy


def normals(corners) -> list[Point]:
    """The edge normals a separating-axis test needs: none for a level or plumb segment or
    an upright rectangle (its normals are the x and y axes, which the bounding boxes
    settle), one for another segment, two for a parallelogram (opposite sides are
    parallel), every edge's for any other polygon."""
    count = len(corners)
    if count == 2:
        (x1, y1), (x2, y2) = corners
        return [] if x1 == x2 or y1 == y2 else [(y1 - y2, x2 - x1)]
    if count == 4:
        (x0, y0), (x1, y1), (x2, y2) = corners[:3]
        return [] if (y0 == y1 and x1 == x2) or (x0 == x1 and y1 == y2) else [(y0 - y1, x1 - x0),
                                                                               (y1 - y2, x2 - x1)]
    return [(corners[i][1] - corners[(i + 1) % count][1], corners[(i + 1) % count][0] - corners[i][0])
            for i in range(count)]


def box(corners) -> tuple[float, float, float, float]:
    """(left, top, right, bottom) of a polygon (written out for segments and quads)."""
    if len(corners) == 4:
        (x0, y0), (x1, y1), (x2, y2), (x3, y3) = corners
        return min(x0, x1, x2, x3), min(y0, y1, y2, y3), max(x0, x1, x2, x3), max(y0, y1, y2, y3)
    if len(corners) == 2:
        (x0, y0), (x1, y1) = corners
        return min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)
    xs, ys = tuple(zip(*corners, strict=True))
    return min(xs), min(ys), max(xs), max(ys)


def apart(a: tuple, b: tuple) -> bool:
    """Whether two boxes (``box``) do not touch."""
    return a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]


def overlap(a, b, boxes: tuple | None = None) -> bool:
    """Whether two convex polygons (corner lists: segments, triangles, parallelograms such
    as turned text boxes) overlap: their bounding boxes first (most pairs are far apart;
    ``boxes`` when known), then the separating axis test on the normals left to check."""
    return not apart(*(boxes or (box(a), box(b)))) and not separated(a, b, (*normals(a), *normals(b)))


def separated(a, b, axes) -> bool:
    """Whether an axis of ``axes`` separates the polygons ``a`` and ``b``: their projections
    on it meet at most at a point."""
    for nx, ny in axes:
        on_a = [x * nx + y * ny for x, y in a]
        on_b = [x * nx + y * ny for x, y in b]
        if max(on_a) <= min(on_b) or max(on_b) <= min(on_a):
            return True
    return False


def bands(corners) -> tuple[tuple[float, float, float, float], ...]:
    """Each of ``normals(corners)`` with the polygon's own extent along it, (nx, ny, low,
    high): a separating-axis test then projects only the other polygon (``split``)."""
    axes = normals(corners)
    if not axes:  # level and plumb sides: the boxes settle it
        return ()
    out = []
    for nx, ny in axes:
        on = [x * nx + y * ny for x, y in corners]
        out.append((nx, ny, min(on), max(on)))
    return tuple(out)


def split(own: tuple, points) -> bool:
    """Whether an axis of ``own`` (one polygon's ``bands``) separates that polygon from the
    polygon ``points``: ``separated`` on that polygon's axes, its own extents worked out
    once. (Written out for segments and quads: a chart tests hundreds of places.)"""
    if len(points) == 2:
        (x0, y0), (x1, y1) = points
        for nx, ny, low, high in own:
            a, b = x0 * nx + y0 * ny, x1 * nx + y1 * ny
            if (high <= a and high <= b) or (a <= low and b <= low):
                return True
        return False
    if len(points) == 4:
        (x0, y0), (x1, y1), (x2, y2), (x3, y3) = points
        for nx, ny, low, high in own:
            on = (x0 * nx + y0 * ny, x1 * nx + y1 * ny, x2 * nx + y2 * ny, x3 * nx + y3 * ny)
            if high <= min(on) or max(on) <= low:
                return True
        return False
    return any(high <= min(on) or max(on) <= low for nx, ny, low, high in own
               for on in ([x * nx + y * ny for x, y in points],))


def segment_shape(start: Point, end: Point) -> tuple[Point, ...]:
    """The polygon a segment is tested as: itself, or for a point a tiny triangle."""
    return (start, (start[0] + 0.1, start[1]), (start[0], start[1] + 0.1)) if start == end else (start, end)


def crosses(corners, start: Point, end: Point) -> bool:
    """Whether the segment from ``start`` to ``end`` touches the convex polygon."""
    return overlap(corners, segment_shape(start, end))


def inside(corners, rect: Rect, margin: float = 0.0) -> bool:
    return all(rect.contains(point, margin) for point in corners)


def square(center: Point, half: float) -> tuple[Point, ...]:
    x, y = center
    return Rect(x - half, y - half, x + half, y + half).corners()
