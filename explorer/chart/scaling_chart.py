"""The scaling-laws picture of a training budget C, drawn as a slide as the roofline is:
each fit's isoFLOP curve (the loss it predicts for a model of N parameters trained on
D = C / 6N tokens), its optimum (a star), where the workload's model sits on each curve
(a ring), and the ~20 tokens per parameter rule of thumb (a dashed line). The same
numbers as the Scaling laws panel (``core.analysis.scaling_laws``); a scene step that
names a budget (``scaling_laws:``) exports this instead of the roofline."""

from __future__ import annotations

import math

import numpy as np

from explorer.chart import palette
from explorer.chart.axes_frame import axis_titles, frame_lines
from explorer.chart.elements import Chart, ElementKind, Line, Marker, Page, Stroke, Text
from explorer.chart.geometry import Rect
from explorer.chart.heading import heading
from explorer.chart.key import Entry, KeyParts, draw_key, key_width
from explorer.chart.layout import Request, Spots, place
from explorer.chart.text import LINE_HEIGHT, text_width
from explorer.core.analysis.scaling_laws import BESIROGLU, HOFFMANN, Placement, isoflop, rule_of_thumb
from explorer.core.units import format_parameters

X_TITLE, Y_TITLE = "Parameters N (log), trained on D = C / 6N tokens", "Predicted loss (fit)"
FITS = ((BESIROGLU, "attention"), (HOFFMANN, "projection"))  # the fit and the op group lending its hue
SPAN = 30.0  # the curves run from a thirtieth to thirty times the optimum


def scaling_chart(model, budget: float, page: Page, theme_name: str, title: str, caption: str,
                  key: bool = True, show_heading: bool = True) -> Chart:
    """The scaling-laws slide of ``budget`` FLOPs with ``model`` placed on it."""
    theme = palette.THEMES[theme_name]
    colours = {fit.id: dict(theme.groups)[group] for fit, group in FITS}
    parameters = float(model.parameter_count())
    texts, top = heading(title, caption, page, theme.foreground) if show_heading else ([], 0.6 * page.text)
    entries = _entries(model.name, parameters, budget, colours, theme) if key else []
    column = min(key_width(entries, page.text), 0.3 * page.width) if entries else 0.0
    pad = 0.6 * page.text
    left = pad + LINE_HEIGHT * page.text + text_width("2.00", page.text) + pad
    plot = Rect(left, top + pad, page.width - pad - (column + pad if column else 0.0),
                page.height - pad - 2.7 * page.text)
    x_range, y_range, curves = _curves(budget, parameters)
    chart = Chart(page, plot, x_range, y_range, theme.background, theme.foreground)
    lines, tick_texts = _axes(chart, theme)
    markers, requests = [], []
    for fit, _ in FITS:
        curve, marks, request = _fit_marks(chart, fit, curves[fit.id], budget, model, colours[fit.id], theme)
        lines.append(curve)
        markers += marks
        requests.append(request)
    rule, rule_request = _rule(chart, budget, theme)
    lines.append(rule)
    requests.append(rule_request)
    placed, overflow, _ = place(requests, plot, lines, markers)
    key_parts: KeyParts = ((), (), ())
    key_box = None
    if entries and overflow:  # a label with no room on the plot: in the key, never dropped
        entries += [Entry("Unlabelled (no room)", "heading", bold=True)]
        entries += [Entry(t.text, "line", theme.track, "", (5.0, 4.0)) if t.colour == theme.foreground
                    else Entry(t.text, "marker", theme.foreground, "star", fill=t.colour) for t in overflow]
    if entries:
        key_box = Rect(plot.right + pad, plot.top, page.width - pad, page.height)
        key_parts = draw_key(entries, key_box.left, key_box.top, key_box.right, key_box.bottom, page.text,
                             theme.foreground, theme.background, page.lines)
    return Chart(page, plot, x_range, y_range, theme.background, theme.foreground,
                 lines=(*lines, *key_parts[0]), markers=(*markers, *key_parts[1]),
                 texts=(*texts, *tick_texts, *placed, *key_parts[2]), key=key_box, overflow=tuple(overflow))


def _fit_marks(chart: Chart, fit, points, budget: float, model, colour: str, theme):
    """A fit's isoFLOP curve, the model's ring and the optimum's star on it, and the
    optimum's label."""
    page = chart.page
    curve = Line(tuple((chart.x_px(n), chart.y_px(loss)) for n, loss in points),
                 Stroke(colour, 2.5 * page.lines * theme.pen_factor), ElementKind.CURVE,
                 tooltip=f"{fit.name}: the loss at C = 6·N·D (a fit)")
    n_opt, d_opt = fit.optimal(budget)
    star = Marker((chart.x_px(n_opt), chart.y_px(fit.loss(n_opt, d_opt))), "star", 22 * page.lines,
                  Stroke(theme.foreground, 1.4 * page.lines), colour, ElementKind.CURVE,
                  f"optimum, {fit.name}", f"{fit.name}: N_opt {format_parameters(n_opt)}, "
                  f"D_opt {format_parameters(d_opt)} tokens")
    parameters = float(model.parameter_count())
    at = Placement(fit, budget, parameters)
    ring = Marker((chart.x_px(parameters), chart.y_px(at.loss)), "circle", 14 * page.lines,
                  Stroke(colour, 2.2 * page.lines), theme.background, ElementKind.CURVE,
                  f"{model.name}, {fit.name}", f"{model.name} on {format_parameters(at.tokens)} tokens: "
                  f"loss {at.loss:.3f} ({fit.name})")
    label = _beside(star, (f"{format_parameters(n_opt)} on {format_parameters(d_opt)} tokens",
                           f"{format_parameters(n_opt)}, {format_parameters(d_opt)} tokens",
                           format_parameters(n_opt)), colour, page)
    return curve, [ring, star], label  # the optimum on top where the model sits at it


def _rule(chart: Chart, budget: float, theme) -> tuple[Line, Request]:
    """The rule of thumb's dashed line, a reference line as the grid's (labels may cross
    it), and its label."""
    page, plot = chart.page, chart.plot
    unit = page.lines * theme.pen_factor
    n_rule = rule_of_thumb(budget)[0]
    x = chart.x_px(n_rule)
    rule = Line(((x, plot.top), (x, plot.bottom)), Stroke(theme.track, 1.6 * unit, (5 * unit, 4 * unit)),
                ElementKind.GRID, tooltip="about 20 tokens per parameter: a rule of thumb (approximate)")
    label = Text(f"~20 tokens per parameter: {format_parameters(n_rule)}", (x, plot.top), page.text,
                 theme.foreground, ElementKind.CURVE)
    return rule, Request(Spots([(label, (x + side * 4, y), 0.0, align, "below", 0.0)
                                for y in (plot.top + 2, plot.top + 2 + 1.5 * page.text,
                                          plot.bottom - 2 - 1.5 * page.text)
                                for side, align in ((1, "start"), (-1, "end"))]), rule)


def _beside(marker: Marker, wordings: tuple[str, ...], colour: str, page: Page) -> Request:
    """A label by ``marker``: its fullest wording where one fits near it, else a shorter."""
    (cx, cy), near = marker.center, marker.size / 2 + 3
    texts = [Text(words, marker.center, page.text, colour, ElementKind.CURVE, tooltip=marker.tooltip)
             for words in wordings]
    return Request(Spots([(text, (cx + dx * gap, cy + dy * gap), 0.0, align, side, 0.0)
                          for text in texts
                          for gap in (near, 2 * near, 4 * near)  # under the curves' bottom
                          for dx, dy, align, side in ((0, 1, "middle", "below"), (1, 1, "start", "below"),
                                                      (-1, 1, "end", "below"), (1, -1, "start", "above"),
                                                      (-1, -1, "end", "above"))]), marker)


def _curves(budget: float, parameters: float):
    """The x and y ranges (decades of N; the losses the curves pass through near their
    optima) and each fit's curve as (N, loss) points inside them."""
    optima = [fit.optimal(budget)[0] for fit, _ in FITS]
    low = min(min(optima) / SPAN, parameters / 3, rule_of_thumb(budget)[0] / 3)
    high = max(max(optima) * SPAN, parameters * 3, rule_of_thumb(budget)[0] * 3)
    x_range = (10.0 ** math.floor(math.log10(low)), 10.0 ** math.ceil(math.log10(high)))
    sizes = list(np.geomspace(*x_range, 240))
    best = min(fit.loss(*fit.optimal(budget)) for fit, _ in FITS)
    worst = max(Placement(fit, budget, parameters).loss for fit, _ in FITS)
    y_range = (0.97 * best, max(1.12 * best, 1.03 * worst))
    curves = {fit.id: [(n, loss) for n, _, loss in isoflop(fit, budget, sizes) if loss <= y_range[1]]
              for fit, _ in FITS}
    return x_range, y_range, curves


def _axes(chart: Chart, theme) -> tuple[list[Line], list[Text]]:
    """Axes, grid and ticks: decades of N; losses at a round step (the y axis is drawn on a
    log scale, as the roofline's, over so short a span that it reads as linear)."""
    page, plot = chart.page, chart.plot
    size = page.text
    lines, grid = frame_lines(chart, theme)
    texts = []
    low, high = (round(math.log10(v)) for v in chart.x_range)
    for exponent in range(low, high + 1):
        x = chart.x_px(10.0 ** exponent)
        lines.append(Line(((x, plot.top), (x, plot.bottom)), grid, ElementKind.GRID))
        label = format_parameters(10.0 ** exponent)
        texts.append(Text(label, (x, plot.bottom + 0.3 * size), size, theme.foreground, ElementKind.TICK,
                          dx=-text_width(label, size) / 2))
    y_low, y_high = chart.y_range
    span = y_high - y_low
    base = 10.0 ** math.floor(math.log10(span / 7))  # a round step that gives at most 7 ticks
    step = next(base * k for k in (1, 2, 5, 10) if span / (base * k) <= 7)
    value = math.ceil(y_low / step) * step
    while value <= y_high:
        y = chart.y_px(value)
        lines.append(Line(((plot.left, y), (plot.right, y)), grid, ElementKind.GRID))
        label = f"{value:.{max(0, -math.floor(math.log10(step)))}f}"
        texts.append(Text(label, (plot.left - 0.4 * size, y), size, theme.foreground, ElementKind.TICK,
                          dx=-text_width(label, size), dy=-0.58 * size))
        value += step
    texts += axis_titles(chart, theme, X_TITLE, Y_TITLE)
    return lines, texts


def _entries(name: str, parameters: float, budget: float, colours: dict[str, str], theme) -> list[Entry]:
    out = [Entry(f"Fits at C = {budget:.3g} FLOPs", "heading", bold=True)]
    out += [Entry(fit.name, "line", colours[fit.id]) for fit, _ in FITS]
    out.append(Entry("optimum of each fit", "marker", theme.foreground, "star", fill=theme.track))
    out.append(Entry(f"{name}: {format_parameters(parameters)}", "marker", theme.foreground, "circle",
                     fill=theme.background))
    out.append(Entry("~20 tokens per parameter (approximate)", "line", theme.track, "", (5.0, 4.0)))
    return out
