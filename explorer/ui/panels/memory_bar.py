"""A bar of what the step keeps in memory (weights, KV cache, activations) against the
memory budget: the device's usable memory times the share a serving engine may fill."""

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
        self._capacity = 1.0  # the budget: what "fits" means
        self._usable = 1.0
        self._share = 1.0
        self._fits = True
        self.setSizePolicy(QtWidgets.QSizePolicy.Policy.Expanding, QtWidgets.QSizePolicy.Policy.Fixed)

    def set_totals(self, t: Totals) -> None:
        values = (t.weight_bytes, t.kv_cache_bytes, t.activation_bytes)
        self._parts = [(name, v, colour) for (name, colour), v in zip(PARTS, values, strict=True) if v]
        self._capacity = t.memory_budget_bytes
        self._usable = t.memory_usable_bytes
        self._share = t.memory_budget_bytes / t.memory_usable_bytes
        self._fits = t.fits_in_memory
        lines = [f"{name}: {format_bytes(v)}" for name, v, _ in self._parts]
        usable = ("" if t.memory_usable_bytes == t.memory_capacity_bytes
                  else f", {format_bytes(t.memory_usable_bytes)} usable (what the device reports)")
        lines.append(f"device memory: {format_bytes(t.memory_capacity_bytes)} nominal{usable}")
        lines.append(f"budget: {self._share:.0%} of the usable memory, {format_bytes(self._capacity)} "
                     f"(Workload › Memory share)")
        lines.append("fits" if self._fits else "DOES NOT FIT: lower the batch, context or precision")
        self.setToolTip("\n".join(lines))
        self.update()

    @property
    def text(self) -> str:
        used = sum(v for _, v, _ in self._parts)
        verdict = "fits" if self._fits else "does NOT fit"
        return (f"{format_bytes(used)} of {format_bytes(self._capacity)} "
                f"({self._share:.0%} of {format_bytes(self._usable)} usable): {verdict}")

    def paintEvent(self, event) -> None:
        painter = QtGui.QPainter(self)
        rect = self.rect().adjusted(1, 1, -1, -15)
        used = sum(v for _, v, _ in self._parts)
        scale = rect.width() / max(used, self._usable, 1.0)
        painter.fillRect(rect, QtGui.QColor("#eeeeee"))
        capacity_x = rect.left() + self._capacity * scale
        # Usable memory the serving engine leaves alone (CUDA context, allocator): hatched.
        painter.fillRect(QtCore.QRectF(capacity_x, rect.top(), (self._usable - self._capacity) * scale,
                                       rect.height()),
                         QtGui.QBrush(QtGui.QColor("#999999"), QtCore.Qt.BrushStyle.BDiagPattern))
        x = float(rect.left())
        for _, value, colour in self._parts:
            width = value * scale
            painter.fillRect(QtCore.QRectF(x, rect.top(), width, rect.height()), QtGui.QColor(colour))
            x += width
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
