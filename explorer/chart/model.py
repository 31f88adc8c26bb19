"""Building the chart for a snapshot of the document and a page: the frame (title, axes,
the key's column), the ranges, the roofs and ridges, the workload's points, measurements,
and every label placed so none collides (``layout``). ``draw_chart`` is what every output
draws; ``build_chart`` takes the snapshot of a document first."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import NamedTuple

from explorer.chart import palette
from explorer.chart.axes_frame import tick_label
from explorer.chart.calibrated_roofs import calibrated_ceilings
from explorer.chart.compared_marks import compared_entry_text, compared_marks
from explorer.chart.elements import Chart, ElementKind, Line, Page, Stroke, Text
from explorer.chart.geometry import Rect, overlap
from explorer.chart.heading import heading
from explorer.chart.heading import lines as wrapped
from explorer.chart.key import (
    WHAT_IF,
    Entry,
    draw_key,
    key_width,
    unplotted_entries,
    workload_entries,
)
from explorer.chart.key_below import KEY_BELOW_ASPECT, MAX_BAND, key_band, with_key_below
from explorer.chart.key_corner import CornerWatch, empty_corner, overflow_rows
from explorer.chart.layout import place
from explorer.chart.memory_note import memory_note
from explorer.chart.points import measured_ceilings, measured_marks, measured_points, op_tips, workload_marks
from explorer.chart.profile_marks import profile_entries, profile_marks, profile_points
from explorer.chart.roofs import (
    Shown,
    line_label,
    link_roofs,
    merged,
    one_naming,
    ridges,
    roof_lines,
    roof_text,
    unnamed,
)
from explorer.chart.snapshot import Snapshot, Source
from explorer.chart.text import LINE_HEIGHT, text_width
from explorer.core.analysis.report import step_words
from explorer.core.analysis.roofline import COMPUTE, Ceilings, Roof
from explorer.core.analysis.terms import op_roofs
from explorer.core.hardware.hardware import Hardware

X_TITLE, Y_TITLE = "Arithmetic intensity (FLOP/byte)", "Performance (FLOP/s)"


@dataclass(frozen=True)
class ChartOptions:
    """How a chart is drawn: titles, theme, key, size and what it shows."""

    title: str | None = None  # None: the workload and the devices
    subtitle: str | None = None
    theme: str = "light"
    key: bool = True
    annotations: bool = True  # roof and ridge labels
    slots: dict[str, int] = field(default_factory=dict)  # device id → style slot (kept while shown)
    suites: frozenset[str] | None = None  # measured suites drawn (None: all)
    ranges: tuple | None = None  # ((x low, x high), (y low, y high)) kept (a zoom, a drag); None: fitted
    hints: tuple[int, ...] = ()  # the label places taken last time (``Chart.placement``), tried first
    key_place: str | None = None  # where the key went last time (``Chart.key_place``): a drag keeps it
    plot: Rect | None = None  # the plot last time: a drag keeps it where only the key's width changed
    heading: bool = True  # the title and subtitle (a slide deck sets them as the slide's own text)


def style_slots(previous: dict[str, int], shown: tuple[str, ...]) -> dict[str, int]:
    """Each shown device keeps the style slot it had; a new one takes the lowest free."""
    slots = {ident: slot for ident, slot in previous.items() if ident in shown}
    for ident in shown:
        if ident not in slots:
            slots[ident] = min(set(range(len(shown) + 1)) - set(slots.values()))
    return slots


def _devices(shot: Snapshot, slots: dict[str, int]) -> list[Shown]:
    session = shot.session
    out = []
    for device in shot.devices:
        hw = device.hardware
        ceilings, matrix = _ceilings(hw, session.params.dtype, session.precisions)
        out.append(Shown(hw, device.datasheet, ceilings, slots.get(hw.id, 0), matrix))
    return out


@lru_cache(maxsize=64)  # a batch drag asks for the same devices on every move
def _ceilings(hw: Hardware, dtype: str, precisions: tuple[str, ...]) -> tuple[Ceilings, Roof]:
    """The roofs drawn for ``hw`` (the chosen ``precisions``, else those ops of ``dtype``
    run at) and the matrix peak the workload's ops run under."""
    roofs = op_roofs(hw, dtype)
    ceilings = Ceilings.from_hardware(hw, precisions or (roofs.matrix.precision, roofs.vector.precision))
    if not ceilings.compute:  # none of the chosen precisions on this device
        ceilings = Ceilings.from_hardware(hw, ("fp32",))
    return ceilings, _roof_of(roofs.matrix)


def _roof_of(peak) -> Roof:
    return Roof(peak.label, peak.flops_per_s, peak.provenance.derived)


def _ranges(shot: Snapshot, devices: list[Shown], measured) -> tuple[tuple[float, float], ...]:
    """Decades that hold every op, measured point and ridge (x), every roof and point (y)."""
    a = shot.analysis
    xs = [float(v) for v, f in zip(a.intensity, a.flops, strict=True) if f > 0]
    ys = [float(v) for v, f in zip(a.performance, a.flops, strict=True) if f > 0]
    xs += [p.intensity for _, p in measured]
    ys += [p.flops_per_s for _, p in measured]
    if shot.expected is not None:  # the step at its expected time sits below the bound's
        ys.append(a.totals.flops / shot.expected.time_s)
    for x, y in profile_points(shot.profiles):
        xs.append(x)
        ys.append(y)
    if shot.compared is not None and shot.compared.analysis is not None:
        t = shot.compared.analysis.totals
        if t.flops > 0 and t.time_s > 0:
            xs.append(t.intensity)
            ys.append(t.flops / t.time_s)
    ridge = max(float(s.ceilings.ridges().max()) for s in devices)
    top = max(float(s.ceilings.compute_values.max()) for s in devices)
    low_x, high_x = min([*xs, 1.0]) / 3, max(max(xs, default=1.0) * 3, ridge * 10)
    low_y = min(min(ys, default=top) / 3, top / 1e4)
    return ((10.0 ** math.floor(math.log10(low_x)), 10.0 ** math.ceil(math.log10(high_x))),
            (10.0 ** math.floor(math.log10(low_y)), top * 3))


def _flats(devices: list[Shown], page: Page, multi: bool) -> tuple[tuple[float, float], ...]:
    """(ridge, room its label needs) for every compute roof's flat part."""
    return tuple((roof.value / shown.ceilings.bandwidth[0].value,
                  text_width(roof_text(shown, roof, COMPUTE, multi), page.text) + 16)
                 for shown in devices for roof in merged(shown.ceilings).compute)


def _room_for_labels(x_range, plot: Rect, flats: tuple[tuple[float, float], ...]):
    """Widen the intensity range (by half decades, at most three) until every compute roof's
    flat part, right of its ridge, is long enough for its label (``_flats``)."""
    low, high = x_range
    for _ in range(3):  # at most a decade and a half more: a narrow plot cannot gain by it
        if all(plot.width * math.log10(high / max(ridge, low)) / math.log10(high / low) >= room
               for ridge, room in flats):
            break
        high *= 10 ** 0.5
    return low, high


class _Content(NamedTuple):
    """What a chart shows, worked out once: where the key goes (inside, beside, below)
    changes only where it is drawn."""

    devices: list[Shown]
    measured: list
    entries: list[Entry]
    ops: list  # the plotted ops and their tooltips (``points.op_tips``)
    ranges: tuple  # the data's decades (``_ranges``), before room for the roofs' labels; or kept
    flats: tuple  # the compute roofs' ridges and their labels' widths (``_flats``)


def default_title(shot: Snapshot | Source) -> str:
    """"Llama 3 8B on H100 SXM vs MI300X: decode, batch 1 …, bf16"."""
    shot = shot if isinstance(shot, Snapshot) else Snapshot.of(shot)
    names = " vs ".join(d.hardware.label for d in shot.devices)
    a = shot.analysis
    return f"{a.model.name} on {names}: {step_words(a.model, a.params)}, {a.params.dtype}"


def _decades(low: float, high: float, length: float, room: float) -> list[float]:
    first, last = math.ceil(math.log10(low) - 1e-9), math.floor(math.log10(high) + 1e-9)
    step = max(1, math.ceil((last - first + 1) * room / max(length, 1.0)))
    return [10.0 ** e for e in range(first, last + 1, step)]


def _frame(shot: Snapshot, page: Page, options: ChartOptions, theme, entries: list[Entry], band: float = 0.0):
    """The title, subtitle and key column (or a ``band`` under the chart for the key), and
    the plot rectangle they leave."""
    pad = 0.6 * page.text
    width = page.width - 2 * pad
    texts, y = heading(options.title or default_title(shot), options.subtitle or "", page, theme.foreground) \
        if options.heading else ([], pad)
    # The key takes at most 30 % of the width (longer entries are shortened with "…").
    key = min(key_width(entries, page.text), 0.3 * page.width) if entries else 0.0
    tick = text_width("100 G", page.text)
    axis = LINE_HEIGHT * page.text
    right = max(pad, tick / 2 + 2)  # room for half the last tick's label ("100 k")
    bottom = page.height - pad - 2.7 * page.text - band
    note = memory_note(shot.analysis)
    lines = wrapped(note, page.text, width, 2) if note is not None else []
    bottom -= len(lines) * LINE_HEIGHT * page.text  # the note goes under the axis title
    for i, line in enumerate(lines):
        texts.append(Text(line, (page.width / 2, bottom + (2.8 + i * LINE_HEIGHT) * page.text), page.text,
                          theme.foreground, ElementKind.NOTE, dx=-text_width(line, page.text) / 2))
    plot = Rect(pad + axis + tick + pad, y + pad, page.width - right - (key + pad if key else 0.0), bottom)
    return plot, texts


@lru_cache(maxsize=16)  # the same for every frame of a drag: the ranges stay put
def _axes(chart: Chart, theme) -> tuple[tuple[Line, ...], tuple[Text, ...]]:
    page, plot = chart.page, chart.plot
    size = page.text
    grid = Stroke(theme.axis, max(1.0, 0.6 * page.lines), opacity=0.25)
    axis = Stroke(theme.axis, 1.2 * page.lines)
    lines = [Line(((plot.left, plot.bottom), (plot.right, plot.bottom)), axis, ElementKind.AXIS),
             Line(((plot.left, plot.top), (plot.left, plot.bottom)), axis, ElementKind.AXIS)]
    texts = []
    for value in _decades(*chart.x_range, plot.width, 3.5 * size):
        x = chart.x_px(value)
        lines.append(Line(((x, plot.top), (x, plot.bottom)), grid, ElementKind.GRID))
        label = tick_label(value)
        texts.append(Text(label, (x, plot.bottom + 0.3 * size), size, theme.foreground, ElementKind.TICK,
                          dx=-text_width(label, size) / 2))
    x_ticks = list(texts)
    for value in _decades(*chart.y_range, plot.height, 2.2 * size):
        y = chart.y_px(value)
        lines.append(Line(((plot.left, y), (plot.right, y)), grid, ElementKind.GRID))
        label = tick_label(value)
        tick = Text(label, (plot.left - 0.4 * size, y), size, theme.foreground, ElementKind.TICK,
                    dx=-text_width(label, size), dy=-0.58 * size)
        if not any(overlap(tick.corners, other.corners) for other in x_ticks):  # the bottom corner
            texts.append(tick)
    title = X_TITLE if text_width(X_TITLE, size) < plot.width else "Intensity (FLOP/byte)"
    texts.append(Text(title, ((plot.left + plot.right) / 2, plot.bottom + 1.55 * size), size,
                      theme.foreground, ElementKind.AXIS, dx=-text_width(title, size) / 2))
    y_title = Y_TITLE if text_width(Y_TITLE, size) < plot.bottom - plot.top else "FLOP/s"  # a short plot
    texts.append(Text(y_title, (0.6 * size, (plot.top + plot.bottom) / 2), size, theme.foreground,
                      ElementKind.AXIS, angle=-90.0, dx=-text_width(y_title, size) / 2))
    return tuple(lines), tuple(texts)


def _key_entries(shot: Snapshot, devices: list[Shown], theme, measured) -> list[Entry]:
    entries = [Entry("Devices", "heading", bold=True)]
    for shown in devices:
        moved = " (what-if)" if shown.hardware != shown.datasheet else ""
        entries.append(Entry(shown.hardware.label + moved, "line", shown.colour(theme), shown.symbol,
                             shown.dash))
    if any(s.hardware != s.datasheet for s in devices):
        entries.append(Entry(WHAT_IF, "line", theme.track, "", (1.4, 2.1)))
    a = shot.analysis
    groups = list(dict.fromkeys(palette.ROLE_GROUP.get(o.role, "elementwise")
                                for o, f in zip(a.ops, a.flops, strict=True) if f > 0))
    suites = sorted({p.suite for _, p in measured if not (p.suspect or p.contended)})
    expected = None if shot.expected is None else f"{shot.session.params.efficiency} efficiency"
    unplotted: dict[str, float] = {}
    for o, f, share in zip(a.ops, a.flops, a.time_share, strict=True):
        if f <= 0:
            unplotted[str(o.role)] = unplotted.get(str(o.role), 0.0) + float(share)
    plotted = {o.name for o, f in zip(a.ops, a.flops, strict=True) if f > 0}
    selected = shot.session.selected_op if shot.session.selected_op in plotted else ""
    text = compared_entry_text(shot)
    compared = None if text is None else (text, shot.compared.analysis is not None)
    track, fits = shot.sweep.batch.size > 1, bool(shot.sweep.fits.all())
    return entries + workload_entries(groups, suites, any(p.suspect for _, p in measured), theme, expected,
                                      any(p.contended and not p.suspect for _, p in measured),
                                      track=track and fits, selected=selected or "", compared=compared,
                                      unfit_track=track and not fits) \
        + unplotted_entries(unplotted) + profile_entries(shot.profiles, theme)


def build_chart(doc: Source, page: Page, options: ChartOptions | None = None) -> Chart:
    """The chart of ``doc`` (a Document) on ``page``: ``draw_chart`` of its snapshot."""
    return draw_chart(Snapshot.of(doc), page, options)


def draw_chart(shot: Snapshot, page: Page, options: ChartOptions | None = None) -> Chart:
    """The chart of ``shot`` on ``page``. The key goes into an empty corner of the plot
    where it covers nothing (below the compute roofs on the right, or above the bandwidth
    roofs on the left), else into a column of its own beside the plot."""
    options = options or ChartOptions()
    theme = palette.THEMES[options.theme]
    devices = _devices(shot, style_slots(options.slots, shot.session.hardware))
    measured = measured_points(shot, options.suites)
    entries = _key_entries(shot, devices, theme, measured) if options.key else []
    fitted = not options.ranges  # (kept ones: a zoom, a drag)
    content = _Content(devices, measured, entries, op_tips(shot.analysis),
                       _ranges(shot, devices, measured) if fitted else options.ranges,
                       _flats(devices, page, _named(devices, options)) if fitted else ())
    # A drag keeps the key where it was (one layout), on the same page only: a resize or
    # presentation mode mid-drag lays the key out afresh.
    if options.plot is not None and options.key_place in ("below", "beside"):
        below = options.key_place == "below"
        return _compose(shot, page, options, theme, content, beside=not below, below=below)
    if options.key_place is None or options.key_place == "inside":
        inside = _compose(shot, page, options, theme, content, beside=False)
        if inside is not None:
            return inside
    # Below when a column would leave too narrow a plot, unless the band would take so much
    # of the height that the plot would be flattened instead (four devices' unlabelled roofs).
    below = (page.width < KEY_BELOW_ASPECT * page.height
             and key_band(entries, page)[1] <= MAX_BAND * page.height)
    return _compose(shot, page, options, theme, content, beside=not below, below=below)


def _compose(shot: Snapshot, page: Page, options: ChartOptions, theme, content: _Content,
             beside: bool, below: bool = False) -> Chart | None:
    devices, measured, entries = content.devices, content.measured, content.entries
    columns, band = key_band(entries, page) if below else (1, 0.0)
    plot, frame_texts = _frame(shot, page, options, theme, entries if beside else [], band)
    plot, frame_texts, band = _kept_plot(shot, page, options, theme, plot, frame_texts, band, beside, below)
    if options.ranges:
        x_range, y_range = options.ranges
    else:
        x_range, y_range = content.ranges
        x_range = _room_for_labels(x_range, plot, content.flats)
    chart = Chart(page, plot, x_range, y_range, theme.background, theme.foreground)
    axis_lines, axis_texts = _axes(chart, theme)
    roof_items, labelled = roof_lines(chart, theme, devices, _named(devices, options))
    ridge_marks, ridge_requests = ridges(chart, theme, devices, {s.hardware.id for s in devices
                                                                 if s.hardware != s.datasheet})
    track, points = workload_marks(chart, shot, theme, content.ops)
    compared, compared_requests = compared_marks(chart, shot, theme)
    ceilings = [*measured_ceilings(chart, shot, theme), *calibrated_ceilings(chart, shot, theme),
                *link_roofs(chart, shot.analysis, theme, _named(devices, options))]
    profile_lines, profile_markers = profile_marks(chart, shot.profiles, theme, shot.analysis)
    markers = [*ridge_marks, *measured_marks(chart, measured, theme), *profile_markers, *compared, *points]
    lines = [*axis_lines, *roof_items, *(line for line, _ in ceilings), *track, *profile_lines]
    requests = _requests(chart, labelled, [*ridge_requests, *compared_requests], ceilings)
    inside = entries and not (beside or below)
    watch = _inside(chart, theme, devices, entries, lines, markers) if inside else None
    if watch is not None and not watch([], []):
        return None  # the key cannot go inside even before any label takes room
    # Last frame's places are hints only where the plot has not moved (a key that grew a row
    # under it, a first move's re-layout): elsewhere they name other places.
    hints = options.hints if options.plot is None or options.plot == plot else ()
    layout = (place(requests, plot, lines, markers, hints=hints, room=watch) if options.annotations
              else ([], [], ()))
    if layout is None:
        return None  # the key can no longer go inside: it goes beside or below the plot
    placed, overflow, chosen = layout
    placed = one_naming(placed, tuple(s.hardware.label for s in devices))
    key_parts, key_box = ([], [], []), None
    if entries:
        column = Rect(plot.right + 0.6 * page.text, plot.top, page.width - 0.6 * page.text, page.height)
        rows = entries + overflow_rows(overflow, theme, column.width if beside else None, page.text)
        if below:
            return with_key_below(chart, lines, markers, (*frame_texts, *axis_texts, *placed), rows, band,
                                  columns, theme, overflow, chosen)
        if beside:
            key_box = column
        else:
            key_box = empty_corner(chart, rows, lines, markers, placed)
            if key_box is None:
                return None
        key_parts = draw_key(rows, key_box.left, key_box.top, key_box.right, key_box.bottom, page.text,
                             theme.foreground, theme.background, page.lines)
    return replace(chart, lines=(*lines, *key_parts[0]), markers=(*markers, *key_parts[1]),
                   texts=(*frame_texts, *axis_texts, *placed, *key_parts[2]), overflow=tuple(overflow),
                   key=key_box, placement=chosen)


def _requests(chart: Chart, labelled, others, ceilings) -> list:
    """Every label to place, in order: the roofs', the highest first (they take the room
    above their line), then the ridge's and the others, then measured and link roofs'."""
    by_height = sorted(labelled, key=lambda item: (item[0].ref.kind != COMPUTE,
                                                   min(y for _, y in item[0].points)))
    return [*(request for _, request in by_height), *others,
            *(line_label(chart, line, text) for line, text in ceilings)]


def _inside(chart: Chart, theme, devices, entries, lines, markers) -> CornerWatch:
    """What tells the layout when the key can no longer go into a corner of the plot."""
    names = tuple(f"{s.hardware.label}: " for s in devices)
    return CornerWatch(chart, lines, markers,
                       lambda left: entries + overflow_rows(left, theme, None, chart.page.text),
                       lambda text: unnamed(text, names))


def _kept_plot(shot, page, options, theme, plot, frame_texts, band, beside, below):
    """(plot, frame texts, key band) with last frame's plot kept during a drag: its first
    move adds "(what-if)" and a row to the key, and a wider key column or a taller band
    would move everything on the plot (and make last frame's label places mean other
    places). A column keeps its width (entries wrap in it); a band gives up the rows that
    no longer fit (the key ends with "…" until the full layout when the drag ends)."""
    kept, place = options.plot, "beside" if beside else "below" if below else "inside"
    if kept is None or options.key_place != place or (kept.left, kept.top) != (plot.left, plot.top) \
            or kept == plot:  # (a key that moved out of its corner: the plot it had was the whole area)
        return plot, frame_texts, band
    if beside and kept.bottom == plot.bottom:
        return kept, frame_texts, band
    if below and kept.right == plot.right:
        band -= kept.bottom - plot.bottom
        plot, frame_texts = _frame(shot, page, options, theme, [], band)
        if abs(plot.bottom - kept.bottom) < 1e-6:
            return kept, frame_texts, band
    return plot, frame_texts, band


def _named(devices: list[Shown], options: ChartOptions) -> bool:
    """Whether roof labels carry the device's name: with several devices, and with one
    whose name a title of the user's (a scene's) does not give."""
    return len(devices) > 1 or (bool(options.title) and devices[0].hardware.label not in options.title)
