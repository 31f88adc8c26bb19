"""The energy roofline picture (``core.analysis.energy_roofline``): energy efficiency (FLOP/J)
against arithmetic intensity, both on log scales, as Choi et al. draw it. Each roof is a
curve rising to its ceiling, with its energy balance marked (a diamond: where a byte and
the arithmetic done on it cost the same); the primary device's time ridge is a dashed line
beside it; the workload's ops sit on the circuit energies' curve in their groups' colours,
the whole step a star; measured kernels are squares in their run's colour."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from explorer.chart import palette
from explorer.chart.axes_frame import log_axes
from explorer.chart.elements import Chart, ElementKind, Line, Marker, Page, Stroke, Text
from explorer.chart.geometry import Rect
from explorer.chart.heading import heading
from explorer.chart.key import Entry, draw_key, key_width
from explorer.chart.layout import Request, Spots, place
from explorer.chart.snapshot import Snapshot
from explorer.chart.text import LINE_HEIGHT, text_width
from explorer.core.analysis.energy_roofline import (
    EnergyPoint,
    EnergyRoof,
    EnergyView,
    circuit_roof,
    measured_roof,
    workload_points,
)
from explorer.core.analysis.report_words import step_words
from explorer.core.analysis.terms import op_roofs
from explorer.core.units import format_number, format_si

X_TITLE, Y_TITLE = "Arithmetic intensity (FLOP/byte)", "Energy efficiency (FLOP/J)"
SAMPLES = 160  # points along each curve


def energy_view(shot: Snapshot) -> EnergyView:
    """The energy picture of a snapshot: the circuit roof of the workload's precision with
    its ops and step, each measurement file's fitted roof and metered kernels."""
    a = shot.analysis
    dtype, roofs, notes = a.params.dtype, [], []
    circuit = circuit_roof(dtype)
    workload: tuple[EnergyPoint, ...] = ()
    if circuit is None:
        notes.append(f"no circuit energy for {dtype} arithmetic: the table has fp32, bf16 (at fp16's "
                     "cost), fp16 and int8; choose one of those to place the workload")
    else:
        roofs.append(circuit)
        workload = tuple(workload_points(a, circuit))
    calibrated = _calibrated_roof(shot)
    roofs += [calibrated] if calibrated else []
    measured = []
    for path, results in shot.results:
        roof, label, points, note = _run(Path(path).name, results)
        roofs += [roof] if roof else []
        notes += [note] if note else []
        measured += [(label, p) for p in points]
    hw = a.hardware
    ridge = op_roofs(hw, dtype).matrix.flops_per_s / hw.bandwidth_bytes_per_s
    title = f"Energy roofline: {a.model.name}, {step_words(a.model, a.params)}, {dtype}"
    return EnergyView(title, tuple(roofs), workload, tuple(measured), (hw.label, ridge), tuple(notes))


def _calibrated_roof(shot: Snapshot) -> EnergyRoof | None:
    """The roof of the constants a calibration of the primary device kept, where the
    expected time uses it: its time roof the device's vector peak of that precision and its
    bandwidth at the share the calibration measured."""
    e = shot.expected
    kept = e.efficiency.energy if e is not None else None
    if e is None or kept is None:
        return None
    hw, eff = shot.analysis.hardware, e.efficiency
    # The sweep's kernels are chains of multiply-adds on the vector units: their peak.
    peak = hw.vector_peak(kept.precision) or hw.peak(kept.precision)
    return measured_roof(f"{eff.name}: fitted, {kept.precision}", kept.constants,
                         peak.flops_per_s if peak else None, hw.bandwidth_bytes_per_s * eff.bandwidth,
                         kept.precision)


def _run(name: str, results) -> tuple[EnergyRoof | None, str, list[EnergyPoint], str | None]:
    """A measurement file's fitted roof (None: why not, in the note), the label its points
    go under, and its kernels with a measured power: each launch's FLOPs over its joules."""
    from explorer.kernels import energy

    dtype, metered = energy.metered(results)
    if not metered:
        return None, "", [], f"{name}: no power was measured with its main-memory kernels"
    constants = energy.fitted(results)
    # Its time roof: the best rates its own metered kernels reached (what the fit's times did).
    peak = max((p.flops_per_s for p in metered if p.flops > 0), default=None)
    bandwidth = max(p.bytes_per_s for p in metered)
    roof = None if isinstance(constants, str) else measured_roof(
        f"{name}: fitted, {dtype}", constants, peak, bandwidth, dtype)
    note = None
    if roof is None:
        why = constants if isinstance(constants, str) else \
            "ε_flop or ε_byte came out ≤ 0, or π₀ below 0: too few or too alike kernels, or a noisy meter"
        note = f"{name}: no roof fitted ({why})"
    points = [EnergyPoint(f"{p.suite}/{p.kernel}", "measured", p.intensity,
                          p.flops / (p.power_w * p.time_median_s), p.power_w * p.time_median_s)
              for p in metered if p.flops > 0]
    return roof, roof.label if roof else f"{name}: measured, {dtype}", points, note


def energy_chart(view: EnergyView, page: Page, theme_name: str, key: bool = True, title: str | None = None,
                 subtitle: str = "", with_heading: bool = True) -> Chart:
    """``view`` drawn on ``page``: the roofs' curves with their balances, the time ridge,
    the workload's ops and step, measured kernels, and the key in a column of its own
    (``title``: instead of the view's; ``with_heading`` False: no title, a slide's own)."""
    theme = palette.THEMES[theme_name]
    texts, top = heading(title or view.title, subtitle, page, theme.foreground) if with_heading \
        else ([], 0.6 * page.text)
    colours = {roof.label: _roof_colour(theme, i, roof) for i, roof in enumerate(view.roofs)}
    entries = _entries(view, theme, colours) if key else []
    column = min(key_width(entries, page.text), 0.3 * page.width) if entries else 0.0
    pad = 0.6 * page.text
    plot = Rect(pad + LINE_HEIGHT * page.text + text_width("100 G", page.text) + pad, top + pad,
                page.width - pad - (column + pad if column else 0.0), page.height - pad - 2.7 * page.text)
    x_range, y_range = _ranges(view)
    chart = Chart(page, plot, x_range, y_range, theme.background, theme.foreground)
    lines, ticks = log_axes(chart, theme, X_TITLE, Y_TITLE)
    markers, requests = [], []
    for roof in view.roofs:
        drawn, diamond, labels = _roof(chart, roof, colours[roof.label], theme, _dash(view, roof))
        lines += drawn
        markers.append(diamond)
        requests += labels
    ridge_line, ridge_request = _ridge(chart, view, theme)
    if ridge_line is not None and ridge_request is not None:  # (both or neither)
        lines.append(ridge_line)
        requests.append(ridge_request)
    markers += _points(chart, view, theme, colours)
    placed, overflow, _ = place(requests, plot, lines, markers)
    if entries and overflow:  # a label with no room: in the key, never dropped
        entries += [Entry("Unlabelled (no room)", "heading", bold=True),
                    *(Entry(t.text, "line", t.colour) for t in overflow)]
    box = Rect(plot.right + pad, plot.top, page.width - pad, page.height) if entries else None
    key_parts = draw_key(entries, box.left, box.top, box.right, box.bottom, page.text, theme.foreground,
                         theme.background, page.lines) if box else ((), (), ())
    return Chart(page, plot, x_range, y_range, theme.background, theme.foreground,
                 lines=(*lines, *key_parts[0]), markers=(*markers, *key_parts[1]),
                 texts=(*texts, *ticks, *placed, *key_parts[2]), key=box, overflow=tuple(overflow))


MEASURED_DASHES = ((6.0, 3.0), (2.0, 3.0), (10.0, 3.0, 2.0, 3.0), (4.0, 4.0))  # one a measured roof


def _roof_colour(theme, index: int, roof: EnergyRoof) -> str:
    return theme.measured if roof.measured else theme.devices[index % len(theme.devices)]


def _dash(view: EnergyView, roof: EnergyRoof) -> tuple[float, ...]:
    """No dash for the circuit energies; each measured roof its own (the key tells them apart)."""
    measured = [r.label for r in view.roofs if r.measured]
    return MEASURED_DASHES[measured.index(roof.label) % len(MEASURED_DASHES)] if roof.measured else ()


def _decades(low: float, high: float) -> tuple[float, float]:
    return 10.0 ** math.floor(math.log10(low)), 10.0 ** math.ceil(math.log10(high))


def _ranges(view: EnergyView) -> tuple[tuple[float, float], tuple[float, float]]:
    """Decades holding every point, balance and ridge (across) and every point and roof
    over that span (up)."""
    points = [*view.workload, *(p for _, p in view.measured)]
    xs = [p.intensity for p in points] + [r.balance for r in view.roofs]
    xs += [view.ridge[1]] if view.ridge else []
    x_range = _decades(min([*xs, 1.0]) / 3, max([*xs, 100.0]) * 3)
    ys = [p.flops_per_joule for p in points]
    for roof in view.roofs:
        ys += [float(roof.flops_per_joule(x_range[0])), roof.ceiling]
    if not ys:
        ys = [1e9, 1e12]
    return x_range, _decades(min(ys) / 2, max(ys) * 2)


def _roof(chart: Chart, roof: EnergyRoof, colour: str, theme,
          dash: tuple[float, ...]) -> tuple[list[Line], Marker, list[Request]]:
    """A roof's curve and its balance's drop line, the balance's diamond, and the requests
    of their labels."""
    page = chart.page
    xs = np.geomspace(*chart.x_range, SAMPLES)
    ys = roof.flops_per_joule(xs)
    dash = tuple(d * page.lines for d in dash)
    tip = (f"{roof.label}: ε_flop {format_si(roof.constants.flop_j, 'J')}, ε_byte "
           f"{format_si(roof.constants.byte_j, 'J')}"
           + (f", π₀ {roof.constants.constant_w:.3g} W" if roof.timed else ", no constant power")
           + f"; at most {format_si(roof.ceiling, 'FLOP/J')}")
    curve = Line(tuple((chart.x_px(float(x)), chart.y_px(float(y))) for x, y in zip(xs, ys, strict=True)),
                 Stroke(colour, 2.2 * page.lines, dash), ElementKind.ROOF, tooltip=tip)
    centre = (chart.x_px(roof.balance), chart.y_px(float(roof.flops_per_joule(roof.balance))))
    balance = f"energy balance {format_number(roof.balance)} FLOP/byte"
    balance_tip = f"{roof.label}: {balance}, where a byte costs what the arithmetic done on it does"
    diamond = Marker(centre, "diamond", 12 * page.lines, Stroke(colour, 1.8 * page.lines), theme.background,
                     ElementKind.RIDGE, "energy balance", balance_tip)
    # A dotted drop from the diamond to the axis (as the time ridge's line), labelled at its foot,
    # where the plot is empty under a curve rising to the right.
    drop = Line((centre, (centre[0], chart.plot.bottom)), Stroke(colour, 1.2 * page.lines, (2.0, 3.0)),
                ElementKind.ROOF, tooltip=balance_tip)  # (a roof's kind: no other label crosses it)
    row, spots = 1.4 * page.text, []
    places = [*((chart.plot.bottom - 4 - k * row, "above") for k in range(3)),  # at the drop's foot
              *((centre[1] - diamond.size / 2 - 2 - k * row, "above") for k in range(3))]  # over the diamond
    for words in (balance, f"balance {format_number(roof.balance)}"):
        text = Text(words, centre, page.text, colour, ElementKind.RIDGE, tooltip=balance_tip)
        spots += [(text, (centre[0] + dx, y), 0.0, align, side, 0.0) for y, side in places
                  for dx, align in ((4.0, "start"), (-4.0, "end"))]
    around = Request(Spots(spots), drop)
    low, high = chart.x_range
    spots = []
    for words in (f"{_short(roof)}: up to {format_si(roof.ceiling, 'FLOP/J')}",
                  f"up to {format_si(roof.ceiling, 'FLOP/J')}"):  # the shorter where the longer has no room
        name = Text(words, curve.points[-1], page.text, colour, ElementKind.ROOF, tooltip=tip)
        for share in (0.0, 0.15, 0.3, 0.45):  # from the right end leftwards, where the curve is flattest
            intensity = high * (low / high) ** share
            anchor = (chart.x_px(intensity) - 6, chart.y_px(float(roof.flops_per_joule(intensity))))
            spots += [(name, anchor, 0.0, "end", side, 4.0) for side in ("above", "below")]
    along = Request(Spots(spots), curve)
    return [curve, drop], diamond, [along, around]


def _short(roof: EnergyRoof) -> str:
    return roof.label.split(" (", 1)[0]


def _ridge(chart: Chart, view: EnergyView, theme) -> tuple[Line | None, Request | None]:
    """The primary device's time ridge: a dashed upright line and its label."""
    if view.ridge is None:
        return None, None
    device, intensity = view.ridge
    low, high = chart.x_range
    if not low < intensity < high:
        return None, None
    page, plot = chart.page, chart.plot
    x = chart.x_px(intensity)
    words = f"{device} time ridge {format_number(intensity)} FLOP/byte"
    # (a grid line's kind: labels may cross it, as they cross the grid, on a narrow plot)
    line = Line(((x, plot.top), (x, plot.bottom)), Stroke(theme.track, 1.6 * page.lines, (5.0, 4.0)),
                ElementKind.GRID, tooltip=f"{words}: where its time roofline bends (compute and memory "
                                          "take equal time)")
    text = Text(words, (x, plot.top), page.text, theme.foreground, ElementKind.RIDGE, tooltip=line.tooltip)
    row = 1.4 * page.text
    spots = [(text, (x + dx, y), 0.0, align, side, 0.0)
             for y, side in [*((plot.top + 4 + k * row, "below") for k in range(4)),
                             *((plot.bottom - 4 - k * row, "above") for k in range(3))]
             for dx, align in ((4.0, "start"), (-4.0, "end"))]
    return line, Request(Spots(spots), line)


def _points(chart: Chart, view: EnergyView, theme, colours: dict[str, str]) -> list[Marker]:
    page, markers = chart.page, []
    for p in view.workload:
        centre = (chart.x_px(p.intensity), chart.y_px(p.flops_per_joule))
        tip = (f"{p.name}: {format_number(p.intensity)} FLOP/byte, {format_si(p.flops_per_joule, 'FLOP/J')}, "
               f"{format_si(p.joules, 'J')} (45 nm circuit energies)")
        if p.role == "step":
            markers.append(Marker(centre, "star", 22 * page.lines, Stroke(theme.foreground, 1.4 * page.lines),
                                  theme.star, ElementKind.STEP, "step", tip, fill_opacity=0.75))
        else:
            colour = theme.group_colour(p.role)
            shape = palette.GROUP_SHAPES[palette.group_of(p.role)]
            markers.append(Marker(centre, shape, 11 * page.lines, Stroke(colour, 2.0 * page.lines),
                                  theme.background, ElementKind.OP, p.name, tip))
    for label, p in view.measured:
        centre = (chart.x_px(p.intensity), chart.y_px(p.flops_per_joule))
        tip = (f"{label}, {p.name}: {format_number(p.intensity)} FLOP/byte, "
               f"{format_si(p.flops_per_joule, 'FLOP/J')} measured ({format_si(p.joules, 'J')} a launch)")
        markers.append(Marker(centre, "square", 10 * page.lines, Stroke(theme.foreground, 1.2 * page.lines),
                              colours.get(label, theme.measured), ElementKind.MEASURED, p.name, tip))
    return markers


def _entries(view: EnergyView, theme, colours: dict[str, str]) -> list[Entry]:
    out = [Entry("Energy rooflines", "heading", bold=True)]
    for roof in view.roofs:
        out.append(Entry(_short(roof), "line", colours[roof.label], "", _dash(view, roof)))
    if view.roofs:
        out.append(Entry("energy balance", "marker", theme.foreground, "diamond", fill=theme.background))
    if view.ridge is not None:
        out.append(Entry(f"time ridge, {view.ridge[0]}", "line", theme.track, "", (5.0, 4.0)))
    if view.workload:
        out.append(Entry("The step's ops (circuit energies)", "heading", bold=True))
        groups = dict.fromkeys(palette.group_of(p.role) for p in view.workload if p.role != "step")
        out += [Entry(group, "marker", dict(theme.groups)[group], palette.GROUP_SHAPES[group],
                      fill=theme.background)
                for group in groups]
        out.append(Entry("whole step", "marker", theme.foreground, "star", fill=theme.star,
                         fill_opacity=0.75))
    if view.measured:
        out.append(Entry("measured kernels (power × time)", "marker", theme.foreground, "square",
                         fill=theme.measured))
    return out
