"""A bar of what the step keeps in memory (weights, KV cache, activations) against capacity."""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from explorer.core.analysis import Totals
from explorer.core.units import format_bytes

PARTS = (("weights", "#0072B2"), ("KV cache", "#E69F00"), ("activations", "#CC79A7"))
OVER = "#D55E00"


class MemoryBar(QtWidgets.QWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setMinimumHeight(34)
        self._parts: list[tuple[str, float, str]] = []
        self._capacity = 1.0
        self._fits = True
        self.setSizePolicy(QtWidgets.QSizePolicy.Policy.Expanding, QtWidgets.QSizePolicy.Policy.Fixed)

    def set_totals(self, t: Totals) -> None:
        values = (t.weight_bytes, t.kv_cache_bytes, t.activation_bytes)
        self._parts = [(name, v, colour) for (name, colour), v in zip(PARTS, values, strict=True) if v]
        self._capacity = t.memory_capacity_bytes
        self._fits = t.fits_in_memory
        lines = [f"{name}: {format_bytes(v)}" for name, v, _ in self._parts]
        lines.append(f"device memory: {format_bytes(self._capacity)}")
        lines.append("fits" if self._fits else "DOES NOT FIT: lower the batch, context or precision")
        self.setToolTip("\n".join(lines))
        self.update()

    @property
    def text(self) -> str:
        used = sum(v for _, v, _ in self._parts)
        verdict = "fits" if self._fits else "does NOT fit"
        return f"{format_bytes(used)} of {format_bytes(self._capacity)}: {verdict}"

    def paintEvent(self, event) -> None:
        painter = QtGui.QPainter(self)
        rect = self.rect().adjusted(1, 1, -1, -15)
        used = sum(v for _, v, _ in self._parts)
        scale = rect.width() / max(used, self._capacity, 1.0)
        painter.fillRect(rect, QtGui.QColor("#eeeeee"))
        x = float(rect.left())
        for _, value, colour in self._parts:
            width = value * scale
            painter.fillRect(QtCore.QRectF(x, rect.top(), width, rect.height()), QtGui.QColor(colour))
            x += width
        capacity_x = rect.left() + self._capacity * scale
        pen = QtGui.QPen(QtGui.QColor(OVER if not self._fits else "#000000"), 2)
        painter.setPen(pen)
        painter.drawLine(QtCore.QPointF(capacity_x, rect.top() - 1),
                         QtCore.QPointF(capacity_x, rect.bottom() + 1))
        if not self._fits:
            painter.setPen(QtGui.QPen(QtGui.QColor(OVER), 3))
            painter.drawRect(rect)
        painter.setPen(QtGui.QColor(OVER if not self._fits else "#000000"))
        painter.drawText(QtCore.QRectF(rect.left(), rect.bottom() + 1, rect.width(), 14),
                         QtCore.Qt.AlignmentFlag.AlignLeft, self.text)
        painter.end()
