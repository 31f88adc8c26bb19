"""Building the chart for a snapshot of the document and a page: the frame (title, axes,
the key's column), the ranges, the roofs and ridges, the workload's points, measurements,
and every label placed so none collides (``layout``). ``draw_chart`` is what every output
draws; ``build_chart`` takes the snapshot of a document first. How it is drawn:
``options``; what it shows: ``roofline_content``; the frame: ``roofline_frame``."""

from __future__ import annotations

from dataclasses import replace

from explorer.chart import palette
from explorer.chart.calibrated_roofs import calibrated_ceilings
from explorer.chart.compared_marks import compared_marks
from explorer.chart.elements import Chart, ElementKind, Page
from explorer.chart.geometry import Rect
from explorer.chart.key import KeyParts, draw_key
from explorer.chart.key_below import KEY_BELOW_ASPECT, MAX_BAND, key_band, with_key_below
from explorer.chart.key_corner import CornerWatch, empty_corner, overflow_rows
from explorer.chart.layout import place
from explorer.chart.options import ChartOptions, style_slots
from explorer.chart.points import (
    link_pins,
    measured_ceilings,
    measured_marks,
    measured_points,
    op_tips,
    workload_marks,
)
from explorer.chart.profile_marks import profile_marks
from explorer.chart.roofline_content import (
    Content,
    data_ranges,
    flats,
    key_entries,
    room_for_labels,
    shown_devices,
)
from explorer.chart.roofline_frame import axes, frame, kept_plot
from explorer.chart.roofs import (
    Shown,
    covered,
    line_label,
    link_roofs,
    name_prefixes,
    one_naming,
    ridges,
    roof_lines,
    unnamed,
)
from explorer.chart.snapshot import Snapshot, Source
from explorer.core.analysis.roofline import COMPUTE


def build_chart(doc: Source, page: Page, options: ChartOptions | None = None) -> Chart:
    """The chart of ``doc`` (a Document) on ``page``: ``draw_chart`` of its snapshot."""
    return draw_chart(Snapshot.of(doc), page, options)


def draw_chart(shot: Snapshot, page: Page, options: ChartOptions | None = None) -> Chart:
    """The chart of ``shot`` on ``page``. The key goes into an empty corner of the plot
    where it covers nothing (below the compute roofs on the right, or above the bandwidth
    roofs on the left), else into a column of its own beside the plot."""
    options = options or ChartOptions()
    theme = palette.THEMES[options.theme]
    devices = shown_devices(shot, style_slots(options.slots, shot.session.hardware))
    measured = measured_points(shot, options.suites)
    entries = key_entries(shot, devices, theme, measured) if options.key else []
    fitted = not options.ranges  # (kept ones: a zoom, a drag)
    content = Content(devices, measured, entries, op_tips(shot.analysis),
                       options.ranges if options.ranges else data_ranges(shot, devices, measured),
                       flats(devices, page, _named(devices, options)) if fitted else ())
    # A drag keeps the key where it was (one layout), on the same page only: a resize or
    # presentation mode mid-drag lays the key out afresh.
    if options.plot is not None and options.key_place in ("below", "beside"):
        return _outside(shot, page, options, theme, content, below=options.key_place == "below")
    if options.key_place is None or options.key_place == "inside":
        inside = _compose(shot, page, options, theme, content, beside=False)
        if inside is not None:
            return inside
    # Below when a column would leave too narrow a plot, unless the band would take so much
    # of the height that the plot would be flattened instead (four devices' unlabelled roofs).
    below = (page.width < KEY_BELOW_ASPECT * page.height
             and key_band(entries, page)[1] <= MAX_BAND * page.height)
    return _outside(shot, page, options, theme, content, below)


def _outside(shot: Snapshot, page: Page, options: ChartOptions, theme: palette.Theme, content: Content,
             below: bool) -> Chart:
    """The chart with its key below or beside the plot, where there is always room for it."""
    chart = _compose(shot, page, options, theme, content, beside=not below, below=below)
    assert chart is not None  # (only a key inside the plot can find no room)
    return chart


def _compose(shot: Snapshot, page: Page, options: ChartOptions, theme, content: Content,
             beside: bool, below: bool = False) -> Chart | None:
    devices, measured, entries = content.devices, content.measured, content.entries
    columns, band = key_band(entries, page) if below else (1, 0.0)
    plot, frame_texts = frame(shot, page, options, theme, entries if beside else [], band)
    plot, frame_texts, band = kept_plot(shot, page, options, theme, plot, frame_texts, band, beside, below)
    if options.ranges:
        x_range, y_range = options.ranges
    else:
        x_range, y_range = content.ranges
        x_range = room_for_labels(x_range, plot, content.flats)
    chart = Chart(page, plot, x_range, y_range, theme.background, theme.foreground)
    axis_lines, axis_texts = axes(chart, theme)
    roof_items, labelled = roof_lines(chart, theme, devices, _named(devices, options))
    ridge_marks, ridge_requests = ridges(chart, theme, devices, {s.hardware.id for s in devices
                                                                 if s.hardware != s.datasheet})
    track, points = workload_marks(chart, shot, theme, content.ops)
    compared, compared_requests = compared_marks(chart, shot, theme)
    ceilings = [*measured_ceilings(chart, shot, theme), *calibrated_ceilings(chart, shot, theme),
                *link_roofs(chart, shot.analysis, theme, _named(devices, options))]
    profile_lines, profile_markers = profile_marks(chart, shot.profiles, theme, shot.analysis)
    markers = [*ridge_marks, *measured_marks(chart, measured, theme), *profile_markers, *compared,
               *link_pins(chart, shot.analysis, theme), *points]
    lines = [*axis_lines, *roof_items, *(line for line, _ in ceilings), *track, *profile_lines]
    requests = _requests(chart, labelled, [*ridge_requests, *compared_requests], ceilings)
    inside = entries and not (beside or below)
    watch = _inside(chart, theme, devices, entries, lines, markers) if inside else None
    if watch is not None and not watch([], []):
        return None  # the key cannot go inside even before any label takes room
    # Last frame's places are hints only where the plot has not moved (a key that grew a row
    # under it, a first move's re-layout): elsewhere they name other places.
    hints = options.hints if options.plot is None or options.plot == plot else ()
    layout = place(requests, plot, covered(labelled, lines), markers, hints=hints, room=watch) \
        if options.annotations else ([], [], ())
    if layout is None:
        return None  # the key can no longer go inside: it goes beside or below the plot
    placed, overflow, chosen = layout
    placed, overflow = one_naming(placed, tuple(s.hardware.label for s in devices), overflow)
    key_parts: KeyParts = ((), (), ())
    key_box: Rect | None = None
    if entries:
        column = _key_column(plot, page, (*frame_texts, *axis_texts))
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


def _key_column(plot: Rect, page: Page, texts) -> Rect:
    """The key's column beside the plot: down to the note under the axis ("Does not fit: …"),
    which spans the page, where there is one, and to the axis title where a narrow plot's
    title reaches under the column."""
    left = plot.right + 0.6 * page.text
    under = [min(y for _, y in t.corners) for t in texts if t.kind == ElementKind.NOTE
             or (t.kind == ElementKind.AXIS and max(x for x, _ in t.corners) > left
                 and min(y for _, y in t.corners) > plot.bottom)]
    bottom = min(under, default=page.height) - 0.3 * page.text
    return Rect(left, plot.top, page.width - 0.6 * page.text, bottom)


def _requests(chart: Chart, labelled, others, ceilings) -> list:
    """Every label to place, in order: the roofs', the highest first (they take the room
    above their line), then the ridge's and the others, then measured and link roofs'."""
    by_height = sorted(labelled, key=lambda item: (item[0].ref.kind != COMPUTE,
                                                   min(y for _, y in item[0].points)))
    return [*(request for _, request in by_height), *others,
            *(line_label(chart, line, text) for line, text in ceilings)]


def _inside(chart: Chart, theme, devices, entries, lines, markers) -> CornerWatch:
    """What tells the layout when the key can no longer go into a corner of the plot."""
    names = name_prefixes(tuple(s.hardware.label for s in devices))
    return CornerWatch(chart, lines, markers,
                       lambda left: entries + overflow_rows(left, theme, None, chart.page.text),
                       lambda text: unnamed(text, names))


def _named(devices: list[Shown], options: ChartOptions) -> bool:
    """Whether roof labels carry the device's name: with several devices, and with one
    whose name a title of the user's (a scene's) does not give."""
    title = options.title or ""
    return len(devices) > 1 or (bool(title) and devices[0].hardware.label not in title)
