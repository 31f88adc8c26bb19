"""Drawing a chart description (``explorer.chart``) with QPainter: PNG, PDF, the clipboard
and the window's labels and key all go through ``paint``, as the SVG writer does in SVG."""

from __future__ import annotations

from dataclasses import replace
from enum import StrEnum
from functools import lru_cache

from PySide6 import QtCore, QtGui

from explorer.chart.elements import LINE_ORDER, MARKER_ORDER, Chart, ElementKind, Line, Marker, Stroke, Text
from explorer.chart.palette import blend
from explorer.chart.svg import shape

FONT = "DejaVu Sans"


@lru_cache(maxsize=512)  # a chart uses a few dozen strokes, the same on every frame of a drag
def _pen(stroke: Stroke) -> QtGui.QPen:
    pen = QtGui.QPen(_colour(stroke.colour, stroke.opacity), stroke.width)
    pen.setCapStyle(QtCore.Qt.PenCapStyle.FlatCap)
    pen.setJoinStyle(QtCore.Qt.PenJoinStyle.RoundJoin)
    if stroke.dash:  # Qt's dash pattern is in units of the pen width
        pen.setDashPattern([max(d / stroke.width, 0.01) for d in stroke.dash])
    return pen


@lru_cache(maxsize=512)
def _colour(name: str, opacity: float) -> QtGui.QColor:
    colour = QtGui.QColor(name)
    colour.setAlphaF(opacity)
    return colour


def draw_line(painter: QtGui.QPainter, line: Line) -> None:
    painter.setPen(_pen(line.stroke))
    painter.setBrush(QtCore.Qt.BrushStyle.NoBrush)
    # across or up: no antialiasing needed (and 10× faster)
    straight = line.kind in (ElementKind.GRID, ElementKind.AXIS)
    if straight:
        painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, False)
    if len(line.points) == 2:  # a roof: drawLine takes a third of drawPolyline's time, same pixels
        painter.drawLine(QtCore.QPointF(*line.points[0]), QtCore.QPointF(*line.points[1]))
    else:
        painter.drawPolyline(QtGui.QPolygonF([QtCore.QPointF(x, y) for x, y in line.points]))
    if straight:
        painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, True)


def draw_marker(painter: QtGui.QPainter, marker: Marker) -> None:
    painter.setPen(_pen(marker.stroke) if marker.stroke else QtCore.Qt.PenStyle.NoPen)
    if marker.fill:
        painter.setBrush(_colour(marker.fill, marker.fill_opacity))
    else:
        painter.setBrush(QtCore.Qt.BrushStyle.NoBrush)
    outline = shape(marker.symbol, marker.center, marker.size)
    if outline is None:
        r = marker.size / 2
        painter.drawEllipse(QtCore.QPointF(*marker.center), r, r)
    else:
        painter.drawPolygon(QtGui.QPolygonF([QtCore.QPointF(x, y) for x, y in outline]))


def _faded(line: Line, background: str) -> Line:
    """A see-through roof (a what-if) as the opaque colour it shows over the background:
    Qt's raster painter takes 25–30 times as long for a see-through wide line, and a
    drag redraws the roof it moves on every move. (Exports to SVG and PDF keep the
    opacity; the two differ only where the roof crosses another line.)"""
    stroke = line.stroke
    opaque = replace(stroke, colour=blend(stroke.colour, background, stroke.opacity), opacity=1.0)
    return replace(line, stroke=opaque)


@lru_cache(maxsize=2)
def _font(bold: bool) -> QtGui.QFont:
    font = QtGui.QFont(FONT)
    font.setPixelSize(100)  # then scaled to the exact size: pixel sizes are whole numbers
    font.setBold(bold)
    return font


def draw_text(painter: QtGui.QPainter, text: Text) -> None:
    font = _font(text.bold)
    painter.save()
    painter.translate(*text.origin)
    if text.angle:
        painter.rotate(text.angle)
    painter.scale(text.size / 100, text.size / 100)
    painter.setFont(font)
    painter.setPen(QtGui.QColor(text.colour))
    factor = 100 / text.size
    painter.drawText(QtCore.QPointF(text.dx * factor, text.baseline * factor), text.text)
    painter.restore()


# What a drag leaves as it is, and the window paints once into cached pixmaps: the "frame"
# (background, grid, axes, ticks) and the "key"; the "content" layer is the rest, painted
# on every move (the title too: it names the batch a star drag changes).
class Layer(StrEnum):
    """What one paint covers: everything, the frame, the key, or the content (the rest)."""

    ALL = "all"
    FRAME = "frame"
    KEY = "key"
    CONTENT = "content"


LAYERS = {
    Layer.FRAME: ((ElementKind.GRID, ElementKind.AXIS), (), (ElementKind.TICK, ElementKind.AXIS)),
    Layer.KEY: ((ElementKind.KEY,), (ElementKind.KEY,), (ElementKind.KEY,)),
}


def _in_layer(layer: Layer, part: int, kind: ElementKind) -> bool:
    """Whether an element of ``kind`` (``part`` 0 lines, 1 markers, 2 texts) is in ``layer``."""
    if layer == Layer.ALL:
        return True
    if layer == Layer.CONTENT:
        return not any(kind in kinds[part] for kinds in LAYERS.values())
    return kind in LAYERS[layer][part]


def layer_of(chart: Chart, layer: Layer) -> Chart:
    """``chart`` with only the elements of ``layer``."""
    return replace(chart, lines=tuple(e for e in chart.lines if _in_layer(layer, 0, e.kind)),
                   markers=tuple(e for e in chart.markers if _in_layer(layer, 1, e.kind)),
                   texts=tuple(e for e in chart.texts if _in_layer(layer, 2, e.kind)))


DATA = (ElementKind.ORIGINAL, ElementKind.TRACK, ElementKind.MEASURED_ROOF, ElementKind.LINK,
        ElementKind.ROOF, ElementKind.RIDGE, ElementKind.MEASURED, ElementKind.OP, ElementKind.SELECTION,
        ElementKind.STEP, ElementKind.EXPECTED, ElementKind.PROFILE, ElementKind.COMPARED, ElementKind.CURVE)


def paint(painter: QtGui.QPainter, chart: Chart, background: bool = True, clip: bool = False,
          emphasis: Line | None = None, layer: Layer = Layer.ALL) -> None:
    """Draw ``chart`` in page coordinates. ``clip``: data (roofs, points) is cut at the plot's
    edges (a zoomed window; an export is fitted and needs none). ``emphasis``: a line drawn
    wider (the roof under the pointer). ``layer``: "all", or one of ``LAYERS`` or
    "content" (the rest)."""
    painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QtGui.QPainter.RenderHint.TextAntialiasing)
    if background and layer in (Layer.ALL, Layer.FRAME):
        page = QtCore.QRectF(0, 0, chart.page.width, chart.page.height)
        painter.fillRect(page, QtGui.QColor(chart.background))
    plot = chart.plot
    area = QtCore.QRectF(plot.left, plot.top, plot.width, plot.height)

    def clipped(kind: str) -> None:
        painter.setClipRect(area) if clip and kind in DATA else painter.setClipping(False)

    for kind in LINE_ORDER:
        if not _in_layer(layer, 0, kind):
            continue
        clipped(kind)
        for line in chart.lines:
            if line.kind == kind:
                if line is emphasis:
                    line = replace(line, stroke=replace(line.stroke, width=line.stroke.width * 2))
                if kind == ElementKind.ROOF and line.stroke.opacity < 1:
                    line = _faded(line, chart.background)
                draw_line(painter, line)
    for kind in MARKER_ORDER:
        if not _in_layer(layer, 1, kind):
            continue
        clipped(kind)
        for marker in chart.markers:
            if marker.kind == kind:
                draw_marker(painter, marker)
    painter.setClipping(False)
    for text in chart.texts:
        if _in_layer(layer, 2, text.kind):
            draw_text(painter, text)
