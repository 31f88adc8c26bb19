"""What every chart's axes share: the two axis lines along the plot's left and bottom
edges, the stroke of its grid, and the axis titles (the y title turned upright)."""

from __future__ import annotations

import math

from explorer.chart.elements import Chart, ElementKind, Line, Stroke, Text
from explorer.chart.geometry import overlap
from explorer.chart.text import text_width
from explorer.core.units import format_si


def tick_label(value: float) -> str:
    """``1e12`` → "1 T"; values below 1 written plainly ("0.01")."""
    return f"{value:g}" if value < 1 else format_si(value, "", digits=3).strip()


def frame_lines(chart: Chart, theme) -> tuple[list[Line], Stroke]:
    """The bottom and left axis lines, and the stroke grid lines take."""
    page, plot = chart.page, chart.plot
    grid = Stroke(theme.axis, max(1.0, 0.6 * page.lines), opacity=0.25)
    axis = Stroke(theme.axis, 1.2 * page.lines)
    return [Line(((plot.left, plot.bottom), (plot.right, plot.bottom)), axis, ElementKind.AXIS),
            Line(((plot.left, plot.top), (plot.left, plot.bottom)), axis, ElementKind.AXIS)], grid


def axis_titles(chart: Chart, theme, x_title: str, y_title: str) -> list[Text]:
    """The x title centred under the ticks, the y title upright along the left edge."""
    plot, size = chart.plot, chart.page.text
    return [Text(x_title, ((plot.left + plot.right) / 2, plot.bottom + 1.55 * size), size, theme.foreground,
                 ElementKind.AXIS, dx=-text_width(x_title, size) / 2),
            Text(y_title, (0.6 * size, (plot.top + plot.bottom) / 2), size, theme.foreground,
                 ElementKind.AXIS, angle=-90.0, dx=-text_width(y_title, size) / 2)]


def log_axes(chart: Chart, theme, x_title: str, y_title: str) -> tuple[list[Line], list[Text]]:
    """Both axes on log scales: a grid line and a tick at every decade (a y tick that would
    collide with the first x tick, in the corner, is left out), and the titles."""
    plot, size = chart.plot, chart.page.text
    lines, grid = frame_lines(chart, theme)
    texts = []
    for horizontal, (low, high) in ((True, chart.x_range), (False, chart.y_range)):
        for exponent in range(round(math.log10(low)), round(math.log10(high)) + 1):
            value, label = 10.0 ** exponent, tick_label(10.0 ** exponent)
            if horizontal:
                x = chart.x_px(value)
                lines.append(Line(((x, plot.top), (x, plot.bottom)), grid, ElementKind.GRID))
                texts.append(Text(label, (x, plot.bottom + 0.3 * size), size, theme.foreground,
                                  ElementKind.TICK, dx=-text_width(label, size) / 2))
            else:
                y = chart.y_px(value)
                lines.append(Line(((plot.left, y), (plot.right, y)), grid, ElementKind.GRID))
                tick = Text(label, (plot.left - 0.4 * size, y), size, theme.foreground, ElementKind.TICK,
                            dx=-text_width(label, size), dy=-0.58 * size)
                if not any(overlap(tick.corners, other.corners) for other in texts):  # the corner
                    texts.append(tick)
    texts += axis_titles(chart, theme, x_title, y_title)
    return lines, texts
