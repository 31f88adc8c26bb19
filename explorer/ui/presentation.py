"""Presentation mode (F5 in, Esc out): the chart full screen with nothing around it but the
scene's caption, text and lines scaled to read from the back of a room, and the keys a
presentation clicker sends (Right, Left, Page Down, Page Up, Space) stepping the scene."""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

SCALE = 1.6  # text, lines and points: 10 pt labels become 16 pt on a 1920 × 1080 projector
CAPTION_SHARE = 0.2  # the caption strip takes at most a fifth of the screen (its text shrinks first)
NEXT_KEYS = ("Right", "PgDown", "Space", "Down")
PREVIOUS_KEYS = ("Left", "PgUp", "Up", "Backspace")


class Presentation(QtCore.QObject):
    sig_toggled = QtCore.Signal(bool)

    def __init__(self, window: QtWidgets.QMainWindow, chart, caption_bar, player,
                 keep_docks: bool = False) -> None:
        """``player``: anything with ``next()`` and ``previous()``; ``keep_docks``: leave the
        side panels up (the design lab's sliders)."""
        super().__init__(window)
        self.window, self.chart, self.caption_bar, self.player = window, chart, caption_bar, player
        self.keep_docks = keep_docks
        self.active = False
        self._saved: tuple | None = None
        self._fonts: list[tuple[QtWidgets.QDockWidget, QtGui.QFont]] = []  # docks kept up, their fonts
        self._shortcuts = []
        for keys, slot in ((NEXT_KEYS, player.next), (PREVIOUS_KEYS, player.previous),
                           (("Esc",), self._escape)):
            for key in keys:
                shortcut = QtGui.QShortcut(QtGui.QKeySequence(key), window)
                shortcut.setContext(QtCore.Qt.ShortcutContext.WindowShortcut)
                shortcut.setEnabled(False)  # only while presenting: the panels need these keys
                shortcut.activated.connect(slot)
                self._shortcuts.append(shortcut)

    def toggle(self) -> None:
        self.leave() if self.active else self.enter()

    def enter(self, full_screen: bool = True) -> None:
        """Large text, no menus or toolbars, the clicker's keys; full screen unless the
        window keeps a size it was given (``--size`` on the command line)."""
        if self.active:
            return
        w = self.window
        self._saved = (w.saveState(), w.isMaximized(), w.isFullScreen(), w.menuBar().isVisible(),
                       w.statusBar().isVisible(), w.saveGeometry(), w.geometry())
        self._fonts = []
        for dock in w.findChildren(QtWidgets.QDockWidget):
            dock.setVisible(self.keep_docks and dock.isVisible())
            if dock.isVisible():  # a panel kept up is read from the back of the room too
                self._fonts.append((dock, dock.font()))
                font = QtGui.QFont(dock.font())
                font.setPointSizeF(font.pointSizeF() * SCALE)
                dock.setFont(font)
        for bar in w.findChildren(QtWidgets.QToolBar):
            bar.hide()
        w.menuBar().hide()
        w.statusBar().hide()
        self.chart.set_scale(SCALE)
        self.caption_bar.set_scale(SCALE, CAPTION_SHARE)
        self.active = True
        for shortcut in self._shortcuts:
            shortcut.setEnabled(True)
        if full_screen:
            w.showFullScreen()
        self.chart.setFocus()
        self.sig_toggled.emit(True)

    def leave(self) -> None:
        if not self.active:
            return
        assert self._saved is not None  # (saved when it became active)
        state, maximized, full, menu, status, geometry, rect = self._saved
        w = self.window
        self.active = False
        for shortcut in self._shortcuts:
            shortcut.setEnabled(False)
        self.chart.set_scale(1.0)
        self.caption_bar.set_scale(1.0)
        for dock, font in self._fonts:
            dock.setFont(font)
        self._fonts = []
        w.menuBar().setVisible(menu)
        w.statusBar().setVisible(status)
        if full:
            w.showFullScreen()
        elif maximized:
            w.showMaximized()
        else:
            w.showNormal()
        w.restoreState(state)
        if not (full or maximized):  # the exact size and place it had, docks as they were
            w.restoreGeometry(geometry)
            w.setGeometry(rect)
        self.sig_toggled.emit(False)

    def _escape(self) -> None:
        if not self.chart.cancel_drag():  # Esc first cancels a drag, as in the window
            self.leave()
