"""The roofline chart: every shown device's roofs, the workload, measurements; drags.

Drags are gestures on AppState: a roof drag is a what-if on that device's bandwidth or
peak, a drag of the whole-step star moves along its batch track and sets the batch.
State updates during a drag are rate-limited; Esc or a right click cancels.
"""

from __future__ import annotations

import math
import textwrap
from html import escape

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from explorer.chart import palette
from explorer.core import drags
from explorer.core.report import step_words
from explorer.core.roofline import COMPUTE, Ceilings, Roof
from explorer.core.units import format_si, rate_unit
from explorer.state import AppState, OpRef
from explorer.ui.chart import coords
from explorer.ui.chart.axes import SiLogAxis
from explorer.ui.chart.items import DraggableRoof, TrackedPoint
from explorer.ui.chart.point_layer import PointLayer
from explorer.ui.chart.roof_layer import RoofKey, RoofLayer

X_LABEL = "Arithmetic intensity (FLOP/byte)"
Y_LABEL = "Performance (FLOP/s)"
DRAG_INTERVAL_MS = 30  # at most ~33 recomputations a second while dragging


class RooflinePlot(pg.PlotWidget):
    def __init__(self, state: AppState, parent=None) -> None:
        axes = {"bottom": SiLogAxis("bottom"), "left": SiLogAxis("left")}
        super().__init__(parent=parent, axisItems=axes, background="w")
        self.state = state
        self.setLogMode(x=True, y=True)
        plot = self.getPlotItem()
        plot.showGrid(x=True, y=True, alpha=0.15)
        plot.setLabel("bottom", X_LABEL)
        plot.setLabel("left", Y_LABEL)
        plot.setMenuEnabled(False)
        # Bottom right: below the roofs, where a roofline chart has no content.
        self.legend = plot.addLegend(offset=(-10, -10), labelTextSize="10pt", pen=pg.mkPen("#bbbbbb"))
        self.theme = palette.THEMES["light"]
        self.roofs = RoofLayer(plot, self._wire_roof)
        self.points = PointLayer(plot, self.state.select_op)
        self._measured_roofs: list[pg.GraphicsObject] = []
        self._star_sample = pg.ScatterPlotItem(symbol="star", size=15, pen=pg.mkPen("k"),
                                               brush=pg.mkBrush(palette.OKABE_ITO["yellow"]))
        self.legend.addItem(self._star_sample, "whole step")
        self._wire_star(self.points.star)
        self._style_frame()
        self._x_range = (0.01, 1e4)
        self._pending = None  # the latest drag update, applied by the timer
        self._timer = QtCore.QTimer(self, singleShot=True, interval=DRAG_INTERVAL_MS)
        self._timer.timeout.connect(self._apply_pending)
        self._drag_base = None
        self._fit_key = None
        self.title_override: str | None = None  # an export's own title
        self.subtitle: str | None = None  # an export's line under the title
        self.measured_suites: set[str] | None = None  # None: every measured suite is drawn
        for signal in (state.sig_hardware_changed, state.sig_workload_changed,
                       state.sig_precisions_changed):
            signal.connect(self.redraw)
        state.sig_results_changed.connect(self._redraw_measured)
        state.sig_live_changed.connect(self._redraw_measured)
        state.sig_selection_changed.connect(
            lambda selection: self.points.select(selection.name if isinstance(selection, OpRef) else None))
        self.redraw(fit=True)

    # -- drawing ---------------------------------------------------------------------------------
    def ceilings(self) -> list:
        """(device, ceilings drawn, has what-ifs) for every shown device, primary first."""
        session = self.state.session
        out = []
        for ident in session.hardware:
            hw = self.state.device(ident)
            precisions = session.precisions
            if not precisions:
                roofs = self.state.analysis(ident).roofs
                precisions = (roofs.matrix.precision, roofs.vector.precision)
            ceilings = Ceilings.from_hardware(hw, precisions)
            if not ceilings.compute:  # none of the chosen precisions on this device
                ceilings = Ceilings.from_hardware(hw, ("fp32",))
            out.append((hw, ceilings, hw != self.state.catalog[ident]))  # what-if: moved roofs
        return out

    def redraw(self, fit: bool | None = None) -> None:
        """Bring every item up to date with the state. The view is refitted when what is
        shown changes (devices, model, phase, precision), not after a drag or a batch change."""
        session = self.state.session
        devices = self.ceilings()
        analysis, sweep = self.state.analysis(), self.state.sweep()
        self.points.show_ops(analysis, sweep, session.selected_op)
        key = (session.hardware, session.model, session.params.phase, session.params.dtype,
               session.precisions)
        if fit is None:
            fit = key != self._fit_key and not self.state.in_gesture
        self._fit_key = key
        if fit:  # before the roofs: label placement needs the final pixel scale
            self._x_range = self._fit_x(devices)
            self.fit_view(devices)
        originals = {}
        for hw, ceilings, what_if in devices:
            if what_if:  # the datasheet values of the moved roofs, drawn faintly beneath
                precisions = tuple({r.label.split()[0] for r in ceilings.compute})
                original = Ceilings.from_hardware(self.state.catalog[hw.id], precisions)
                current = {r.label: r.value for r in (*ceilings.compute, *ceilings.bandwidth)}
                moved = {r.label for r in (*original.compute, *original.bandwidth)
                         if current.get(r.label) != r.value}
                originals[hw.id] = (original, moved)
        self.roofs.update(devices, self._x_range, originals)
        self._redraw_measured()
        p = analysis.params
        text = self.title_override or f"{analysis.model.name}, {step_words(analysis.model, p)}, {p.dtype}"
        title = f"<span style='font-size:{13 * self.roofs.scale:.0f}pt'>{escape(text)}</span>"
        if self.subtitle:
            title += self._subtitle_html(self.subtitle)
        if title != getattr(self, "_title", None):
            plot = self.getPlotItem()
            plot.setTitle(title, color=self.theme.foreground)
            # pyqtgraph fixes the title row at 30 px: fit it to the text (scaled, two lines).
            height = math.ceil(plot.titleLabel.item.boundingRect().height()) + 2
            plot.titleLabel.setMaximumHeight(height)
            plot.layout.setRowFixedHeight(0, height)
            self._title = title

    def _subtitle_html(self, text: str) -> str:
        """``text`` under the title, wrapped to the chart's width (a title label does not
        wrap by itself)."""
        points = 10 * self.roofs.scale
        width = QtGui.QFontMetricsF(_font(points)).averageCharWidth()
        columns = max(40, int(self.width() * 0.85 / max(width, 1.0)))
        lines = "<br>".join(escape(line) for line in textwrap.wrap(text, columns))
        return f"<br><span style='font-size:{points:.0f}pt'>{lines}</span>"

    def _fit_x(self, devices) -> tuple[float, float]:
        analysis = self.state.analysis()
        drawn = analysis.flops > 0
        intensity = np.asarray(analysis.intensity[drawn], dtype=float)
        ridge = max(float(c.ridges().max()) for _, c, _ in devices)
        low = min(float(intensity.min()) if intensity.size else 1.0, 1.0) / 3
        high = max(float(intensity.max()) * 3 if intensity.size else 1.0, ridge * 10)
        return _decade(low, math.floor), _decade(high, math.ceil)

    def fit_view(self, devices=None) -> None:
        devices = devices or self.ceilings()
        top = max(float(c.compute_values.max()) for _, c, _ in devices)
        _, ys = self.points.data_extent()
        low_y = min(10 ** float(np.min(ys)) / 3 if ys.size else top, top / 1e4)
        view = self.getPlotItem().getViewBox()
        view.setRange(xRange=tuple(math.log10(v) for v in self._x_range),
                      yRange=(math.log10(_decade(low_y, math.floor)), math.log10(top * 3)), padding=0)

    def _redraw_measured(self) -> None:
        sources = [(path, list(results.points)) for path, results in self.state.results()]
        if self.state.live_points:
            sources.append(("the run in progress", self.state.live_points))
        if self.measured_suites is not None:
            sources = [(s, [p for p in points if p.suite in self.measured_suites]) for s, points in sources]
        self.points.show_measured(sources)
        for item in self._measured_roofs:
            self.getPlotItem().removeItem(item)
        self._measured_roofs.clear()
        if self.state.session.measured_roofs:
            for path, results in self.state.results():
                self._draw_measured_roofs(path, results)

    def _draw_measured_roofs(self, path: str, results) -> None:
        bandwidth = results.best_bandwidth()
        flops = results.best_flops()
        if bandwidth is None or not flops:
            return
        compute = tuple(Roof(f"measured {d}", c.value, True) for d, c in flops.items())
        ceilings = Ceilings(compute=tuple(sorted(compute, key=lambda r: -r.value)),
                            bandwidth=(Roof("measured bandwidth", bandwidth.value, True),))
        plot = self.getPlotItem()
        for segment in ceilings.segments(*self._x_range):
            pen = pg.mkPen(palette.MEASURED, width=2, style=QtCore.Qt.PenStyle.DashDotLine)
            curve = pg.PlotCurveItem(coords.to_view(segment.x), coords.to_view(segment.y), pen=pen)
            unit = rate_unit(segment.roof.label.split()[-1]) if segment.kind == COMPUTE else "B/s"
            curve.setToolTip(f"{segment.roof.label}: {format_si(segment.roof.value, unit)}\n"
                             f"best trusted median rate in {path}")
            plot.addItem(curve)
            self._measured_roofs.append(curve)

    # -- appearance ------------------------------------------------------------------------------
    def set_theme(self, name: str) -> None:
        """``light``, ``dark`` or ``contrast`` (for projectors)."""
        self.theme = palette.THEMES[name]
        self.roofs.theme = self.points.theme = self.theme
        self._style_frame()
        self._title = None
        self.redraw(fit=False)

    def set_scale(self, factor: float) -> None:
        """Bigger text, lines and points (presentation mode), redrawn at once."""
        self.roofs.scale = self.points.scale = factor
        self._style_frame()
        self._title = None
        self.redraw(fit=True)

    def _style_frame(self) -> None:
        theme, scale = self.theme, self.roofs.scale
        self.setBackground(theme.background)
        plot = self.getPlotItem()
        for name in ("bottom", "left"):
            axis = plot.getAxis(name)
            axis.setTextPen(theme.foreground)
            axis.setPen(pg.mkPen(theme.axis, width=theme.pen_factor))
            axis.label.setFont(_font(11 * scale))
            axis.setTickFont(_font(10 * scale))
            axis.setLabel(axis.labelText, color=theme.foreground)
        self.legend.setLabelTextColor(theme.foreground)
        self.legend.setLabelTextSize(f"{10 * scale:.0f}pt")
        for _, label in self.legend.items:  # the new colour and size show on the next setText
            label.setText(label.text)
        self.legend.setBrush(pg.mkBrush(*theme.legend_fill))
        self._star_sample.setPen(pg.mkPen(theme.foreground))

    # -- export ----------------------------------------------------------------------------------
    def set_pen_scale(self, factor: float) -> None:
        """Widen cosmetic pens (fixed in device pixels) for a high-resolution export."""
        self.roofs.pen_scale = self.points.pen_scale = factor
        self.redraw(fit=False)

    def prepare_export(self, options) -> None:
        """Lay the chart out for an export (called after it is resized)."""
        self.legend.setVisible(options.legend)
        self.title_override = options.title
        self.subtitle = options.subtitle
        self.roofs.annotations = options.annotations
        if options.theme != self.theme.name:
            self.set_theme(options.theme)
        self._title = None
        self.redraw(fit=True)

    # -- roof drags ------------------------------------------------------------------------------
    def _wire_roof(self, item: DraggableRoof) -> None:
        item.sigDragStarted.connect(self._roof_drag_started)
        item.sigDragged.connect(self._roof_dragged)
        item.sigDragFinished.connect(self._roof_drag_finished)
        item.sigDragCancelled.connect(lambda _item: self._cancel())
        item.sigClicked.connect(lambda it: self.state.select(it.key))

    def _roof_drag_started(self, item: DraggableRoof) -> None:
        key: RoofKey = item.key
        what = "bandwidth" if key.kind != COMPUTE else f"{key.label} peak"
        self.state.begin_gesture(f"Drag the {what} of {self.state.catalog[key.device].name}")
        self._drag_base = drags.drag_start(self.state.session.what_if(key.device), key.kind,
                                           self.state.device(key.device), self.state.catalog[key.device])

    def _what_if_for(self, key: RoofKey, offset: float):
        return drags.dragged_roof(self._drag_base, key.kind, key.label, offset)

    def _roof_dragged(self, item: DraggableRoof, offset: float) -> None:
        self._pending = (item.key.device, self._what_if_for(item.key, offset))
        if not self._timer.isActive():
            self._timer.start()

    def _roof_drag_finished(self, item: DraggableRoof, offset: float) -> None:
        self._timer.stop()
        self._pending = (item.key.device, self._what_if_for(item.key, offset))
        self._apply_pending()
        self.state.end_gesture()
        self._drag_base = None

    def _apply_pending(self) -> None:
        if self._pending is None:
            return
        pending, self._pending = self._pending, None
        if pending[0] == "batch":
            self.state.set_params(batch=pending[1])
        else:
            self.state.set_what_if(*pending)

    # -- the whole-step point -------------------------------------------------------------------
    def _wire_star(self, star: TrackedPoint) -> None:
        star.sigDragStarted.connect(lambda _s: self.state.begin_gesture("Drag the batch"))
        star.sigDragged.connect(self._star_dragged)
        star.sigDragFinished.connect(self._star_drag_finished)
        star.sigDragCancelled.connect(lambda _s: self._cancel())

    def batch_at(self, x_view: float) -> int:
        """The batch for the star dragged to ``x_view`` (log10 FLOP/byte)."""
        return drags.batch_at(self.state.sweep(), x_view, self.state.params.batch)

    def _star_dragged(self, _star, x_view: float) -> None:
        self._pending = ("batch", self.batch_at(x_view))
        if not self._timer.isActive():
            self._timer.start()

    def _star_drag_finished(self, _star) -> None:
        self._timer.stop()
        self._apply_pending()
        self.state.end_gesture()

    # -- cancel ----------------------------------------------------------------------------------
    def _cancel(self) -> None:
        self._timer.stop()
        self._pending = None
        self._drag_base = None
        self.state.cancel_gesture()

    def cancel_drag(self) -> bool:
        """Cancel a drag in progress (Esc); False when there is none."""
        if not self.state.in_gesture:
            return False
        item = self.roofs.dragging()
        if item is not None:
            item.cancel_drag()
        elif self.points.star.moving:
            self.points.star.cancel_drag()
        else:
            self._cancel()
        return True

    def keyPressEvent(self, ev: QtGui.QKeyEvent) -> None:
        if ev.key() == QtCore.Qt.Key.Key_Escape and self.cancel_drag():
            ev.accept()
            return
        super().keyPressEvent(ev)


def _decade(value: float, rounding) -> float:
    return 10.0 ** rounding(math.log10(value))


def _font(points: float) -> QtGui.QFont:
    font = QtGui.QFont()
    font.setPointSizeF(points)
    return font
