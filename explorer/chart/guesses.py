"""A scene question on the roofline: the chart with its answer hidden, and the room's
guesses (and, once revealed, the answer) drawn over it as separate lines.

A guessed bandwidth is a slanted roof (FLOP/s = bandwidth × intensity), a guessed rate of
arithmetic a flat one: the room guesses a roof, and the reveal draws the real one (or the
one measured live) beside the guesses. Other answers (tokens/s, a batch, a factor) are not
places on this chart: the window's question bar draws those as a spread on a number line."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from explorer.chart.elements import Chart, ElementKind, Line, Stroke, Text
from explorer.chart.palette import THEMES
from explorer.chart.text import text_width

E = ElementKind
# What gives the answer away: the ops, the step and everything placed by the workload or a run.
ANSWER_MARKERS = frozenset({E.OP, E.STEP, E.EXPECTED, E.COMPARED, E.SELECTION, E.MEASURED, E.PROFILE})
ANSWER_LINES = frozenset({E.TRACK, E.MEASURED_ROOF, E.EXPECTED, E.PROFILE})
BANDWIDTH_UNITS = frozenset({"B/s", "GB/s", "TB/s"})
ARITHMETIC_UNITS = frozenset({"FLOP/s", "GFLOP/s", "TFLOP/s"})
GUESS_DASH = (6.0, 4.0)


def on_chart(unit: str) -> bool:
    """Whether guesses in ``unit`` are roofs this chart can draw."""
    return unit in BANDWIDTH_UNITS or unit in ARITHMETIC_UNITS


def hide_answer(chart: Chart) -> Chart:
    """``chart`` with the roofs only: no op, step or measured point, and none of their labels."""
    return replace(chart, markers=tuple(m for m in chart.markers if m.kind not in ANSWER_MARKERS),
                   lines=tuple(ln for ln in chart.lines if ln.kind not in ANSWER_LINES),
                   texts=tuple(t for t in chart.texts if t.kind not in ANSWER_MARKERS))


def roof_line(chart: Chart, unit: str, value: float) -> tuple[tuple[float, float], ...]:
    """The roof ``value`` (B/s or FLOP/s, by ``unit``) across the plot, in page pixels; empty
    where it does not cross the plot."""
    (x0, x1), (y0, y1) = chart.x_range, chart.y_range
    if unit in ARITHMETIC_UNITS:
        if not y0 <= value <= y1:
            return ()
        return ((chart.x_px(x0), chart.y_px(value)), (chart.x_px(x1), chart.y_px(value)))
    # FLOP/s = value × intensity, clipped to the plot's y range
    low, high = max(x0, y0 / value), min(x1, y1 / value)
    if not low < high:
        return ()
    return ((chart.x_px(low), chart.y_px(low * value)), (chart.x_px(high), chart.y_px(high * value)))


def with_guesses(chart: Chart, unit: str, guesses: Sequence[float], answer: float | None = None,
                 answer_label: str = "", theme: str = "light") -> Chart:
    """``chart`` with a dashed roof for each guess (B/s or FLOP/s) and, where given, the
    answer's roof, solid and labelled; ``chart`` as it is for a unit that is no roof."""
    if not on_chart(unit):
        return chart
    colours = THEMES[theme]
    lines, texts = list(chart.lines), list(chart.texts)
    width = 1.5 * chart.page.lines * colours.pen_factor
    for value in guesses:
        points = roof_line(chart, unit, value)
        if points:
            lines.append(Line(points, Stroke(colours.selected, width, GUESS_DASH, 0.8), E.ROOF,
                              tooltip="a guess"))
    if answer is not None and math.isfinite(answer) and answer > 0:
        points = roof_line(chart, unit, answer)
        if points:
            lines.append(Line(points, Stroke(colours.measured, 3 * width), E.ROOF, tooltip=answer_label))
            (xa, ya), (xb, yb) = points
            size = chart.page.text
            left = min(max((xa + xb) / 2 - text_width(answer_label, size, True) / 2, chart.plot.left),
                       chart.plot.right - text_width(answer_label, size, True))
            texts.append(Text(answer_label, (left, (ya + yb) / 2), size, colours.foreground, E.NOTE,
                              dy=-1.5 * size, bold=True))
    return replace(chart, lines=tuple(lines), texts=tuple(texts))


def value_at(chart: Chart, unit: str, point: tuple[float, float]) -> float | None:
    """The roof a guess marker dropped at ``point`` (page pixels) names: FLOP/s for a rate
    of arithmetic, FLOP/s ÷ intensity for a bandwidth; None outside the plot or for a unit
    that is no roof."""
    if not on_chart(unit) or not chart.plot.contains(point):
        return None
    (x0, x1), (y0, y1) = (tuple(math.log10(v) for v in r) for r in (chart.x_range, chart.y_range))
    intensity = 10 ** (x0 + (point[0] - chart.plot.left) / chart.plot.width * (x1 - x0))
    flops = 10 ** (y0 + (chart.plot.bottom - point[1]) / chart.plot.height * (y1 - y0))
    return flops if unit in ARITHMETIC_UNITS else flops / intensity
