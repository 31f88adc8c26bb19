"""A one-line label that ends its text with "…" where it has too little room (the status
bar's summary at 1366 px), instead of cutting it mid-word; ``text()`` stays whole, and the
tooltip should say it whole."""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets


class ElidedLabel(QtWidgets.QLabel):
    """A ``QLabel`` that draws its text elided at its right end to its width."""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent, textFormat=QtCore.Qt.TextFormat.PlainText)  # user names: plain text
        self.setMinimumWidth(1)  # the layout may narrow it below its text's width

    def minimumSizeHint(self) -> QtCore.QSize:
        return QtCore.QSize(1, super().minimumSizeHint().height())

    def shown_text(self) -> str:
        """The text as drawn: whole, or cut at a word's end with "…"."""
        return self.fontMetrics().elidedText(self.text(), QtCore.Qt.TextElideMode.ElideRight,
                                             self.contentsRect().width())

    def paintEvent(self, event: QtGui.QPaintEvent) -> None:
        painter = QtGui.QPainter(self)
        painter.setPen(self.palette().color(QtGui.QPalette.ColorRole.WindowText))
        painter.drawText(self.contentsRect(), int(self.alignment()), self.shown_text())
