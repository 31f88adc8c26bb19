"""Deterministic mouse input for a pyqtgraph plot: events sent to the view's viewport
(QTest's mouse functions do not keep a button held across moves in a QGraphicsView).
pyqtgraph drops moves closer than 10 ms (its mouseRateLimit), so moves are spaced out."""

from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtTest import QTest

MOVE_INTERVAL_MS = 12

LEFT = QtCore.Qt.MouseButton.LeftButton
RIGHT = QtCore.Qt.MouseButton.RightButton
NONE = QtCore.Qt.MouseButton.NoButton
NO_MODIFIER = QtCore.Qt.KeyboardModifier.NoModifier


def to_pixels(plot, x_view: float, y_view: float) -> QtCore.QPointF:
    """Viewport pixel position of a point in view (log10) coordinates."""
    scene = plot.getViewBox().mapViewToScene(QtCore.QPointF(x_view, y_view))
    return QtCore.QPointF(plot.mapFromScene(scene))


def to_view(plot, pixel: QtCore.QPointF) -> tuple[float, float]:
    point = plot.getViewBox().mapSceneToView(plot.mapToScene(pixel.toPoint()))
    return point.x(), point.y()


def _send(plot, kind, pos, button, buttons) -> None:
    global_pos = QtCore.QPointF(plot.viewport().mapToGlobal(pos.toPoint()))
    event = QtGui.QMouseEvent(kind, QtCore.QPointF(pos), global_pos, button, buttons, NO_MODIFIER)
    QtWidgets.QApplication.sendEvent(plot.viewport(), event)


def move(plot, pos, buttons=NONE) -> None:
    QTest.qWait(MOVE_INTERVAL_MS)
    _send(plot, QtCore.QEvent.Type.MouseMove, pos, NONE, buttons)


def press(plot, pos, button=LEFT) -> None:
    _send(plot, QtCore.QEvent.Type.MouseButtonPress, pos, button, button)


def release(plot, pos, button=LEFT) -> None:
    _send(plot, QtCore.QEvent.Type.MouseButtonRelease, pos, button, NONE)


def drag(plot, start, end, steps: int = 6, finish: bool = True) -> None:
    """Press at ``start``, move to ``end`` in ``steps``, release unless ``finish`` is False."""
    move(plot, start)
    press(plot, start)
    for i in range(1, steps + 1):
        t = i / steps
        move(plot, QtCore.QPointF(start.x() + (end.x() - start.x()) * t,
                                  start.y() + (end.y() - start.y()) * t), LEFT)
    if finish:
        release(plot, end)
