"""The roofs of every shown device: draggable lines, their labels and ridge markers.

Items are kept by key and updated in place, so a drag in progress survives the redraws
its own what-if causes.
"""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from explorer.chart import palette
from explorer.core.hardware import Hardware
from explorer.core.roofline import COMPUTE, Ceilings, RoofSegment
from explorer.core.units import format_si, rate_unit
from explorer.document import RoofRef
from explorer.ui.chart import coords
from explorer.ui.chart.items import DraggableRoof

LABEL_STAGGER_BANDWIDTH = 4.0  # a label on a line close to a labelled one starts 4× further along
LABEL_SLOT_DECADES = 1.5  # a crowded compute label moves this far left (in decades of intensity)


RoofKey = RoofRef  # a drawn roof is keyed by what selecting it refers to


def roof_text(hw: Hardware, segment: RoofSegment, multi: bool) -> str:
    """``bf16 matrix 989 TFLOP/s``; with several devices prefixed by the device id (the
    full name is in the tooltip and the card)."""
    roof = segment.roof
    if segment.kind == COMPUTE:
        value = format_si(roof.value, rate_unit(roof.label.split()[0]))
    else:
        value = format_si(roof.value, "B/s")
    prefix = f"{hw.id}: " if multi else ""
    mark = " (what-if)" if roof.what_if else (" (derived)" if roof.derived else "")
    return f"{prefix}{roof.label} {value}{mark}"


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
        self.originals: dict[RoofKey, pg.PlotCurveItem] = {}  # datasheet roofs under what-ifs
        self._x_range = (0.01, 1e4)
        self.theme = palette.THEMES["light"]
        self.scale = 1.0  # font and pen scale (presentation uses more than 1)
        self.pen_scale = 1.0  # extra width for cosmetic pens on a high-resolution export
        self.annotations = True  # roof and ridge labels (hidden for a bare export)

    def update(self, devices: list[tuple[Hardware, Ceilings, bool]], x_range: tuple[float, float],
               originals: dict[str, tuple[Ceilings, set[str]]] | None = None) -> None:
        """``devices``: (device, the ceilings to draw, whether it has what-ifs) in display order;
        the first is the primary device, whose ridge is labelled (the others' in tooltips).
        ``originals``: per device with what-ifs, its datasheet ceilings and the labels of the
        roofs that moved; those are drawn faintly where they were."""
        self._x_range = x_range
        self._draw_originals(originals or {}, x_range)
        multi = len(devices) > 1
        wanted: set[RoofKey] = set()
        # Compute labels placed so far: (slot along the line, lowest pixel, highest pixel).
        self._placed: list[tuple[int, float, float]] = []
        self._bandwidth_labels: list[float] = []  # values of the bandwidth roofs labelled so far
        self._index = {hw.id: i for i, (hw, _, _) in enumerate(devices)}
        order = sorted(range(len(devices)), key=lambda i: -float(devices[i][1].compute_values.max()))
        devices = [devices[i] for i in order]
        for rank, (hw, ceilings, what_if) in enumerate(devices):
            index = order[rank]
            style = palette.device_style(index, multi)
            for segment in ceilings.segments(*x_range):
                key = RoofKey(hw.id, segment.kind, segment.roof.label)
                wanted.add(key)
                self._draw_roof(key, hw, segment, style, multi, top=segment.roof is ceilings.compute[0],
                                index=index)
            self._draw_ridge(hw, ceilings, style, multi, what_if, labelled=index == 0)
        for key in set(self.roofs) - wanted:
            self.plot.removeItem(self.roofs.pop(key))
            self.plot.removeItem(self.labels.pop(key))
        shown = {hw.id for hw, _, _ in devices}
        for ident in set(self.ridges) - shown:
            for item in self.ridges.pop(ident):
                self.plot.removeItem(item)
        for label in (*self.labels.values(), *(text for _, text in self.ridges.values())):
            label.setVisible(self.annotations)

    def _draw_roof(self, key: RoofKey, hw: Hardware, segment: RoofSegment, style, multi: bool,
                   top: bool, index: int) -> None:
        x, y = coords.to_view(segment.x), coords.to_view(segment.y)
        compute = segment.kind == COMPUTE
        theme = self.theme
        colour = theme.devices[index % len(theme.devices)] if multi else (
            (theme.compute if top else theme.vector) if compute else theme.bandwidth)
        if multi:  # each device its own line style; derived values say so in their labels
            dash = getattr(QtCore.Qt.PenStyle, style.dash)
        else:
            dash = QtCore.Qt.PenStyle.DashLine if segment.roof.derived else QtCore.Qt.PenStyle.SolidLine
        pen = pg.mkPen(colour, width=2.5 * self.scale * self.pen_scale * theme.pen_factor, style=dash)
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
        tooltip = roof_tooltip(hw, key)
        if item.toolTip() != tooltip:
            item.setToolTip(tooltip)
        label = self.labels[key]
        _set_text(label, roof_text(hw, segment, multi), colour, 10 * self.scale)
        if compute:
            # Right-aligned at the line's end, above it; below it instead when the label
            # above would overlap the one placed just before (roofs close in value).
            slot, above = self._label_slot(float(y[1]), float(x[1]) - float(x[0]))
            label.setAnchor((1, 1) if above else (1, 0))
            label.setPos(x[1] - slot * LABEL_SLOT_DECADES, y[1])
        else:
            # A bandwidth label sits near the start of its line. When lines nearly coincide
            # (other devices' labels within a factor 2), it starts a factor further along
            # and every second one hangs below its line. A bandwidth roof has slope 1 in
            # view coordinates: the label follows it.
            value = segment.roof.value
            close = sum(abs(math.log10(value / other)) < 0.3 for other in self._bandwidth_labels)
            self._bandwidth_labels.append(value)
            lx = min(segment.x[0] * 3 * LABEL_STAGGER_BANDWIDTH**close, segment.x[1] / 10)
            below = close % 2 == 1
            label.setAnchor((0, 0) if below else (0, 1))
            label.setPos(*coords.view_point(lx, lx * segment.roof.value * (1 / 1.15 if below else 1.15)))

    def _draw_originals(self, originals: dict[str, tuple[Ceilings, set[str]]], x_range) -> None:
        wanted = set()
        for ident, (ceilings, moved) in originals.items():
            for segment in ceilings.segments(*x_range):
                if segment.roof.label not in moved:
                    continue
                key = RoofKey(ident, segment.kind, segment.roof.label)
                wanted.add(key)
                item = self.originals.get(key)
                if item is None:
                    item = pg.PlotCurveItem()
                    item.setZValue(4)
                    self.plot.addItem(item)
                    self.originals[key] = item
                pen = pg.mkPen(palette.ORIGINAL_ROOF, width=1.5 * self.pen_scale,
                               style=QtCore.Qt.PenStyle.DashLine)
                item.setData(coords.to_view(segment.x), coords.to_view(segment.y), pen=pen)
                item.setToolTip(f"datasheet value of {segment.roof.label} (before the what-if)")
        for key in set(self.originals) - wanted:
            self.plot.removeItem(self.originals.pop(key))

    def _label_slot(self, y_view: float, length: float) -> tuple[int, bool]:
        """Where a compute label goes so it overlaps none placed before: above its line at
        the right end, else below it, else the same one slot further left along the line."""
        pixel = self.plot.getViewBox().viewPixelSize()[1]
        y_px = y_view / pixel if pixel else 0.0
        line = 16 * self.scale
        slots = max(1, int(length / LABEL_SLOT_DECADES))
        for slot in range(slots):
            for above in (True, False):
                low, high = (y_px, y_px + line) if above else (y_px - line, y_px)
                if all(s != slot or high <= lo or low >= hi for s, lo, hi in self._placed):
                    self._placed.append((slot, low, high))
                    return slot, above
        return 0, True

    @staticmethod
    def _is_main(hw: Hardware, key: RoofKey) -> bool:
        return key.kind != COMPUTE and hw.main_memory.name == key.label

    def _draw_ridge(self, hw: Hardware, ceilings: Ceilings, style, multi: bool, what_if: bool,
                    labelled: bool) -> None:
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
        colour = self.theme.devices[self._index[hw.id] % 4] if multi else self.theme.foreground
        marker.setData([x], [y], pen=pg.mkPen(colour, width=1.5 * self.pen_scale),
                       brush=pg.mkBrush(self.theme.background), size=11 * self.scale * self.pen_scale)
        badge = "  what-if" if what_if else ""
        description = f"ridge {ridge:.0f} FLOP/B{badge}"
        marker.setToolTip(f"{hw.name}: {description} (peak {top.label} / main-memory bandwidth)")
        _set_text(text, description if labelled else "", colour, 9 * self.scale)
        # Above and left of the ridge: above a roof no point can be. Near the left edge, or
        # where the top roof's own label reaches back past the ridge (a narrow chart):
        # below and right of it instead.
        top_label = self.labels.get(RoofKey(hw.id, COMPUTE, top.label))
        if self._fits_left_of(ridge / 1.1, text) and not self._reaches_left_of(top_label, ridge):
            text.setAnchor((1, 1))
            text.setPos(*coords.view_point(ridge / 1.1, top.value * 1.08))
        else:
            text.setAnchor((0, 0))
            text.setPos(*coords.view_point(ridge * 1.1, top.value * 0.92))

    def _decades(self, pixels: float) -> float | None:
        """Decades of intensity that ``pixels`` span across the plot (None before layout)."""
        width = self.plot.getViewBox().width()
        low, high = self._x_range
        return pixels / width * math.log10(high / low) if width > 0 else None

    def _fits_left_of(self, x: float, text: pg.TextItem) -> bool:
        span = self._decades(text.boundingRect().width())
        return span is None or span < math.log10(x / self._x_range[0])

    def _reaches_left_of(self, label: pg.TextItem | None, x: float) -> bool:
        """Whether a right-aligned roof label extends left of intensity ``x``."""
        span = None if label is None else self._decades(label.boundingRect().width())
        return span is not None and label.pos().x() - span < math.log10(x)

    def dragging(self) -> DraggableRoof | None:
        return next((item for item in self.roofs.values() if item.dragging), None)


def _set_text(item: pg.TextItem, text: str, colour, points: float) -> None:
    """Set a label's text, colour and size only when they change: re-laying out text is
    the costliest part of a redraw during a drag."""
    wanted = (text, str(colour), points)
    if getattr(item, "_shown", None) != wanted:
        item.setText(text, color=colour)
        item.setFont(_font(points))
        item._shown = wanted


def _font(points: float) -> QtGui.QFont:
    font = QtGui.QFont()
    font.setPointSizeF(points)
    return font
