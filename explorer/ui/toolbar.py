"""The main toolbar. Undo and Redo appear there with fixed labels (the menu's items say
what they undo, "Undo Drag the bandwidth of …", which would widen the toolbar and push
its other buttons about); their tooltips carry the full text."""

from __future__ import annotations

from PySide6 import QtGui, QtWidgets


def fixed_twin(action: QtGui.QAction, text: str, parent) -> QtGui.QAction:
    """An action labelled ``text`` that triggers ``action``, enabled with it, and whose
    tooltip is ``action``'s current text."""
    twin = QtGui.QAction(text, parent)

    def follow() -> None:
        twin.setEnabled(action.isEnabled())
        twin.setToolTip(action.text().replace("&", "") + f" ({action.shortcut().toString()})")

    action.changed.connect(follow)
    twin.triggered.connect(action.trigger)
    follow()
    return twin


def build_toolbar(window: QtWidgets.QMainWindow, actions: list[QtGui.QAction]) -> QtWidgets.QToolBar:
    bar = window.addToolBar("Main")
    bar.setObjectName("toolbar-main")
    for action in actions:
        bar.addAction(action)
    return bar
