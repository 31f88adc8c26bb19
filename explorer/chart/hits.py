"""What is under the pointer on a chart: markers (every op at one spot, for a tooltip that
lists them all), the nearest roof line, a label; and page positions turned back into
data values. Used by the window to hover, click and drag, tested without Qt."""

from __future__ import annotations

import math

from explorer.chart.elements import Chart, ElementKind, Line, Marker, Text
from explorer.chart.geometry import Point, nearest, overlap, square

GRAB_PX = 6.0  # how close the pointer must be to grab a line or a point


MARKERS_HIT = (ElementKind.STEP, ElementKind.EXPECTED, ElementKind.OP, ElementKind.MEASURED,
               ElementKind.PROFILE, ElementKind.RIDGE, ElementKind.COMPARED)
TEXTS_HIT = (ElementKind.ROOF, ElementKind.RIDGE, ElementKind.MEASURED, ElementKind.LINK,
             ElementKind.COMPARED)
ROOF_LINES = (ElementKind.ROOF, ElementKind.MEASURED_ROOF, ElementKind.LINK, ElementKind.ORIGINAL)


def markers_at(chart: Chart, point: Point, kinds: tuple[ElementKind, ...] = MARKERS_HIT,
               reach: float = GRAB_PX / 2) -> list[Marker]:
    """Markers of ``kinds`` under ``point``, the topmost first (the star over the ops)."""
    x, y = point
    found = [m for m in chart.markers if m.kind in kinds
             and math.hypot(m.center[0] - x, m.center[1] - y) <= m.size / 2 + reach]
    return sorted(found, key=lambda m: kinds.index(m.kind))


def _distance(point: Point, a: Point, b: Point) -> float:
    x, y = nearest(point, a, b)
    return math.hypot(point[0] - x, point[1] - y)


def line_at(chart: Chart, point: Point, kinds: tuple[ElementKind, ...] = (ElementKind.ROOF,),
            reach: float = GRAB_PX) -> Line | None:
    """The line of ``kinds`` nearest to ``point`` within ``reach`` pixels (and its width)."""
    best, best_d = None, math.inf
    for line in chart.lines:
        if line.kind not in kinds:
            continue
        d = min(_distance(point, a, b) for a, b in zip(line.points, line.points[1:], strict=False))
        if d <= reach + line.stroke.width / 2 and d < best_d:
            best, best_d = line, d
    return best


def text_at(chart: Chart, point: Point,
            kinds: tuple[ElementKind, ...] = TEXTS_HIT) -> Text | None:
    """The label of ``kinds`` under ``point``."""
    spot = square(point, 0.5)
    return next((t for t in chart.texts if t.kind in kinds and overlap(t.corners, spot)), None)


def value_at(chart: Chart, point: Point) -> tuple[float, float]:
    """(intensity, FLOP/s) at a page position."""
    (x0, x1), (y0, y1) = (tuple(math.log10(v) for v in r) for r in (chart.x_range, chart.y_range))
    plot = chart.plot
    x = x0 + (point[0] - plot.left) / plot.width * (x1 - x0)
    y = y0 + (plot.bottom - point[1]) / plot.height * (y1 - y0)
    return 10.0 ** x, 10.0 ** y


def decades_per_pixel(chart: Chart) -> tuple[float, float]:
    """How many decades one pixel spans across (x) and up (y) the plot."""
    (x0, x1), (y0, y1) = chart.x_range, chart.y_range
    return math.log10(x1 / x0) / chart.plot.width, math.log10(y1 / y0) / chart.plot.height


def tooltip_at(chart: Chart, point: Point) -> str:
    """What a hover at ``point`` shows: every point there (ops that coincide are all
    listed), else the roof line or label there, else nothing."""
    tips = list(dict.fromkeys(m.tooltip for m in markers_at(chart, point) if m.tooltip))
    if len(tips) > 2:  # the topmost in full, one line for each of the others
        others = [tip.splitlines()[0] for tip in tips[1:]]
        return f"{tips[0]}\n\nAlso here ({len(others)}):\n" + "\n".join(others)
    if tips:
        return "\n\n".join(tips)
    line = line_at(chart, point, ROOF_LINES)
    if line is not None and line.tooltip:
        return line.tooltip
    text = text_at(chart, point)
    if text is not None:
        owner = next((ln for ln in chart.lines
                      if text.ref is not None and ln.ref == text.ref and ln.kind == ElementKind.ROOF), None)
        return owner.tooltip if owner is not None else text.tooltip
    return ""
