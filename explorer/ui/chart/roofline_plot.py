"""The roofline plot: log–log axes, one device's roofs, a workload's ops as points.

Data arrive as core objects (an ``Analysis``); every number drawn comes from it.
Positions of text and markers are converted to view coordinates in ``coords``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from explorer.core.analysis import Analysis
from explorer.core.roofline import COMPUTE
from explorer.core.units import format_si, format_time
from explorer.ui.chart import coords, palette
from explorer.ui.chart.axes import SiLogAxis

X_LABEL = "Arithmetic intensity (FLOP/byte)"
Y_LABEL = "Performance (FLOP/s)"


@dataclass(frozen=True)
class PointInfo:
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
            f"intensity: {self.intensity:.3g} FLOP/byte",
            f"attainable: {format_si(self.performance, 'FLOP/s')} ({self.bound}-bound)",
            f"predicted time: {format_time(self.time_s)} each, "
            f"{self.share:.1%} of the step",
        ])


class RooflinePlot(pg.PlotWidget):
    """A roofline chart for one device and one workload."""

    def __init__(self, parent=None) -> None:
        axes = {"bottom": SiLogAxis("bottom"), "left": SiLogAxis("left")}
        super().__init__(parent=parent, axisItems=axes, background="w")
        self.setLogMode(x=True, y=True)
        plot = self.getPlotItem()
        plot.showGrid(x=True, y=True, alpha=0.15)
        plot.setLabel("bottom", X_LABEL)
        plot.setLabel("left", Y_LABEL)
        plot.setMenuEnabled(False)
        for name in ("bottom", "left"):
            axis = plot.getAxis(name)
            axis.setTextPen("k")
            axis.setPen(pg.mkPen("#444444"))
            axis.label.setFont(_font(11))
            axis.setTickFont(_font(10))
        # Bottom right: below the roofs, where a roofline chart has no content.
        self.legend = plot.addLegend(offset=(-10, -10), labelTextColor="k", labelTextSize="10pt",
                                     brush=pg.mkBrush(255, 255, 255, 220), pen=pg.mkPen("#bbbbbb"))
        self._points: list[pg.ScatterPlotItem] = []
        self._info: dict[int, PointInfo] = {}
        self.analysis: Analysis | None = None

    # -- content ------------------------------------------------------------------------------
    def show_analysis(self, analysis: Analysis) -> None:
        """Draw the roofs ``analysis`` ran under and its ops."""
        self.analysis = analysis
        plot = self.getPlotItem()
        plot.clear()
        self.legend.clear()
        self._points.clear()
        x_min, x_max, y_min, y_max = _ranges(analysis)
        self._draw_roofs(analysis, x_min, x_max)
        self._draw_ops(analysis)
        plot.setTitle(
            f"<span style='font-size:13pt'>{analysis.model.name} on {analysis.hardware.name}"
            f"</span>", color="k")
        view = plot.getViewBox()
        view.setRange(xRange=(math.log10(x_min), math.log10(x_max)),
                      yRange=(math.log10(y_min), math.log10(y_max)), padding=0)

    def _draw_roofs(self, analysis: Analysis, x_min: float, x_max: float) -> None:
        plot = self.getPlotItem()
        ceilings = analysis.ceilings()
        for segment in ceilings.segments(x_min, x_max):
            roof = segment.roof
            compute = segment.kind == COMPUTE
            colour = palette.ROOF_COMPUTE if compute else palette.ROOF_BANDWIDTH
            if compute and roof is not ceilings.compute[0]:
                colour = palette.ROOF_VECTOR
            style = QtCore.Qt.PenStyle.DashLine if roof.derived else QtCore.Qt.PenStyle.SolidLine
            unit = "FLOP/s" if compute else "B/s"
            name = f"{roof.label}: {format_si(roof.value, unit)}" + (" (derived)" if roof.derived else "")
            plot.plot(segment.x, segment.y, pen=pg.mkPen(colour, width=2.5, style=style), name=name)
            # A bandwidth roof has slope 1 in view coordinates: align its label with (1, 1).
            label = pg.TextItem(name, color=colour, anchor=(1, 1) if compute else (0, 1),
                                rotateAxis=None if compute else (1, 1))
            label.setFont(_font(10))
            if compute:
                label.setPos(*coords.view_point(segment.x[1], segment.y[1]))
            else:
                x = segment.x[0] * 3
                label.setPos(*coords.view_point(x, x * roof.value * 1.15))
            plot.addItem(label)
        top = ceilings.compute[0]
        ridge = top.value / ceilings.bandwidth[0].value
        marker = pg.ScatterPlotItem(*_view_xy([ridge], [top.value]), symbol="d", size=11,
                                    pen=pg.mkPen("k"), brush=pg.mkBrush("w"))
        plot.addItem(marker)
        text = pg.TextItem(f"ridge {ridge:.0f} FLOP/B", color="k", anchor=(0, 0))
        text.setFont(_font(9))
        text.setPos(*coords.view_point(ridge * 1.1, top.value * 0.92))
        plot.addItem(text)

    def _draw_ops(self, analysis: Analysis) -> None:
        plot = self.getPlotItem()
        share = analysis.time_share
        memory_bound = analysis.memory_bound
        by_group: dict[str, list[int]] = {}
        for i, o in enumerate(analysis.ops):
            if analysis.flops[i] <= 0:
                continue  # lookups do no arithmetic: no place on a log axis
            by_group.setdefault(palette.ROLE_GROUP.get(o.role, "elementwise"), []).append(i)
        for group, indices in by_group.items():
            colour = palette.GROUP_COLOURS[group]
            infos = []
            for i in indices:
                o = analysis.ops[i]
                infos.append(PointInfo(
                    name=o.name, role=o.role, count=o.count, flops=int(analysis.flops[i]),
                    bytes=int(analysis.bytes[i]), intensity=float(analysis.intensity[i]),
                    performance=float(analysis.performance[i]), time_s=float(analysis.time_s[i]),
                    share=float(share[i]), bound="memory" if memory_bound[i] else "compute"))
            x, y = _view_xy([p.intensity for p in infos], [p.performance for p in infos])
            item = pg.ScatterPlotItem(
                x=x, y=y,
                size=[8 + 22 * math.sqrt(p.share) for p in infos], data=infos,
                pen=pg.mkPen(colour, width=2), brush=pg.mkBrush(255, 255, 255, 160),
                symbol="o", hoverable=True, hoverPen=pg.mkPen(colour, width=3.5),
                tip=lambda x, y, data: data.tooltip(), name=group,
            )
            plot.addItem(item)
            self._points.append(item)
        totals = analysis.totals
        x, y = _view_xy([totals.intensity], [totals.flops / totals.time_s])
        step = pg.ScatterPlotItem(
            x=x, y=y, symbol="star", size=15,
            pen=pg.mkPen(palette.STEP_POINT, width=1.5), brush=pg.mkBrush(palette.OKABE_ITO["yellow"]),
            name="whole step", hoverable=True,
            tip=lambda x, y, data: (f"whole step: {totals.intensity:.3g} FLOP/byte, "
                                    f"{format_time(totals.time_s)}"),
        )
        step.setZValue(1)  # on top, smaller than the op rings it summarises
        plot.addItem(step)
        self._points.append(step)

    @property
    def point_items(self) -> list[pg.ScatterPlotItem]:
        return list(self._points)


def _ranges(analysis: Analysis) -> tuple[float, float, float, float]:
    """Axis ranges in data units covering the roofs, the ridge and every point, in decades."""
    ceilings = analysis.ceilings()
    drawn = analysis.flops > 0
    intensity = np.asarray(analysis.intensity[drawn], dtype=float)
    performance = np.asarray(analysis.performance[drawn], dtype=float)
    ridge = float(ceilings.ridges().max())
    top = float(ceilings.compute_values.max())
    x_min = min(float(intensity.min()), 1.0) / 3 if intensity.size else 0.1
    x_max = max(float(intensity.max()) * 3, ridge * 10)
    y_min = min(float(performance.min()) / 3 if performance.size else top, top / 1e4)
    y_max = top * 3
    decade = lambda v, f: 10.0 ** f(math.log10(v))  # noqa: E731
    return decade(x_min, math.floor), decade(x_max, math.ceil), decade(y_min, math.floor), y_max


def _view_xy(x, y):
    """Scatter items are not log-transformed by the plot: place them in view coordinates."""
    return coords.to_view(x), coords.to_view(y)


def _font(points: int) -> QtGui.QFont:
    font = QtGui.QFont()
    font.setPointSize(points)
    return font
