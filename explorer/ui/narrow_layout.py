"""A window narrower than NARROW_PX (a 1024×768 lecture-hall projector) keeps the chart at
least half its width: the left docks (Hardware, Details) join the right ones as tabs, and
the dock column takes at most 45 % of the width; widened again, they go back to the left.
A part of ``MainWindow`` (a mixin): it expects ``docks`` there."""

from __future__ import annotations

from PySide6 import QtCore

from explorer.ui.window_host import WindowHost

NARROW_PX = 1200
LEFT_DOCKS = ("hardware", "details")
DOCK_SHARE = 0.45  # of the window's width, the most the docks take when narrow


class NarrowLayout(WindowHost):
    @property
    def narrow(self) -> bool:
        """Whether the left docks are tabbed on the right now (read from the layout itself:
        a restored layout or presentation mode may have put them anywhere)."""
        area = QtCore.Qt.DockWidgetArea.RightDockWidgetArea
        return all(self.dockWidgetArea(self.docks[name]) == area for name in LEFT_DOCKS)

    def fit_docks_to_width(self) -> None:
        narrow = self.width() < NARROW_PX
        if narrow == self.narrow:
            return
        area, horizontal = QtCore.Qt.DockWidgetArea, QtCore.Qt.Orientation.Horizontal
        docks = self.docks
        if narrow:
            for name in LEFT_DOCKS:
                self.addDockWidget(area.RightDockWidgetArea, docks[name])
                self.tabifyDockWidget(docks["workload"], docks[name])
            docks["workload"].raise_()
            self.resizeDocks([docks["workload"]], [round(DOCK_SHARE * self.width())], horizontal)
            return
        for name in LEFT_DOCKS:
            self.addDockWidget(area.LeftDockWidgetArea, docks[name])
        self.splitDockWidget(docks["hardware"], docks["details"], QtCore.Qt.Orientation.Vertical)
        width = self.width()
        self.resizeDocks([docks["hardware"], docks["workload"]],
                         [max(200, round(0.2 * width)), max(290, round(0.27 * width))], horizontal)
