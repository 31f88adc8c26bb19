"""Draggable chart items, following pyqtgraph's drag protocol (see InfiniteLine):
``mouseDragEvent`` with ``isStart``/``isFinish``, a right click during a drag cancels,
signals while moving and on release. Positions are log10 view coordinates.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6 import QtCore, QtGui

HIT_WIDTH_PX = 10  # how close the pointer must be to grab a line


class DraggableRoof(pg.GraphicsObject):
    """A roof segment that can be dragged up or down.

    While dragging, the segment is drawn at its drag-start geometry shifted by the
    vertical offset; geometry updates that arrive meanwhile are kept for after.
    """

    sigDragStarted = QtCore.Signal(object)
    sigDragged = QtCore.Signal(object, float)  # self, vertical offset in decades
    sigDragFinished = QtCore.Signal(object, float)
    sigDragCancelled = QtCore.Signal(object)
    sigClicked = QtCore.Signal(object)

    def __init__(self, key, x, y, pen: QtGui.QPen, movable: bool = True) -> None:
        super().__init__()
        self.key = key
        self.pen = pen
        self.hover_pen = QtGui.QPen(pen)
        self.hover_pen.setWidthF(pen.widthF() * 2)
        self.movable = movable
        self._line = QtCore.QLineF(x[0], y[0], x[1], y[1])
        self._drag_line: QtCore.QLineF | None = None
        self._offset = 0.0
        self._hovered = False
        self.setAcceptHoverEvents(True)
        if movable:
            self.setCursor(QtCore.Qt.CursorShape.SizeVerCursor)

    # -- geometry --------------------------------------------------------------------------------
    def set_segment(self, x, y) -> None:
        self.prepareGeometryChange()
        self._line = QtCore.QLineF(x[0], y[0], x[1], y[1])
        self.update()

    @property
    def dragging(self) -> bool:
        return self._drag_line is not None

    def _drawn_line(self) -> QtCore.QLineF:
        if self._drag_line is None:
            return self._line
        return self._drag_line.translated(0, self._offset)

    def _path(self) -> QtGui.QPainterPath:
        path = QtGui.QPainterPath()
        line = self._drawn_line()
        path.moveTo(line.p1())
        path.lineTo(line.p2())
        return path

    def shape(self) -> QtGui.QPainterPath:
        """A band HIT_WIDTH_PX wide around the line, computed in device pixels because the
        two log axes scale differently."""
        to_device = self.deviceTransform_()
        if to_device is None:
            return self._path()
        inverse, ok = to_device.inverted()
        if not ok:
            return self._path()
        stroker = QtGui.QPainterPathStroker()
        stroker.setWidth(HIT_WIDTH_PX)
        return inverse.map(stroker.createStroke(to_device.map(self._path())))

    def boundingRect(self) -> QtCore.QRectF:
        return self.shape().boundingRect()

    def viewTransformChanged(self) -> None:
        self.prepareGeometryChange()

    def paint(self, painter: QtGui.QPainter, option, widget=None) -> None:
        painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
        pen = self.hover_pen if (self._hovered or self.dragging) else self.pen
        painter.setPen(pen)
        painter.drawLine(self._drawn_line())

    # -- interaction -----------------------------------------------------------------------------
    def hoverEvent(self, ev) -> None:
        hovered = (not ev.isExit()) and self.movable and ev.acceptDrags(QtCore.Qt.MouseButton.LeftButton)
        if not ev.isExit():
            ev.acceptClicks(QtCore.Qt.MouseButton.LeftButton)
        if hovered != self._hovered:
            self._hovered = hovered
            self.update()

    def mouseDragEvent(self, ev) -> None:
        if not self.movable or ev.button() != QtCore.Qt.MouseButton.LeftButton:
            return
        if ev.isStart():
            self._drag_line = QtCore.QLineF(self._line)
            self._offset = 0.0
            self.sigDragStarted.emit(self)
        if self._drag_line is None:  # cancelled earlier in this drag
            return
        ev.accept()
        self.prepareGeometryChange()
        self._offset = ev.pos().y() - ev.buttonDownPos().y()
        self.update()
        if ev.isFinish():
            offset = self._offset
            self._drag_line = None
            self.sigDragFinished.emit(self, offset)
            self.update()
        else:
            self.sigDragged.emit(self, self._offset)

    def mouseClickEvent(self, ev) -> None:
        if self.dragging and ev.button() == QtCore.Qt.MouseButton.RightButton:
            ev.accept()
            self.cancel_drag()
        elif ev.button() == QtCore.Qt.MouseButton.LeftButton:
            ev.accept()
            self.sigClicked.emit(self)

    def cancel_drag(self) -> None:
        if self._drag_line is None:
            return
        self.prepareGeometryChange()
        self._drag_line = None
        self._offset = 0.0
        self.update()
        self.sigDragCancelled.emit(self)


class TrackedPoint(pg.GraphicsObject):
    """A marker dragged sideways along a track; the owner decides where it lands (snapping
    to whole batches) and moves it with ``set_position``."""

    sigDragStarted = QtCore.Signal(object)
    sigDragged = QtCore.Signal(object, float)  # self, pointer x in view coordinates
    sigDragFinished = QtCore.Signal(object)
    sigDragCancelled = QtCore.Signal(object)

    def __init__(self, size_px: float = 16, brush=None, pen=None) -> None:
        super().__init__()
        self.size_px = size_px
        self.brush = pg.mkBrush(brush or "#F0E442")
        self.pen = pg.mkPen(pen or "k", width=1.5)
        self._pos = QtCore.QPointF(0, 0)
        self.moving = False
        self._hovered = False
        self.setAcceptHoverEvents(True)
        self.setCursor(QtCore.Qt.CursorShape.SizeHorCursor)
        self.setZValue(20)

    def set_position(self, x: float, y: float) -> None:
        self.prepareGeometryChange()
        self._pos = QtCore.QPointF(x, y)
        self.update()

    def position(self) -> QtCore.QPointF:
        return QtCore.QPointF(self._pos)

    def _star(self) -> QtGui.QPainterPath:
        return pg.graphicsItems.ScatterPlotItem.Symbols["star"]

    def _device_rect(self) -> QtCore.QRectF:
        px = self.pixelVectors()
        if px[0] is None:
            return QtCore.QRectF(self._pos, self._pos)
        half_w = self.size_px / 2 * px[0].length()
        half_h = self.size_px / 2 * px[1].length()
        return QtCore.QRectF(self._pos.x() - half_w, self._pos.y() - half_h, 2 * half_w, 2 * half_h)

    def boundingRect(self) -> QtCore.QRectF:
        return self._device_rect().adjusted(-1e-9, -1e-9, 1e-9, 1e-9)

    def viewTransformChanged(self) -> None:
        self.prepareGeometryChange()

    def paint(self, painter: QtGui.QPainter, option, widget=None) -> None:
        painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
        rect = self._device_rect()
        painter.save()
        painter.translate(rect.center())
        # Draw in pixels: undo the view's (different) x and y scales.
        painter.scale(rect.width(), -rect.height())
        pen = QtGui.QPen(self.pen)
        pen.setCosmetic(True)
        if self._hovered or self.moving:
            pen.setWidthF(pen.widthF() * 2)
        painter.setPen(pen)
        painter.setBrush(self.brush)
        painter.drawPath(self._star())
        painter.restore()

    def hoverEvent(self, ev) -> None:
        hovered = (not ev.isExit()) and ev.acceptDrags(QtCore.Qt.MouseButton.LeftButton)
        if hovered != self._hovered:
            self._hovered = hovered
            self.update()

    def mouseDragEvent(self, ev) -> None:
        if ev.button() != QtCore.Qt.MouseButton.LeftButton:
            return
        if ev.isStart():
            self.moving = True
            self.sigDragStarted.emit(self)
        if not self.moving:
            return
        ev.accept()
        self.sigDragged.emit(self, ev.pos().x())
        if ev.isFinish():
            self.moving = False
            self.sigDragFinished.emit(self)
            self.update()

    def mouseClickEvent(self, ev) -> None:
        if self.moving and ev.button() == QtCore.Qt.MouseButton.RightButton:
            ev.accept()
            self.cancel_drag()

    def cancel_drag(self) -> None:
        if self.moving:
            self.moving = False
            self.update()
            self.sigDragCancelled.emit(self)
