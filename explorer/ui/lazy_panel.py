"""A dock's panel built the first time it is shown: panels hidden behind another tab at
start (the scaling laws, drawn with pyqtgraph) cost nothing until the user opens them, so
start-up does not import or lay them out."""

from __future__ import annotations

from collections.abc import Callable

from PySide6 import QtCore, QtWidgets


class LazyPanel(QtWidgets.QWidget):
    def __init__(self, build: Callable[[], QtWidgets.QWidget], parent=None) -> None:
        super().__init__(parent)
        self._build = build
        self._panel: QtWidgets.QWidget | None = None
        self._layout = QtWidgets.QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)

    @property
    def built(self) -> bool:
        return self._panel is not None

    @property
    def panel(self) -> QtWidgets.QWidget:
        """The panel, built now if it was not yet."""
        if self._panel is None:
            self._panel = self._build()
            self._layout.addWidget(self._panel)
        return self._panel

    def follow(self, dock: QtWidgets.QDockWidget) -> None:
        """Build when ``dock`` (which holds this panel) comes to the front: a dock in a tab
        behind another counts as visible, but shows nothing."""
        dock.visibilityChanged.connect(lambda shown: self._later() if shown else None)

    def showEvent(self, event) -> None:  # Qt override
        super().showEvent(event)
        self._later()

    def _later(self) -> None:
        if self._panel is None:  # once the layout has settled: which tab is in front
            QtCore.QTimer.singleShot(0, self._build_if_seen)

    def _build_if_seen(self) -> None:
        if self.isVisible() and not self.visibleRegion().isEmpty():
            self.panel  # noqa: B018 - builds it
