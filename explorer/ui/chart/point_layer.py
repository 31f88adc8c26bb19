"""Points on the chart: the workload's ops (hollow), the whole step on its batch track
(draggable), the selected op, and measured kernels (filled, one shape per suite)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore

from explorer.chart import palette
from explorer.core.analysis import Analysis, BatchSweep
from explorer.core.units import format_number, format_si, format_time
from explorer.kernels.results import Point
from explorer.ui.chart import coords
from explorer.ui.chart.items import TrackedPoint


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

    def tooltip(self) -> str:
        repeat = f" (×{self.count} layers)" if self.count > 1 else ""
        return "\n".join([
            f"{self.name}{repeat}  [{self.role}]",
            f"FLOPs: {format_si(self.flops, 'FLOP')}   bytes: {format_si(self.bytes, 'B')}",
            f"intensity: {format_number(self.intensity)} FLOP/byte",
            f"attainable: {format_si(self.performance, 'FLOP/s')} ({self.bound}-bound)",
            f"predicted time: {format_time(self.time_s)} each, {self.share:.1%} of the step",
        ])


def op_infos(analysis: Analysis) -> list[OpInfo]:
    """Every op that does arithmetic (a lookup has no place on a log axis)."""
    share, memory_bound = analysis.time_share, analysis.memory_bound
    out = []
    for i, o in enumerate(analysis.ops):
        if analysis.flops[i] <= 0:
            continue
        out.append(OpInfo(o.name, o.role, o.count, int(analysis.flops[i]), int(analysis.bytes[i]),
                          float(analysis.intensity[i]), float(analysis.performance[i]),
                          float(analysis.time_s[i]), float(share[i]),
                          "memory" if memory_bound[i] else "compute"))
    return out


def measured_tooltip(p: Point, source: str) -> str:
    knob = " ".join(f"{k}={v}" for k, v in p.param.items())
    lines = [f"measured {p.suite}/{p.kernel} {p.dtype} {knob}".rstrip(),
             f"median {format_time(p.time_median_s)} (p20 {format_time(p.time_p20_s)}, "
             f"p80 {format_time(p.time_p80_s)})",
             f"{format_si(p.flops_per_s, 'FLOP/s')}, {format_si(p.bytes_per_s, 'B/s')}, "
             f"{format_number(p.intensity)} FLOP/byte", f"from {source}"]
    if p.suspect:
        lines.append(f"SUSPECT: {p.suspect}")
    return "\n".join(lines)


class PointLayer:
    def __init__(self, plot: pg.PlotItem, on_op_clicked) -> None:
        self.plot = plot
        self._on_op_clicked = on_op_clicked
        self.op_items: list[pg.ScatterPlotItem] = []
        self.measured_items: list[pg.ScatterPlotItem] = []
        self.selection = pg.ScatterPlotItem(symbol="o", size=30, pen=pg.mkPen(palette.SELECTED, width=4),
                                            brush=pg.mkBrush(None))
        self.selection.setZValue(9)
        plot.addItem(self.selection)
        self.track = pg.PlotCurveItem(pen=pg.mkPen("#888888", width=1.5, style=QtCore.Qt.PenStyle.DotLine))
        self.track.setZValue(3)
        plot.addItem(self.track)
        self.star = TrackedPoint()
        plot.addItem(self.star)
        self.theme = palette.THEMES["light"]
        self.scale = 1.0
        self.pen_scale = 1.0  # extra width for cosmetic pens on a high-resolution export
        self._infos: dict[str, OpInfo] = {}
        self._pens = (1.0, 1.0, "light")

    # -- workload ---------------------------------------------------------------------------------
    def show_ops(self, analysis: Analysis, sweep: BatchSweep, selected: str | None) -> None:
        infos = op_infos(analysis)
        self._infos = {info.name: info for info in infos}
        by_group: dict[str, list[OpInfo]] = {}
        for info in infos:
            by_group.setdefault(palette.ROLE_GROUP.get(info.role, "elementwise"), []).append(info)
        # Same groups as shown (a drag or a batch change): move the points, keep the items
        # and their legend entries; otherwise build them anew.
        pens = (self.scale, self.pen_scale, self.theme.name)
        if [item.name() for item in self.op_items] != list(by_group) or pens != self._pens:
            self._pens = pens
            for item in self.op_items:
                self.plot.removeItem(item)
            self.op_items = [self._group_item(group) for group in by_group]
        for item, members in zip(self.op_items, by_group.values(), strict=True):
            item.setData(x=coords.to_view([m.intensity for m in members]),
                         y=coords.to_view([m.performance for m in members]), data=members,
                         size=[(8 + 22 * math.sqrt(m.share)) * self.scale * self.pen_scale for m in members])
        t = analysis.totals
        self.star.size_px = 16 * self.scale * self.pen_scale
        self.selection.setSize(30 * self.scale * self.pen_scale)
        self.star.set_position(*coords.view_point(t.intensity, t.flops / t.time_s))
        self.star.setToolTip(
            f"whole step, batch {analysis.params.batch}: {format_number(t.intensity)} FLOP/byte, "
            f"{format_time(t.time_s)}, {t.tokens_per_s:,.0f} {t.item_unit}/s\n"
            "drag sideways to change the batch (along the dotted track)")
        if sweep.batch.size > 1:
            self.track.setData(coords.to_view(sweep.intensity), coords.to_view(sweep.flops / sweep.time_s))
        else:
            self.track.setData([], [])
        self.select(selected)

    def _group_item(self, group: str) -> pg.ScatterPlotItem:
        colour = palette.GROUP_COLOURS[group]
        width = 2 * self.scale * self.pen_scale * self.theme.pen_factor
        item = pg.ScatterPlotItem(
            name=group, symbol="o", pen=pg.mkPen(colour, width=width),
            brush=pg.mkBrush(*self.theme.point_fill), hoverable=True,
            hoverPen=pg.mkPen(colour, width=1.75 * width), tip=lambda x, y, data: data.tooltip())
        item.setZValue(8)
        item.sigClicked.connect(self._clicked)
        self.plot.addItem(item)
        return item

    def _clicked(self, item, points, ev) -> None:
        if len(points):
            self._on_op_clicked(points[0].data().name)

    def select(self, name: str | None) -> None:
        info = self._infos.get(name) if name else None
        if info is None:
            self.selection.setData([], [])
        else:
            self.selection.setData(*[[v] for v in coords.view_point(info.intensity, info.performance)])

    def info(self, name: str) -> OpInfo | None:
        return self._infos.get(name)

    # -- measurements -------------------------------------------------------------------------
    def show_measured(self, sources: list[tuple[str, list[Point]]]) -> None:
        for item in self.measured_items:
            self.plot.removeItem(item)
        self.measured_items.clear()
        by_suite: dict[tuple[str, bool], list[tuple[Point, str]]] = {}
        for source, points in sources:
            for p in points:
                if p.check or p.flops == 0:
                    continue  # a wrong result, or no arithmetic: nothing to place
                by_suite.setdefault((p.suite, bool(p.suspect)), []).append((p, source))
        for (suite, suspect), members in by_suite.items():
            x = coords.to_view([p.intensity for p, _ in members])
            y = coords.to_view([p.flops_per_s for p, _ in members])
            colour = palette.SUSPECT if suspect else palette.MEASURED
            item = pg.ScatterPlotItem(
                x=x, y=y, data=[measured_tooltip(p, s) for p, s in members],
                symbol="x" if suspect else palette.SUITE_SYMBOLS.get(suite, "o"),
                size=11 * self.scale, pen=pg.mkPen(self.theme.foreground if not suspect else colour, width=1),
                brush=pg.mkBrush(colour), hoverable=True, tip=lambda x, y, data: data,
                name=f"measured {suite}" + (" (suspect)" if suspect else ""))
            item.setZValue(7)
            self.plot.addItem(item)
            self.measured_items.append(item)

    def data_extent(self) -> tuple[np.ndarray, np.ndarray]:
        """All plotted x and y values (view coordinates), for fitting the range."""
        xs, ys = [], []
        for item in self.op_items + self.measured_items:
            x, y = item.getData()
            xs.extend(x)
            ys.extend(y)
        pos = self.star.position()
        xs.append(pos.x())
        ys.append(pos.y())
        return np.asarray(xs), np.asarray(ys)
