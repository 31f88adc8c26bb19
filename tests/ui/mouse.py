"""Deterministic mouse input for the chart widget: events sent to it directly (QTest's
mouse functions do not keep a button held across moves), moves spaced out in time."""

import math

from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtTest import QTest

from explorer.chart import hits

MOVE_INTERVAL_MS = 12

LEFT = QtCore.Qt.MouseButton.LeftButton
RIGHT = QtCore.Qt.MouseButton.RightButton
NONE = QtCore.Qt.MouseButton.NoButton
NO_MODIFIER = QtCore.Qt.KeyboardModifier.NoModifier


def to_pixels(plot, x_view: float, y_view: float) -> QtCore.QPointF:
    """Widget pixel position of a point in log10 coordinates (intensity, FLOP/s)."""
    return QtCore.QPointF(plot.chart.x_px(10**x_view), plot.chart.y_px(10**y_view))


def to_view(plot, pixel: QtCore.QPointF, chart=None) -> tuple[float, float]:
    """log10 (intensity, FLOP/s) at a widget pixel (on ``chart``, by default the one shown)."""
    x, y = hits.value_at(chart or plot.chart, (pixel.x(), pixel.y()))
    return math.log10(x), math.log10(y)


def _send(plot, kind, pos, button, buttons) -> None:
    global_pos = QtCore.QPointF(plot.mapToGlobal(pos.toPoint()))
    event = QtGui.QMouseEvent(kind, QtCore.QPointF(pos), global_pos, button, buttons, NO_MODIFIER)
    QtWidgets.QApplication.sendEvent(plot, event)


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
