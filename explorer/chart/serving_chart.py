"""The serving picture of a plan (``core.analysis.serving``): throughput against
interactivity. Each batch of concurrent requests is a point at its tokens/s a user (1 /
TPOT, across) and tokens/s a device (up), from batch 1 at the right to the KV-cache wall at
the top left; the TPOT target is a vertical line (points left of it miss it), the chosen
point is ringed. Batching buys throughput with each user's speed: the curve shows the price."""

from __future__ import annotations

import math

from explorer.chart import palette
from explorer.chart.axes_frame import log_axes
from explorer.chart.elements import Chart, ElementKind, Line, Marker, Page, Stroke, Text
from explorer.chart.geometry import Rect
from explorer.chart.heading import heading
from explorer.chart.key import Entry, draw_key, key_width
from explorer.chart.layout import Request, Spots, place
from explorer.chart.text import LINE_HEIGHT, text_width
from explorer.core.analysis.serving import Plan

X_TITLE, Y_TITLE = "Tokens/s a user (1 / time per output token), log", "Tokens/s a device, log"


def _decade_range(values: list[float]) -> tuple[float, float]:
    low, high = min(values), max(values)
    return 10.0 ** math.floor(math.log10(low) - 0.05), 10.0 ** math.ceil(math.log10(high) + 0.05)


OTHER_GROUPS = ("mlp", "attention", "embedding / head")  # the colours of other layouts' curves
OTHER_DASHES = ((8.0, 4.0), (2.0, 3.0), (10.0, 3.0, 2.0, 3.0))


def serving_chart(plan: Plan, page: Page, theme_name: str, title: str, tpot_target_s: float | None = None,
                  key: bool = True, others: tuple = (), name: str = "", subtitle: str = "",
                  with_heading: bool = True, ringed: str = "chosen") -> Chart:
    """The plan's points on ``page``: tokens/s a device against tokens/s a user; ``others``:
    (name, plan) of up to three other layouts, each a curve of its own beside it (``name``:
    the plan's own layout, for the key; ``subtitle``: a caption under the title;
    ``with_heading`` False: neither, a slide's own text; ``ringed``: what the ringed point is
    called, the plan's choice, or a scene step's own batch)."""
    theme = palette.THEMES[theme_name]
    colour = dict(theme.groups)["projection"]
    texts, top = heading(title, subtitle, page, theme.foreground) if with_heading else ([], 0.6 * page.text)
    others = tuple(others)[:len(OTHER_GROUPS)]
    entries = _entries(plan, colour, theme, tpot_target_s, name, ringed) + _other_entries(others, theme)
    entries = entries if key else []
    column = min(key_width(entries, page.text), 0.3 * page.width) if entries else 0.0
    pad = 0.6 * page.text
    plot = Rect(pad + LINE_HEIGHT * page.text + text_width("100 k", page.text) + pad, top + pad,
                page.width - pad - (column + pad if column else 0.0), page.height - pad - 2.7 * page.text)
    every = [p for q in (plan, *(o for _, o in others)) for p in q.points]
    users = [p.tokens_per_s_per_user for p in every] + ([1 / tpot_target_s] if tpot_target_s else [])
    devices = [p.tokens_per_s_per_device for p in every]
    chart = Chart(page, plot, _decade_range(users), _decade_range(devices), theme.background,
                  theme.foreground)
    lines, ticks = log_axes(chart, theme, X_TITLE, Y_TITLE)
    lines += _other_curves(chart, others, theme)
    markers, requests = _batches(chart, plan, colour, theme)
    lines.append(Line(tuple(m.center for m in markers), Stroke(colour, 2.0 * page.lines), ElementKind.SERVING,
                      tooltip="the plan's batches, the smallest at the right"))
    if plan.chosen is not None:
        at = next(m.center for m in markers if m.name == f"batch {plan.chosen.batch}")
        markers.append(Marker(at, "circle", 24 * page.lines, Stroke(theme.selected, 3 * page.lines), None,
                              ElementKind.SELECTION, f"{ringed}: batch {plan.chosen.batch}"))
    if tpot_target_s:
        x = chart.x_px(1 / tpot_target_s)
        dashed = Stroke(theme.suspect, 1.6 * page.lines, (6.0, 4.0))
        lines.append(Line(((x, plot.top), (x, plot.bottom)), dashed, ElementKind.GRID,
                          tooltip=f"the TPOT target, {tpot_target_s * 1e3:g} ms a token"))
    placed, overflow, _ = place(requests, plot, lines, markers)
    if entries and overflow:  # a batch with no room for its number: in the key, never dropped
        entries.append(Entry("Unlabelled: batch " + ", ".join(t.text for t in overflow), "more"))
    box = Rect(plot.right + pad, plot.top, page.width - pad, page.height) if entries else None
    key_parts = draw_key(entries, box.left, box.top, box.right, box.bottom, page.text, theme.foreground,
                         theme.background, page.lines) if box else ((), (), ())
    return Chart(page, plot, chart.x_range, chart.y_range, theme.background, theme.foreground,
                 lines=(*lines, *key_parts[0]), markers=(*markers, *key_parts[1]),
                 texts=(*texts, *ticks, *placed, *key_parts[2]), key=box, overflow=tuple(overflow))


def _other_entries(others, theme) -> list[Entry]:
    groups = dict(theme.groups)
    return [Entry(f"{name}: {_best(plan)}", "line", groups[group], "", dash)
            for (name, plan), group, dash in zip(others, OTHER_GROUPS, OTHER_DASHES, strict=False)]


def _best(plan: Plan) -> str:
    c = plan.chosen
    return "no batch meets the targets" if c is None else \
        f"batch {c.batch:,}, {c.tokens_per_s_per_device:,.0f} tokens/s a device"


def _other_curves(chart: Chart, others, theme) -> list[Line]:
    """Another layout's batches as a dashed curve in its own colour (unlabelled: the key
    names it)."""
    groups, width = dict(theme.groups), 2.0 * chart.page.lines
    return [Line(tuple((chart.x_px(p.tokens_per_s_per_user), chart.y_px(p.tokens_per_s_per_device))
                       for p in plan.points), Stroke(groups[group], width, dash), ElementKind.SERVING,
                 tooltip=f"{name}: batches 1 to {plan.points[-1].batch:,}; {_best(plan)}")
            for (name, plan), group, dash in zip(others, OTHER_GROUPS, OTHER_DASHES, strict=False)]


def _batches(chart: Chart, plan: Plan, colour: str, theme) -> tuple[list[Marker], list[Request]]:
    """Each batch's point and its label's request (the batch, "(KV wall)" at the wall)."""
    page = chart.page
    markers, requests = [], []
    batches = [p.batch for p in plan.points]
    chosen = plan.chosen.batch if plan.chosen is not None else None
    after = next((b for b in batches if chosen is not None and b > chosen), None)
    # powers of two, the first (under a load), the wall, the chosen batch and the next one (not
    # every step of a bisection)
    ends = (batches[0], plan.kv_wall_sequences, chosen, after)
    shown = [p for p in plan.points if p.batch & (p.batch - 1) == 0 or p.batch in ends]
    for p in shown:
        centre = (chart.x_px(p.tokens_per_s_per_user), chart.y_px(p.tokens_per_s_per_device))
        tooltip = (f"batch {p.batch:,}: {p.tpot_s * 1e3:.2f} ms a token, {p.tokens_per_s_per_device:,.0f} "
                   f"tokens/s a device, {p.tokens_per_s_per_user:,.1f} a user")
        marker = Marker(centre, "circle", 11 * page.lines, Stroke(colour, 1.8 * page.lines), theme.background,
                        ElementKind.SERVING, f"batch {p.batch}", tooltip)
        markers.append(marker)
        wall = " (KV wall)" if p.batch == plan.kv_wall_sequences else ""
        text = Text(f"{p.batch:,}{wall}", centre, page.text, theme.foreground, ElementKind.SERVING,
                    tooltip=tooltip)
        gap = marker.size / 2 + 2
        places = ((1, -1, "start", "above"), (-1, 1, "end", "below"), (1, 1, "start", "below"),
                  (-1, -1, "end", "above"))
        requests.append(Request(Spots([(text, (centre[0] + dx * gap, centre[1] + dy * gap), 0.0, align, side,
                                        0.0) for dx, dy, align, side in places]), marker))
    return markers, requests


def _entries(plan: Plan, colour: str, theme, tpot_target_s: float | None, name: str = "",
             ringed: str = "chosen") -> list[Entry]:
    first, last, wall = plan.points[0].batch, plan.points[-1].batch, plan.kv_wall_sequences
    if plan.offloaded_sequences and last > wall:
        span = f"{first:,} to {last:,}: beyond {wall:,}, caches in host memory"
    elif last < wall:
        span = f"{first:,} to {last:,}, what the prefill chunks refill (KV wall {wall:,})"
    else:
        span = f"{first:,} to {wall:,}, the KV-cache wall"
    if first > 1:
        span += "; fewer slots cannot keep up with the load"
    out = [Entry("Batches (concurrent requests)", "heading", bold=True),
           Entry(f"{name}: {span}" if name else span, "marker", colour, "circle", fill=theme.background)]
    if plan.chosen is not None:
        out.append(Entry(f"{ringed}: batch {plan.chosen.batch:,}", "marker", theme.selected, "circle"))
    if tpot_target_s:
        out.append(Entry(f"TPOT target {tpot_target_s * 1e3:g} ms", "line", theme.suspect, "", (6.0, 4.0)))
    return out
