"""The roofline with each op at its expected time (a scene step's ``view: expected``): the
same roofs and step, but every op drawn at the FLOP/s it is expected to reach
(``core.analysis.expected``: the share of its roof kernels of its class reach, plus its
launch), with a dotted drop from its bound. Small ops, whose launch costs more than their
work, fall furthest: the picture of why a step of many small kernels stays below the roof."""

from __future__ import annotations

import math
from dataclasses import replace

from explorer.chart.elements import Chart, ElementKind, Line, Page, Stroke
from explorer.chart.model import build_chart
from explorer.chart.options import ChartOptions
from explorer.chart.snapshot import Source
from explorer.core.units import format_si


def expected_performance(doc: Source) -> dict[str, tuple[float, float]]:
    """(bound FLOP/s, expected FLOP/s) of each op that does arithmetic, by name: its FLOPs
    over its bound time and over its expected time, launch included (empty: the workload
    asks for the bound alone, or the device has no efficiency to expect with)."""
    e, a = doc.expected(), doc.analysis()
    if e is None:
        return {}
    return {o.name: (float(a.flops[i] / a.time_s[i]), float(a.flops[i] / e.op_time_s[i]))
            for i, o in enumerate(a.ops) if a.flops[i] > 0}


def expected_ops_chart(doc: Source, page: Page, options: ChartOptions) -> Chart:
    """The roofline of ``doc`` with its ops moved down to their expected FLOP/s."""
    chart = build_chart(doc, page, options)
    performance = expected_performance(doc)
    if not performance:
        return chart
    low = min(expected for _, expected in performance.values())
    if low < chart.y_range[0]:  # room below for the op that falls furthest
        ranges = (chart.x_range, (10.0 ** math.floor(math.log10(low)), chart.y_range[1]))
        chart = build_chart(doc, page, replace(options, ranges=ranges))
    scale = chart.page.lines
    dotted = Stroke(chart.foreground, 1.2 * scale, (1.5 * scale, 2.5 * scale), opacity=0.6)
    drops, markers = [], []
    for m in chart.markers:
        if m.kind in (ElementKind.OP, ElementKind.SELECTION) and m.name in performance:
            bound, expected = performance[m.name]
            at = (m.center[0], chart.y_px(expected))
            if m.kind == ElementKind.OP:
                drops.append(Line((m.center, at), dotted, ElementKind.EXPECTED,
                                  tooltip=f"{m.name}: bound {format_si(bound, 'FLOP/s')}, expected "
                                          f"{format_si(expected, 'FLOP/s')}"))
                m = replace(m, tooltip=f"{m.name}, expected: {format_si(expected, 'FLOP/s')} "
                                       f"({bound / expected:.2f}× the bound's time, launch included)")
            m = replace(m, center=at)
        markers.append(m)
    return replace(chart, lines=(*chart.lines, *drops), markers=tuple(markers))

