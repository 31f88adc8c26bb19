"""A panel that scrolls where the window has no room for it, and only there."""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets


class Scrolled(QtWidgets.QScrollArea):
    """``panel`` in a frameless scroll area that gives it all its room and scrolls only where
    that is shorter than the panel's least height (a prompt's two more rows once made the
    window 825 px tall, past a 768 px screen). Qt's own resizing would give a panel with
    wrapped text its preferred height, so it would scroll below that and spread its rows.
    The wheel over an editor that has no focus scrolls the panel rather than change the
    editor's value (a workload's phase, say, under a pointer passing by)."""

    def __init__(self, panel: QtWidgets.QWidget) -> None:
        super().__init__()
        self.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.panel = panel  # (both before setWidget, whose events reach the methods below)
        self.editors = [*panel.findChildren(QtWidgets.QComboBox),
                        *panel.findChildren(QtWidgets.QAbstractSpinBox)]
        self.setWidget(panel)  # (which filters the panel's events through eventFilter)
        for editor in self.editors:
            # the wheel scrolls the panel; it changes only the editor a click or Tab chose
            editor.setFocusPolicy(QtCore.Qt.FocusPolicy.StrongFocus)
            editor.installEventFilter(self)

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
        elif (event.type() == QtCore.QEvent.Type.Wheel and watched in self.editors
              and isinstance(watched, QtWidgets.QWidget) and not watched.hasFocus()):
            # an editor the pointer passes over while the panel scrolls keeps its value
            QtWidgets.QApplication.sendEvent(self.verticalScrollBar(), event)
            return True
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
