"""The strip above the caption while a scene step asks a question: the question, a box to
type a guess in (Enter adds it), the guesses as a spread on a number line, the Reveal button,
and after the reveal the answer moving from the guesses to its place and how they did."""

from __future__ import annotations

import math
from collections.abc import Sequence

from PySide6 import QtCore, QtGui, QtWidgets

from explorer.chart.palette import Theme

TEXT_POINTS = 12.0
STRIP_PX = 54  # the number line's height at scale 1


class GuessEntry(QtWidgets.QLineEdit):
    """The guess box: Enter adds the guess; Page Down (a clicker's "next") reveals."""

    sig_reveal = QtCore.Signal()

    def keyPressEvent(self, event: QtGui.QKeyEvent) -> None:
        if event.key() == QtCore.Qt.Key.Key_PageDown:
            self.sig_reveal.emit()
            return
        super().keyPressEvent(event)


class SpreadStrip(QtWidgets.QWidget):
    """The guesses as ticks on a logarithmic number line, and the answer as a dot on it."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.guesses: tuple[float, ...] = ()
        self.answer: float | None = None  # where the answer's dot is drawn now (it moves)
        self.final: float | None = None  # where it ends
        self.labels: tuple[str, str] = ("", "")  # (lowest guess, answer) as text
        self.theme: Theme | None = None
        self.scale = 1.0
        self.setMinimumHeight(STRIP_PX)
        self.setAccessibleName("Guesses and the answer on a number line")

    def span(self) -> tuple[float, float]:
        """The line's ends: every guess and the answer, with a margin either side."""
        values = [*self.guesses, *(v for v in (self.final,) if v)]
        if not values:
            return 1.0, 10.0
        low, high = min(values), max(values)
        return low / 1.6, high * 1.6

    def x_of(self, value: float) -> float:
        low, high = self.span()
        margin = 16 * self.scale
        return margin + (math.log(value / low) / math.log(high / low)) * (self.width() - 2 * margin)

    def paintEvent(self, _event) -> None:
        theme = self.theme
        painter = QtGui.QPainter(self)
        try:
            painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
            ink = QtGui.QColor(theme.foreground if theme else "#000000")
            guess = QtGui.QColor(theme.selected if theme else "#d62728")
            answer = QtGui.QColor(theme.measured if theme else "#1f77b4")
            mid = self.height() * 0.55
            painter.setPen(QtGui.QPen(ink, 1.5 * self.scale))
            painter.drawLine(QtCore.QPointF(self.x_of(self.span()[0] * 1.2), mid),
                             QtCore.QPointF(self.x_of(self.span()[1] / 1.2), mid))
            size = 7 * self.scale
            painter.setBrush(guess)
            painter.setPen(QtGui.QPen(guess, 1))
            for value in self.guesses:
                x = self.x_of(value)
                tip = QtCore.QPointF(x, mid)
                painter.drawPolygon(QtGui.QPolygonF([tip, tip + QtCore.QPointF(-size / 2, -size),
                                                     tip + QtCore.QPointF(size / 2, -size)]))
            if self.answer is not None:
                painter.setBrush(answer)
                painter.setPen(QtGui.QPen(ink, 1.5 * self.scale))
                painter.drawEllipse(QtCore.QPointF(self.x_of(self.answer), mid), size, size)
            if self.final is not None and self.answer == self.final and self.labels[1]:
                painter.setPen(ink)
                font = QtGui.QFont(self.font())
                font.setBold(True)
                painter.setFont(font)
                metrics = QtGui.QFontMetricsF(font)
                text = self.labels[1]
                x = min(max(self.x_of(self.final) - metrics.horizontalAdvance(text) / 2, 0),
                        self.width() - metrics.horizontalAdvance(text))
                painter.drawText(QtCore.QPointF(x, mid + size + metrics.ascent() + 2), text)
        finally:
            painter.end()


class QuestionBar(QtWidgets.QFrame):
    sig_guess = QtCore.Signal(str)  # the text typed
    sig_reveal = QtCore.Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("question-bar")
        self.ask = QtWidgets.QLabel(wordWrap=True)
        self.ask.setTextFormat(QtCore.Qt.TextFormat.PlainText)
        self.ask.hide()  # the caption strip under it asks the question: the chart keeps the room
        self.entry = GuessEntry()
        self.entry.setAccessibleName("Your guess")
        self.entry.returnPressed.connect(self._on_enter)
        self.entry.sig_reveal.connect(self.sig_reveal.emit)
        self.reveal = QtWidgets.QPushButton("Reveal")
        self.reveal.setToolTip("Measure or compute the answer and show it (Page Down)")
        self.reveal.setFocusPolicy(QtCore.Qt.FocusPolicy.NoFocus)  # the keys stay with the guess box
        self.reveal.clicked.connect(self.sig_reveal.emit)
        self.count = QtWidgets.QLabel()
        self.result = QtWidgets.QLabel(wordWrap=True)
        self.result.setTextFormat(QtCore.Qt.TextFormat.PlainText)
        self.strip = SpreadStrip()
        row = QtWidgets.QHBoxLayout()
        row.addWidget(self.entry, 1)
        row.addWidget(self.count)
        row.addWidget(self.reveal)
        column = QtWidgets.QVBoxLayout(self)
        column.setContentsMargins(12, 6, 8, 4)
        column.setSpacing(4)
        column.addWidget(self.ask)
        column.addLayout(row)
        column.addWidget(self.strip)
        column.addWidget(self.result)
        self._scale = 1.0
        self.set_scale(1.0)
        self.hide()

    def _on_enter(self) -> None:
        text = self.entry.text().strip()
        if text:
            self.sig_guess.emit(text)

    def show_question(self, ask: str, unit: str, guesses: Sequence[float], scale: float, result: str = "",
                      revealed: bool = False) -> None:
        """The question ``ask``; ``guesses`` in the answer's unit (``scale`` of it per ``unit``)."""
        self.ask.setText(ask)
        self.entry.setPlaceholderText(f"A guess in {unit}; Enter adds it, Page Down reveals")
        self.count.setText(f"{len(guesses)} guess{'es' if len(guesses) != 1 else ''}")
        self.result.setText(result)
        self.result.setVisible(bool(result))
        for widget in (self.entry, self.reveal, self.count):  # answered: the chart takes their room
            widget.setEnabled(not revealed)
            widget.setVisible(not revealed)
        self.strip.guesses = tuple(guesses)
        self.strip.update()
        self.show()

    def set_answer(self, shown: float | None, final: float | None, label: str = "") -> None:
        """The answer's dot at ``shown`` on its way to ``final`` (None: no answer yet)."""
        self.strip.answer, self.strip.final = shown, final
        self.strip.labels = ("", label)
        self.strip.update()

    def set_scale(self, factor: float) -> None:
        self._scale = factor
        for widget in (self.ask, self.entry, self.reveal, self.count, self.result, self.strip):
            font = QtGui.QFont(widget.font())
            font.setPointSizeF(TEXT_POINTS * factor)
            font.setBold(widget is self.ask)
            widget.setFont(font)
        self.strip.scale = factor
        self.strip.setMinimumHeight(round(STRIP_PX * factor))

    def set_theme(self, theme: Theme) -> None:
        self.strip.theme = theme
        self.setStyleSheet(f"#question-bar {{ background: {theme.background}; "
                           f"border-top: 1px solid {theme.axis}; }}"
                           f"#question-bar QLabel {{ color: {theme.foreground}; }}")
        self.strip.update()
