"""Help › Keyboard and mouse: every menu shortcut (read from the menus, so the list cannot
fall behind them), what the chart does with the mouse, and the keys of presentation mode."""

from __future__ import annotations

from html import escape

from PySide6 import QtGui, QtWidgets

CHART = (
    ("Drag a roof up or down", "what if this device had more (or less) bandwidth or FLOP/s?"),
    ("Drag the star sideways", "change the batch along its dotted track"),
    ("Click a point or a roof", "its numbers in the Details panel"),
    ("Hover a point", "every op at that spot, with its share of the step"),
    ("Wheel; drag empty space", "zoom about the pointer; pan"),
    ("Double click", "fit the chart again (as View › Fit chart)"),
    ("Esc or right click", "cancel a drag in progress"),
)
PRESENTING = (
    ("Right, Space, Page Down", "the scene's next step"),
    ("Left, Page Up", "the scene's previous step"),
    ("Esc", "leave presentation mode"),
)


def menu_shortcuts(menu_bar: QtWidgets.QMenuBar) -> list[tuple[str, str, str]]:
    """(menu, item, keys) for every menu item with a shortcut."""
    out = []

    def walk(menu: QtWidgets.QMenu, path: str) -> None:
        for action in menu.actions():
            if isinstance(sub := action.menu(), QtWidgets.QMenu):
                walk(sub, f"{path} › {action.text().replace('&', '')}")
            elif not action.shortcut().isEmpty():
                keys = ", ".join(k.toString(QtGui.QKeySequence.SequenceFormat.NativeText)
                                 for k in action.shortcuts())
                out.append((path, action.text().replace("&", ""), keys))

    for action in menu_bar.actions():
        if isinstance(sub := action.menu(), QtWidgets.QMenu):
            walk(sub, action.text().replace("&", ""))
    return out


def shortcuts_html(menu_bar: QtWidgets.QMenuBar) -> str:
    def table(title: str, rows) -> str:
        body = "".join(f"<tr><td><b>{escape(a)}</b></td><td>{escape(b)}</td></tr>" for a, b in rows)
        return f"<h3>{escape(title)}</h3><table cellspacing='0' cellpadding='3'>{body}</table>"

    menus = [(keys, f"{item} ({menu})") for menu, item, keys in menu_shortcuts(menu_bar)]
    return (table("Keys", menus) + table("On the chart", CHART)
            + table("In presentation mode (F5)", PRESENTING))


class ShortcutsDialog(QtWidgets.QDialog):
    def __init__(self, window: QtWidgets.QMainWindow) -> None:
        super().__init__(window)
        self.setWindowTitle("Keyboard and mouse")
        text = QtWidgets.QTextBrowser()
        text.setHtml(shortcuts_html(window.menuBar()))
        buttons = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addWidget(text)
        layout.addWidget(buttons)
        self.resize(560, 620)
