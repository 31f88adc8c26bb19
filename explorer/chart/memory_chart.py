"""The memory bar as a picture (a scene step's ``view: memory``): what the step keeps in
memory on one device (weights, training's gradients and optimizer state, KV cache,
activations) as one stacked bar against a linear axis of bytes, the budget a serving engine
may fill a line across it, the usable memory beyond it hatched, and a verdict. The same
``core.analysis`` totals as the workload panel's bar (``ui/panels/memory_bar.py``); where
the step does not fit, what lies beyond the budget and the budget line turn red."""

from __future__ import annotations

import math
from collections.abc import Callable

from explorer.chart import palette
from explorer.chart.axes_frame import frame_lines
from explorer.chart.elements import Chart, ElementKind, Line, Page, Stroke, Text
from explorer.chart.geometry import Rect
from explorer.chart.heading import heading
from explorer.chart.text import LINE_HEIGHT, text_width
from explorer.core.analysis.analysis import Analysis, Totals
from explorer.core.units import format_bytes

# Shades of the text colour over the background (the op groups' colours mean ops elsewhere).
PARTS = (("weights", 0.85), ("gradients and optimizer state", 0.65), ("KV cache", 0.45),
         ("activations", 0.25))
# "Does not fit": an orange-red with at least 4.5:1 contrast on each theme's background.
OVER = {"light": "#B33C00", "dark": "#FF7A45", "contrast": "#FF5C5C"}
X_TITLE = "Memory of one device (GiB)"
GIB = 2.0 ** 30


def parts_of(a: Analysis) -> list[tuple[str, float]]:
    """(name, bytes) of each part the step keeps in memory, in the bar's order."""
    t = a.totals
    values = (t.weight_bytes, t.state_bytes, t.kv_cache_bytes, t.activation_bytes)
    return [(name, float(v)) for (name, _), v in zip(PARTS, values, strict=True) if v]


def _step(high_gib: float) -> float:
    """A tick step that gives 4 to 10 ticks up to ``high_gib``."""
    raw = high_gib / 6
    power = 10.0 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


def memory_chart(a: Analysis, page: Page, theme_name: str, title: str, subtitle: str = "",
                 with_heading: bool = True) -> Chart:
    """The step of ``a`` as a memory bar on ``page``."""
    theme = palette.THEMES[theme_name]
    over = OVER[theme_name]
    t = a.totals
    size = page.text
    texts, top = heading(title, subtitle, page, theme.foreground) if with_heading else ([], 0.6 * size)
    pad = 0.6 * size
    plot = Rect(pad + size, top + pad + 3 * LINE_HEIGHT * size, page.width - pad - size,
                page.height - pad - 3.2 * size - 2 * LINE_HEIGHT * size)
    parts = parts_of(a)
    used = sum(v for _, v in parts)
    high = max(used, t.memory_usable_bytes, t.memory_capacity_bytes) * 1.04
    chart = Chart(page, plot, (1.0, 10.0), (1.0, 10.0), theme.background, theme.foreground)

    def x(value: float) -> float:
        return plot.left + value / high * plot.width

    lines, ticks = _axis(chart, theme, x, high)
    texts += ticks
    bar = min(0.3 * plot.height, 5 * size)
    middle = plot.top + 0.55 * plot.height
    # The usable memory a serving engine leaves alone (CUDA context, allocator): pale.
    lines.append(Line(((x(t.memory_budget_bytes), middle), (x(t.memory_usable_bytes), middle)),
                      Stroke(theme.foreground, bar, opacity=0.12), ElementKind.MEMORY,
                      tooltip=f"usable beyond the budget: {format_bytes(t.memory_usable_bytes)} usable"))
    start = 0.0
    shades = dict(PARTS)
    labels_above: list[Text] = []
    for name, value in parts:
        colour = palette.blend(theme.foreground, theme.background, shades[name])
        lines.append(Line(((x(start), middle), (x(start + value), middle)), Stroke(colour, bar),
                          ElementKind.MEMORY, tooltip=f"{name}: {format_bytes(value)}"))
        label = f"{name} {format_bytes(value)}"
        labels_above.append(Text(label, (x(start + value / 2), 0.0), size, theme.foreground,
                                 ElementKind.MEMORY, dx=-text_width(label, size) / 2))
        start += value
    if not t.fits_in_memory:  # what lies beyond the budget, red over the parts
        lines.append(Line(((x(t.memory_budget_bytes), middle), (x(used), middle)),
                          Stroke(over, bar, opacity=0.6), ElementKind.MEMORY,
                          tooltip=f"over the budget by {format_bytes(used - t.memory_budget_bytes)}"))
    texts += _stagger(labels_above, middle - bar / 2 - 0.4 * size, size, plot)
    edge = over if not t.fits_in_memory else theme.foreground
    drawn, labels = _limits(t, x, middle, bar, edge, theme, page)
    lines += drawn
    texts += labels
    per_device = " per device" if t.devices > 1 else ""
    verdict = (f"{format_bytes(used)}{per_device} of the {format_bytes(t.memory_budget_bytes)} budget: fits"
               if t.fits_in_memory else
               f"Does not fit: {format_bytes(used)}{per_device}, over the "
               f"{format_bytes(t.memory_budget_bytes)} budget")
    texts.append(Text(verdict, (plot.left, top + pad), 1.15 * size, edge if not t.fits_in_memory
                      else theme.foreground, ElementKind.NOTE, bold=True))
    return Chart(page, plot, chart.x_range, chart.y_range, theme.background, theme.foreground,
                 lines=tuple(lines), texts=tuple(texts))


def _axis(chart: Chart, theme, x: Callable[[float], float], high: float) -> tuple[list[Line], list[Text]]:
    """The bottom axis in GiB: a grid line and a tick at each step, and its title."""
    plot, size, page = chart.plot, chart.page.text, chart.page
    lines, _ = frame_lines(chart, theme)
    texts: list[Text] = []
    lines = lines[:1]  # the bottom axis only: the bar has no vertical scale
    grid = Stroke(theme.axis, max(1.0, 0.6 * page.lines), opacity=0.25)
    step = _step(high / GIB)
    for i in range(int(high / GIB / step) + 1):
        at = x(i * step * GIB)
        label = f"{i * step:g}"
        lines.append(Line(((at, plot.top), (at, plot.bottom)), grid, ElementKind.GRID))
        texts.append(Text(label, (at, plot.bottom + 0.3 * size), size, theme.foreground, ElementKind.TICK,
                          dx=-text_width(label, size) / 2))
    texts.append(Text(X_TITLE, ((plot.left + plot.right) / 2, plot.bottom + 1.55 * size), size,
                      theme.foreground, ElementKind.AXIS, dx=-text_width(X_TITLE, size) / 2))
    return lines, texts


def _limits(t: Totals, x: Callable[[float], float], middle: float, bar: float, edge: str, theme,
            page: Page) -> tuple[list[Line], list[Text]]:
    """The budget's line (red where the step does not fit) and the usable memory's (dashed),
    each with its label under the bar."""
    size = page.text
    lines: list[Line] = []
    texts: list[Text] = []
    reach = bar / 2 + 1.4 * LINE_HEIGHT * size
    for value, label, stroke in (
            (t.memory_budget_bytes, f"budget {format_bytes(t.memory_budget_bytes)} "
                                    f"({t.memory_budget_bytes / t.memory_usable_bytes:.0%} of usable)",
             Stroke(edge, 3 * page.lines)),
            (t.memory_usable_bytes, f"usable {format_bytes(t.memory_usable_bytes)}",
             Stroke(theme.foreground, 1.5 * page.lines, (6 * page.lines, 4 * page.lines)))):
        at = x(value)
        lines.append(Line(((at, middle - bar / 2 - 0.2 * size), (at, middle + reach)), stroke,
                          ElementKind.MEMORY, tooltip=label))
        texts.append(Text(label, (at, middle + reach), size, stroke.colour, ElementKind.MEMORY,
                          dx=-text_width(label, size) / 2 if label.startswith("usable") else
                          -text_width(label, size) - 0.3 * size,
                          dy=-LINE_HEIGHT * size if label.startswith("budget") else 0.0))
    return lines, texts


def _stagger(labels: list[Text], bottom: float, size: float, plot: Rect) -> list[Text]:
    """The parts' labels above the bar, each over its part; one that would touch the one
    before it goes a row higher (up to three rows), and none runs past the plot's sides."""
    out: list[Text] = []
    ends = [-math.inf] * 3
    for label in labels:
        left = min(max(label.origin[0] + label.dx, plot.left), plot.right - label.width)
        row = next((r for r in range(3) if left > ends[r] + 0.5 * size), 2)
        ends[row] = left + label.width
        y = bottom - (row + 1) * LINE_HEIGHT * size
        out.append(Text(label.text, (left, y), size, label.colour, label.kind))
    return out
