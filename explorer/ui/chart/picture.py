"""A widget that shows one of the app's pictures (a serving plan, an energy roofline), laid
out afresh for its size on every paint by the same painter every export uses."""

from __future__ import annotations

from typing import Protocol

from PySide6 import QtGui, QtWidgets

from explorer.chart.elements import Chart, Page
from explorer.ui.chart.painter import paint


class Exporting(Protocol):
    """A dialog with an ``export()`` of its picture."""

    def export(self) -> object: ...

    def reject(self) -> None: ...


def picture_buttons(dialog: Exporting) -> tuple[QtWidgets.QDialogButtonBox, QtWidgets.QPushButton]:
    """A Close button and an "Export picture…" one that calls ``dialog.export()``."""
    buttons = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Close)
    export = buttons.addButton("Export picture…", QtWidgets.QDialogButtonBox.ButtonRole.ActionRole)
    export.setToolTip("Save the picture as PNG, SVG or PDF, laid out for a slide")
    export.clicked.connect(lambda: dialog.export())  # (clicked passes a bool)
    buttons.rejected.connect(dialog.reject)
    return buttons, export


def save_picture(parent: QtWidgets.QWidget, picture: Picture, title: str, name: str,
                 path: str | None = None) -> bool:
    """Write ``picture`` laid out for a 1600×900 slide to ``path`` (asked for when None,
    ``name`` offered); a failure is said in a message box. True: written."""
    from explorer.chart.slides import ExportOptions
    from explorer.ui.chart.export import write_chart

    if not picture.shown():
        return False
    if path is None:
        path, _ = QtWidgets.QFileDialog.getSaveFileName(parent, f"Export {title}", name,
                                                        "Pictures (*.png *.svg *.pdf)")
        if not path:
            return False
    try:
        write_chart(picture.chart(Page.slide(1600, 900)), path, ExportOptions(theme=picture.theme), title)
    except (OSError, ValueError) as error:
        QtWidgets.QMessageBox.critical(parent, "Export failed", f"{path}: {error}")
        return False
    return True


class Picture(QtWidgets.QWidget):
    """Subclasses say whether there is something to draw (``shown``) and draw it on a page
    (``chart``)."""

    def __init__(self, theme: str, parent=None) -> None:
        super().__init__(parent)
        self.theme = theme
        self.setMinimumSize(420, 300)

    def shown(self) -> bool:
        raise NotImplementedError

    def chart(self, page: Page) -> Chart:
        raise NotImplementedError

    def paintEvent(self, _event) -> None:
        painter = QtGui.QPainter(self)
        try:
            if not self.shown():
                painter.fillRect(self.rect(), self.palette().window())
                return
            painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
            paint(painter, self.chart(Page.screen(self.width(), self.height())))
        finally:
            painter.end()
