"""A panel that scrolls where the window has no room for it, and only there."""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets


class Scrolled(QtWidgets.QScrollArea):
    """``panel`` in a frameless scroll area that gives it all its room and scrolls only where
    that is shorter than the panel's least height (a prompt's two more rows once made the
    window 825 px tall, past a 768 px screen). Qt's own resizing would give a panel with
    wrapped text its preferred height, so it would scroll below that and spread its rows."""

    def __init__(self, panel: QtWidgets.QWidget) -> None:
        super().__init__()
        self.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.panel = panel  # (before setWidget, whose events reach the methods below)
        self.setWidget(panel)
        panel.installEventFilter(self)

    def _bar(self) -> int:
        return self.verticalScrollBar().sizeHint().width()

    def minimumSizeHint(self) -> QtCore.QSize:
        """As wide as the panel needs beside a scroll bar; as short as a scroll area can be."""
        least = self.panel.minimumSizeHint()
        return QtCore.QSize(least.width() + self._bar(), super().minimumSizeHint().height())

    def sizeHint(self) -> QtCore.QSize:
        hint = self.panel.sizeHint()
        return QtCore.QSize(hint.width() + self._bar(), hint.height())

    def eventFilter(self, watched: QtCore.QObject, event: QtCore.QEvent) -> bool:
        if watched is self.panel and event.type() == QtCore.QEvent.Type.LayoutRequest:
            self.updateGeometry()  # its content changed: it may need more room or less,
            self.fit()
        return super().eventFilter(watched, event)

    def resizeEvent(self, event: QtGui.QResizeEvent) -> None:
        super().resizeEvent(event)
        self.fit()

    def fit(self) -> None:
        """The panel as large as the room, never below its least size; where the room is
        shorter, as tall as it needs beside the scroll bar."""
        least, room = self.panel.minimumSizeHint(), self.size()
        width = room.width() - (self._bar() if least.height() > room.height() else 0)
        self.panel.resize(max(width, least.width()), max(room.height(), least.height()))
