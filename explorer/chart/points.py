"""Points on the page: the workload's ops (hollow, area by their share of the step), the
whole-step star on its batch track, the selection, measured kernels (filled, one shape per
suite; grey when suspect) and measured ceilings with their labels."""

from __future__ import annotations

import math
from dataclasses import dataclass

from explorer.chart.elements import Chart, ElementKind, Line, Marker, Stroke, Text
from explorer.chart.palette import GROUP_SHAPES, SUITE_SHAPES, TRACK_DASH, UNFIT_DASH, group_of
from explorer.chart.snapshot import Snapshot
from explorer.core.analysis.analysis import Analysis
from explorer.core.analysis.engine_terms import band_words, efficiency_unchecked
from explorer.core.analysis.roofline import COMPUTE, Ceilings, Roof
from explorer.core.model import collective_costs
from explorer.core.model.applicability import Phase
from explorer.core.units import format_number, format_si, format_time, rate_unit
from explorer.kernels.results import Point, cache_label


@dataclass(frozen=True)
class OpInfo:
    """What a hover shows for one plotted op."""

    name: str
    role: str
    count: int
    flops: int
    bytes: int
    intensity: float
    performance: float
    time_s: float
    share: float
    bound: str
    link: str = ""  # a communication op: what it sends, over which link, latency and transfer

    def tooltip(self) -> str:
        repeat = f" (×{self.count} layers)" if self.count > 1 else ""
        if self.link:
            return "\n".join([
                f"{self.name}{repeat}, communication: {self.share:.1%} of the step", self.link,
                f"predicted time: {format_time(self.time_s)} each, {self.share:.1%} of the step",
            ])
        return "\n".join([
            f"{self.name}{repeat}, {group_of(self.role)}: {self.share:.1%} of the step",
            f"FLOPs: {format_si(self.flops, 'FLOP')}   bytes: {format_si(self.bytes, 'B')}",
            f"intensity: {format_number(self.intensity)} FLOP/byte",
            f"attainable: {format_si(self.performance, 'FLOP/s')} ({self.bound}-bound)",
            f"predicted time: {format_time(self.time_s)} each, {self.share:.1%} of the step",
        ])


def op_infos(analysis: Analysis) -> list[OpInfo]:
    """Every op that does arithmetic (a lookup has no place on a log axis)."""
    share, bounds = analysis.time_share, analysis.bounds
    out = []
    for i, o in enumerate(analysis.ops):
        if analysis.flops[i] <= 0:
            continue
        link, note = analysis.links[i], ""
        if link is not None:
            algorithm, latency = collective_costs.op_algorithm(link, o, analysis.params.phase == Phase.TRAIN)
            transfer = float(analysis.time_s[i]) - latency
            note = (f"sends {format_si(float(analysis.bytes[i]), 'B')} over {link.name} ({algorithm}): "
                    f"{format_time(latency)} latency + {format_time(transfer)} transfer")
        out.append(OpInfo(o.name, o.role, o.count, int(analysis.flops[i]), int(analysis.bytes[i]),
                          float(analysis.intensity[i]), float(analysis.performance[i]),
                          float(analysis.time_s[i]), float(share[i]), str(bounds[i]), note))
    return out


def op_tips(analysis: Analysis) -> list[tuple[OpInfo, str]]:
    """Every plotted op (``op_infos``) with its hover text."""
    return [(info, info.tooltip()) for info in op_infos(analysis)]


def measured_tooltip(p: Point, source: str) -> str:
    knob = " ".join(f"{k}={v}" for k, v in p.param.items())
    lines = [f"measured {p.suite}/{p.kernel} {p.dtype} {knob}".rstrip(),
             f"median {format_time(p.time_median_s)} (p20 {format_time(p.time_p20_s)}, "
             f"p80 {format_time(p.time_p80_s)})",
             f"{format_si(p.flops_per_s, 'FLOP/s')}, {format_si(p.bytes_per_s, 'B/s')}, "
             f"{format_number(p.intensity)} FLOP/byte", f"from {source}"]
    if p.suspect:
        lines.append(f"SUSPECT: {p.suspect}")
    if p.contended:
        lines.append(f"CONTENDED: {p.contended} (not used as a ceiling)")
    return "\n".join(lines)


def measured_points(shot: Snapshot, suites) -> list[tuple[str, Point]]:
    """(source, point) for every measured point that can be placed: a checked result with
    arithmetic, of the chosen suites (None: all)."""
    sources = [(path, list(results.points)) for path, results in shot.results]
    if shot.live_points:
        sources.append(("the run in progress", list(shot.live_points)))
    return [(source, p) for source, points in sources for p in points
            if p.flops > 0 and not p.check and (suites is None or p.suite in suites)]


STAR_PX = 34.0  # the whole step's star, across (at scale 1): wider than an op of the whole step (30 px)


def track_line(chart: Chart, sweep, theme) -> Line:
    """The batch track: dotted, or dashed where not even one sequence fits (the sweep then
    runs past the limit to ``sweep.UNFIT_REACH``; otherwise it ends where memory does)."""
    rates = sweep.flops / sweep.time_s
    points = tuple((chart.x_px(x), chart.y_px(y)) for x, y in zip(sweep.intensity, rates, strict=True))
    dash = TRACK_DASH if sweep.fits.all() else UNFIT_DASH
    scale = chart.page.lines
    return Line(points, Stroke(theme.track, 1.5 * scale, tuple(d * scale for d in dash)), ElementKind.TRACK)


def workload_marks(chart: Chart, shot: Snapshot, theme, ops: list) -> tuple[list[Line], list[Marker]]:
    """The batch track (dotted), the ops (hollow, one shape and colour per group, area by
    their share of the time), the selection (a neutral ring), and the whole-step star over
    which it is drawn under (``STAR_PX``); ``ops``: ``op_tips`` of the analysis."""
    a, sweep = shot.analysis, shot.sweep
    scale = chart.page.lines
    lines, markers = [], []
    if sweep.batch.size > 1:
        lines.append(track_line(chart, sweep, theme))
    pens: dict[str, Stroke] = {}  # one per group's colour
    for info, tip in ops:
        center = (chart.x_px(info.intensity), chart.y_px(info.performance))
        colour = theme.group_colour(info.role)
        pen = pens.get(colour) or pens.setdefault(colour, Stroke(colour, 2.0 * scale * theme.pen_factor))
        shape = GROUP_SHAPES[group_of(info.role)]
        markers.append(Marker(center, shape, (8 + 22 * math.sqrt(info.share)) * scale, pen,
                              theme.background, ElementKind.OP, info.name, tip, fill_opacity=0.6))
        if info.name == shot.session.selected_op:
            markers.append(Marker(center, "circle", 30 * scale, Stroke(theme.selected, 4 * scale), None,
                                  ElementKind.SELECTION, info.name))
    # The star under the ops (``MARKER_ORDER``), opaque, its points reaching past the largest
    # op: at batch 1 most of the step sits at its place, and every op there stays visible.
    t = a.totals
    star = (chart.x_px(t.intensity), chart.y_px(t.flops / t.time_s))
    tooltip = (f"whole step, batch {a.params.batch:,}: {format_number(t.intensity)} FLOP/byte, "
               f"{format_time(t.time_s)}, {format_number(t.tokens_per_s)} {t.item_unit}/s\n"
               "drag sideways to change the batch (along the dotted track)")
    if shot.expected is not None:
        drawn, marker = _expected_marks(chart, shot, theme, star)
        lines.extend(drawn)
        markers.append(marker)
    outline = Stroke(theme.foreground, 1.2 * scale)  # thin: the fill, not the outline, shows past the ops
    markers.append(Marker(star, "star", STAR_PX * scale, outline, theme.star, ElementKind.STEP,
                          ElementKind.STEP, tooltip))
    return lines, markers


def pinned_ops(analysis: Analysis) -> list[int]:
    """The ops drawn on their link's roof: communication with no arithmetic (an all-to-all
    sends tokens, it adds nothing), which has no intensity to place it by, taking at least
    0.1 % of the step."""
    return [i for i, link in enumerate(analysis.links)
            if link is not None and analysis.flops[i] <= 0 and analysis.time_share[i] >= 0.001]


def link_pins(chart: Chart, analysis: Analysis, theme) -> list[Marker]:
    """Each of ``pinned_ops`` on its link's roof where the roof enters the plot (its
    intensity, 0, lies off a log axis to the left), in the communication group's shape and
    colour, its area by its share of the step as every op's: the roof is not drawn empty
    while the step spends time on the link (issue 58: DeepSeek-V3's all-to-alls)."""
    scale, out = chart.page.lines, []
    colour = dict(theme.groups)["communication"]
    (x_low, x_high), (y_low, _) = chart.x_range, chart.y_range
    for i in pinned_ops(analysis):
        o, link = analysis.ops[i], analysis.links[i]
        assert link is not None  # (``pinned_ops``)
        rate = link.per_direction_bytes_per_s
        start, end = max(x_low, y_low / rate), min(analysis.roofs.matrix.flops_per_s / rate, x_high)
        if start >= end:
            continue
        share, repeat = float(analysis.time_share[i]), f" (×{o.count} layers)" if o.count > 1 else ""
        size = (8 + 22 * math.sqrt(share)) * scale
        (xa, ya), (xb, yb) = ((chart.x_px(x), chart.y_px(x * rate)) for x in (start, end))
        # far enough along the roof to be whole inside the plot, across and up
        step = min(1.0, (size / 2 + 3 * scale) / max(min(abs(xb - xa), abs(yb - ya)), 1e-9))
        center = (xa + step * (xb - xa), ya + step * (yb - ya))
        tip = (f"{o.name}{repeat}, communication: {share:.1%} of the step\n"
               f"sends {format_si(float(analysis.bytes[i]), 'B')} over {link.name} and does no "
               "arithmetic: its intensity is 0, off the axis to the left, so it is drawn where its "
               f"link's roof enters the plot\npredicted time: {format_time(float(analysis.time_s[i]))} each")
        pen = Stroke(colour, 2.0 * scale * theme.pen_factor)
        out.append(Marker(center, GROUP_SHAPES["communication"], size, pen, theme.background,
                          ElementKind.OP, o.name, tip, fill_opacity=0.6))
    return out


def _expected_marks(chart: Chart, shot: Snapshot, theme, star) -> tuple[list[Line], Marker]:
    """The whole step at its expected time (a hollow star below the bound's: same FLOPs and
    bytes, more time), a dotted drop from the bound to it, and its band: a pale bar from the
    band's short time to its long one (``engine_terms.band_words`` says what it held held out)."""
    a, e = shot.analysis, shot.expected
    assert e is not None
    scale, t = chart.page.lines, a.totals
    center = (star[0], chart.y_px(t.flops / e.time_s))
    parts = ", ".join(f"{name} {format_time(s)}" for name, s in e.parts.items() if s > 0)
    words = band_words(a.hardware, efficiency_unchecked(a.params.efficiency))
    band = "" if e.band is None else (f"\nexpected between {format_time(e.band[0])} and "
                                      f"{format_time(e.band[1])} ({words})")
    tooltip = (f"whole step, expected: {format_time(e.time_s)}, {e.ratio:.2f}× the bound, with "
               f"{a.params.efficiency} efficiency ({e.efficiency.name}, engine {e.engine or 'typical'})"
               f"{band}\n{parts}\nreal kernels reach a share of each roof: see How close are the "
               "predictions (docs/validation.md)")
    dotted = Stroke(theme.foreground, 1.2 * scale, (1.5 * scale, 2.5 * scale), opacity=0.7)
    lines = [Line((star, center), dotted, ElementKind.EXPECTED, tooltip=tooltip)]
    if e.band is not None:
        ends = ((star[0], chart.y_px(t.flops / e.band[1])), (star[0], chart.y_px(t.flops / e.band[0])))
        lines.insert(0, Line(ends, Stroke(theme.foreground, 6 * scale, opacity=0.25), ElementKind.EXPECTED,
                             tooltip=tooltip))
    marker = Marker(center, "star", 20 * scale, Stroke(theme.foreground, 1.6 * scale), None,
                    ElementKind.EXPECTED, ElementKind.EXPECTED, tooltip)
    return lines, marker


def measured_marks(chart: Chart, measured: list[tuple[str, Point]], theme) -> list[Marker]:
    scale = chart.page.lines
    out = []
    for source, p in measured:
        doubtful = bool(p.suspect or p.contended)  # grey: a cross when suspect, ▽ when contended
        symbol = ("cross" if p.suspect else "triangle-down" if p.contended
                  else SUITE_SHAPES.get(p.suite, "circle"))
        out.append(Marker((chart.x_px(p.intensity), chart.y_px(p.flops_per_s)), symbol, 11 * scale,
                          Stroke(theme.suspect if doubtful else theme.foreground, 1.0 * scale),
                          theme.suspect if doubtful else theme.measured, ElementKind.MEASURED,
                          f"{p.suite}/{p.kernel}",
                          measured_tooltip(p, source)))
    return out


def measured_ceilings(chart: Chart, shot: Snapshot, theme) -> list[tuple[Line, Text]]:
    """Roofs at the best trusted measured bandwidth and FLOP/s of each results file (when
    the session draws them), each with its label: "measured triad 11.0 GB/s"; a measured
    cache level adds its own bandwidth roof ("L2 measured 59.9 GB/s")."""
    if not shot.session.measured_roofs:
        return []
    files = shot.results
    out = []
    for path, results in files:
        bandwidth, flops = results.best_bandwidth(), results.best_flops()
        if bandwidth is None or not flops:
            continue
        named = {f"measured {c.dtype}": c for c in flops.values()}
        compute = sorted((Roof(label, c.value) for label, c in named.items()), key=lambda r: -r.value)
        caches = {cache_label(level): c for level, c in results.cache_bandwidths().items()}
        ceilings = Ceilings(tuple(compute), (Roof("measured bandwidth", bandwidth.value),
                                             *(Roof(label, c.value) for label, c in caches.items())))
        unit = chart.page.lines
        stroke = Stroke(theme.measured, 2.0 * unit, (6 * unit, 3 * unit, 1.5 * unit, 3 * unit))
        prefix = f"{_stem(path)}: " if len(files) > 1 else ""
        for segment in ceilings.segments(*chart.x_range):
            roof = segment.roof
            if segment.kind == COMPUTE:
                c = named[roof.label]
                words = f"measured {c.dtype} {c.kernel} {format_si(c.value, rate_unit(c.dtype))}"
            elif roof.label in caches:  # a cache level's own roof
                words = f"{roof.label} measured {format_si(roof.value, 'B/s')}"
            else:
                words = f"measured {bandwidth.kernel} {format_si(bandwidth.value, 'B/s')}"
            ends = ((chart.x_px(segment.x[0]), chart.y_px(segment.y[0])),
                    (chart.x_px(segment.x[1]), chart.y_px(segment.y[1])))
            tooltip = f"{words}: best trusted median rate in {path}"
            line = Line(ends, stroke, ElementKind.MEASURED_ROOF, tooltip=tooltip)
            out.append((line, Text(prefix + words, ends[0], chart.page.text, theme.measured,
                                   ElementKind.MEASURED,
                                   tooltip=tooltip)))
    return out


def _stem(path: str) -> str:
    name = str(path).replace("\\", "/").rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[0]
