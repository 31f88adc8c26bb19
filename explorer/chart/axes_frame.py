"""What every chart's axes share: the two axis lines along the plot's left and bottom
edges, the stroke of its grid, and the axis titles (the y title turned upright)."""

from __future__ import annotations

from explorer.chart.elements import Chart, ElementKind, Line, Stroke, Text
from explorer.chart.text import text_width


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
