"""The roofs of every shown device: draggable lines, their labels and ridge markers.

Items are kept by key and updated in place, so a drag in progress survives the redraws
its own what-if causes.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from explorer.core.hardware import Hardware
from explorer.core.roofline import COMPUTE, Ceilings, RoofSegment
from explorer.core.units import format_si, rate_unit
from explorer.ui.chart import coords, palette
from explorer.ui.chart.items import DraggableRoof


@dataclass(frozen=True)
class RoofKey:
    device: str
    kind: str  # "compute" or "bandwidth"
    label: str  # "bf16 matrix", "HBM3"


def roof_text(hw: Hardware, segment: RoofSegment, multi: bool) -> str:
    roof = segment.roof
    if segment.kind == COMPUTE:
        value = format_si(roof.value, rate_unit(roof.label.split()[0]))
    else:
        value = format_si(roof.value, "B/s")
    prefix = f"{hw.name}: " if multi else ""
    return f"{prefix}{roof.label} {value}" + (" (derived)" if roof.derived else "")


def roof_tooltip(hw: Hardware, key: RoofKey) -> str:
    if key.kind == COMPUTE:
        precision, unit = key.label.split()
        peak = hw.peak(precision, unit)
        lines = [f"{hw.name}: {key.label} peak {format_si(peak.flops_per_s, rate_unit(precision))}"]
        provenance = peak.provenance
    else:
        level = next(m for m in hw.memory if m.name == key.label)
        lines = [f"{hw.name}: {level.name} bandwidth {format_si(level.bandwidth_bytes_per_s, 'B/s')}"]
        provenance = level.provenance
    if provenance.derived:
        lines.append(f"derived: {provenance.formula}")
    if provenance.note:
        lines.append(provenance.note)
    lines.append(f"source: {provenance.url}")
    lines.append("drag up or down to ask “what if?”; Esc or right-click cancels")
    return "\n".join(lines)


class RoofLayer:
    """Draws ceilings for several devices on one PlotItem."""

    def __init__(self, plot: pg.PlotItem, on_connect) -> None:
        self.plot = plot
        self._connect = on_connect  # called with each new DraggableRoof to wire its signals
        self.roofs: dict[RoofKey, DraggableRoof] = {}
        self.labels: dict[RoofKey, pg.TextItem] = {}
        self.ridges: dict[str, tuple[pg.ScatterPlotItem, pg.TextItem]] = {}
        self.scale = 1.0  # font and pen scale (presentation and export use more than 1)

    def update(self, devices: list[tuple[Hardware, Ceilings, bool]], x_range: tuple[float, float]) -> None:
        """``devices``: (device, the ceilings to draw, whether it has what-ifs) in display order."""
        multi = len(devices) > 1
        wanted: set[RoofKey] = set()
        for index, (hw, ceilings, what_if) in enumerate(devices):
            style = palette.device_style(index, multi)
            for segment in ceilings.segments(*x_range):
                key = RoofKey(hw.id, segment.kind, segment.roof.label)
                wanted.add(key)
                self._draw_roof(key, hw, segment, style, multi, top=segment.roof is ceilings.compute[0])
            self._draw_ridge(hw, ceilings, style, multi, what_if)
        for key in set(self.roofs) - wanted:
            self.plot.removeItem(self.roofs.pop(key))
            self.plot.removeItem(self.labels.pop(key))
        shown = {hw.id for hw, _, _ in devices}
        for ident in set(self.ridges) - shown:
            for item in self.ridges.pop(ident):
                self.plot.removeItem(item)

    def _draw_roof(self, key: RoofKey, hw: Hardware, segment: RoofSegment, style, multi: bool,
                   top: bool) -> None:
        x, y = coords.to_view(segment.x), coords.to_view(segment.y)
        compute = segment.kind == COMPUTE
        colour = style.colour if multi else (
            (palette.ROOF_COMPUTE if top else palette.ROOF_VECTOR) if compute else palette.ROOF_BANDWIDTH)
        dash = QtCore.Qt.PenStyle.DashLine if segment.roof.derived else QtCore.Qt.PenStyle.SolidLine
        pen = pg.mkPen(colour, width=2.5 * self.scale, style=dash)
        pen.setCosmetic(True)
        item = self.roofs.get(key)
        if item is None:
            item = DraggableRoof(key, x, y, pen, movable=key.kind == COMPUTE or self._is_main(hw, key))
            item.setZValue(5)
            self.plot.addItem(item)
            self.roofs[key] = item
            self._connect(item)
            label = pg.TextItem(anchor=(1, 1) if compute else (0, 1), rotateAxis=None if compute else (1, 1))
            self.plot.addItem(label)
            self.labels[key] = label
        else:
            item.pen = pen
            item.hover_pen = QtGui.QPen(pen)
            item.hover_pen.setWidthF(pen.widthF() * 2)
            item.set_segment(x, y)
        item.setToolTip(roof_tooltip(hw, key))
        label = self.labels[key]
        label.setText(roof_text(hw, segment, multi), color=colour)
        label.setFont(_font(10 * self.scale))
        if compute:
            label.setPos(x[1], y[1])
        else:
            # A bandwidth roof has slope 1 in view coordinates: the label follows it.
            lx = segment.x[0] * 3
            label.setPos(*coords.view_point(lx, lx * segment.roof.value * 1.15))

    @staticmethod
    def _is_main(hw: Hardware, key: RoofKey) -> bool:
        return key.kind != COMPUTE and hw.main_memory.name == key.label

    def _draw_ridge(self, hw: Hardware, ceilings: Ceilings, style, multi: bool, what_if: bool) -> None:
        top = ceilings.compute[0]
        ridge = top.value / ceilings.bandwidth[0].value
        x, y = coords.view_point(ridge, top.value)
        marker, text = self.ridges.get(hw.id, (None, None))
        if marker is None:
            marker = pg.ScatterPlotItem(symbol=style.symbol, size=11)
            marker.setZValue(6)
            text = pg.TextItem(anchor=(0, 0))
            self.plot.addItem(marker)
            self.plot.addItem(text)
            self.ridges[hw.id] = (marker, text)
        marker.setData([x], [y], pen=pg.mkPen(style.colour if multi else "k", width=1.5),
                       brush=pg.mkBrush("w"), size=11 * self.scale)
        badge = "  what-if" if what_if else ""
        text.setText(f"ridge {ridge:.0f} FLOP/B{badge}", color=style.colour if multi else "k")
        text.setFont(_font(9 * self.scale))
        text.setPos(*coords.view_point(ridge * 1.1, top.value * 0.92))

    def dragging(self) -> DraggableRoof | None:
        return next((item for item in self.roofs.values() if item.dragging), None)


def _font(points: float) -> QtGui.QFont:
    font = QtGui.QFont()
    font.setPointSizeF(points)
    return font
