"""A bar of what the step keeps in memory (weights, training's gradients and optimizer state,
KV cache, activations; one device's share when the step is spread) against the
memory budget: the device's usable memory times the share a serving engine may fill."""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from explorer.core.analysis.analysis import Totals
from explorer.core.units import format_bytes

# Shades of the text colour, not the chart's colours (those mean op groups there).
PARTS = (("weights", 0.85), ("optimizer state", 0.7), ("KV cache", 0.55), ("activations", 0.3))
OVER = "#D55E00"
ROW = 16  # the height of each text row under the bar: the key, then the verdict


class MemoryBar(QtWidgets.QWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setMinimumHeight(20 + 2 * ROW)
        self._parts: list[tuple[str, float, float]] = []
        self._capacity = 1.0  # the budget: what "fits" means
        self._usable = 1.0
        self._share = 1.0
        self._fits = True
        self.setSizePolicy(QtWidgets.QSizePolicy.Policy.Expanding, QtWidgets.QSizePolicy.Policy.Fixed)

    def set_totals(self, t: Totals) -> None:
        values = (t.weight_bytes, t.state_bytes, t.kv_cache_bytes, t.activation_bytes)
        self._parts = [(name, v, shade) for (name, shade), v in zip(PARTS, values, strict=True) if v]
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

    def _shade(self, share: float) -> QtGui.QColor:
        """The text colour at ``share`` strength over the panel's background."""
        ink, paper = self.palette().color(QtGui.QPalette.ColorRole.Text), self.palette().color(
            QtGui.QPalette.ColorRole.Base)
        return QtGui.QColor(*(round(share * a + (1 - share) * b) for a, b in
                              zip((ink.red(), ink.green(), ink.blue()),
                                  (paper.red(), paper.green(), paper.blue()), strict=True)))

    def paintEvent(self, event) -> None:
        painter = QtGui.QPainter(self)
        text = self.palette().color(QtGui.QPalette.ColorRole.Text)
        rect = self.rect().adjusted(1, 1, -1, -(2 * ROW + 1))
        used = sum(v for _, v, _ in self._parts)
        scale = rect.width() / max(used, self._usable, 1.0)
        painter.fillRect(rect, self.palette().color(QtGui.QPalette.ColorRole.Base))
        capacity_x = rect.left() + self._capacity * scale
        # Usable memory the serving engine leaves alone (CUDA context, allocator): hatched.
        hatch = QtGui.QBrush(self._shade(0.5), QtCore.Qt.BrushStyle.BDiagPattern)
        painter.fillRect(QtCore.QRectF(capacity_x, rect.top(), (self._usable - self._capacity) * scale,
                                       rect.height()), hatch)
        x = float(rect.left())
        for _, value, shade in self._parts:
            width = value * scale
            painter.fillRect(QtCore.QRectF(x, rect.top(), width, rect.height()), self._shade(shade))
            x += width
        painter.setPen(QtGui.QPen(QtGui.QColor(OVER) if not self._fits else text, 2))
        painter.drawLine(QtCore.QPointF(capacity_x, rect.top() - 1),
                         QtCore.QPointF(capacity_x, rect.bottom() + 1))
        painter.setPen(QtGui.QPen(self._shade(0.5), 1))
        painter.drawRect(rect)
        if not self._fits:
            painter.setPen(QtGui.QPen(QtGui.QColor(OVER), 3))
            painter.drawRect(rect)
        # The key: a swatch and a name for each part, and the hatched reserve.
        x, y = float(rect.left()), rect.bottom() + 3
        metrics = painter.fontMetrics()
        key: list[tuple[str, float | None, float | None]] = [*self._parts, ("reserved", None, None)]
        for name, _, tint in key:
            swatch = QtCore.QRectF(x, y + 3, 10, 10)
            painter.fillRect(swatch, hatch if tint is None else self._shade(tint))
            painter.setPen(text)
            painter.drawText(QtCore.QPointF(x + 14, y + 12), name)
            x += 14 + metrics.horizontalAdvance(name) + 12
        painter.setPen(QtGui.QColor(OVER) if not self._fits else text)
        painter.drawText(QtCore.QRectF(rect.left(), rect.bottom() + ROW + 1, rect.width(), ROW),
                         QtCore.Qt.AlignmentFlag.AlignLeft, self.text)
        painter.end()
