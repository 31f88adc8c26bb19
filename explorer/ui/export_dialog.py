"""File › Export chart: PNG, SVG or PDF with the slide options; and copy to the clipboard."""

from __future__ import annotations

from pathlib import Path

from PySide6 import QtWidgets

from explorer import defaults
from explorer.state import AppState
from explorer.ui.chart.export import ASPECTS, THEMES, ExportOptions, export_chart, format_of, render_image


class ExportDialog(QtWidgets.QDialog):
    def __init__(self, state: AppState, start: Path, parent=None, theme: str = "light",
                 subtitle: str = "", slots: dict[str, int] | None = None) -> None:
        """``slots``: the window's device styles, so the slide matches what is on screen."""
        super().__init__(parent)
        self.state, self.slots = state, slots
        self.setWindowTitle("Export chart")
        self.path = QtWidgets.QLineEdit(str(start))
        browse = QtWidgets.QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        self.width_px = QtWidgets.QSpinBox(minimum=defaults.EXPORT_WIDTH_RANGE[0],
                                        maximum=defaults.EXPORT_WIDTH_RANGE[1],
                                        value=defaults.EXPORT_WIDTH_PX, suffix=" px")
        self.width_px.setToolTip("PNG width; SVG and PDF are vector and need none")
        self.dpi = QtWidgets.QSpinBox(minimum=0, maximum=defaults.EXPORT_DPI_MAX, value=0, suffix=" dpi")
        self.dpi.setSpecialValueText("use the width")
        self.dpi.setToolTip("PNG as wide as a full slide (13.33 in at 16:9, 10 in at 4:3) at this "
                            "resolution, instead of a width in pixels")
        self.dpi.valueChanged.connect(lambda v: self.width_px.setEnabled(v == 0))
        self.theme = QtWidgets.QComboBox()
        self.theme.addItems(list(THEMES))
        self.theme.setCurrentText(theme)
        self.theme.setToolTip("light for documents, dark or high contrast for projectors")
        self.subtitle = QtWidgets.QLineEdit(subtitle, placeholderText="none")
        self.subtitle.setToolTip("A line under the title, wrapped to the chart (a scene's caption)")
        self.annotations = QtWidgets.QCheckBox("Roof and ridge labels", checked=True)  # type: ignore[call-overload]  # (Qt properties as keywords: the stubs do not say)
        self.aspect = QtWidgets.QComboBox()
        self.aspect.addItems(list(ASPECTS))
        self.transparent = QtWidgets.QCheckBox("Transparent background (PNG)")
        self.title = QtWidgets.QLineEdit(placeholderText="the chart's own title")
        self.legend = QtWidgets.QCheckBox("Key beside the chart", checked=True)  # type: ignore[call-overload]  # (Qt properties as keywords: the stubs do not say)
        self.error = QtWidgets.QLabel(wordWrap=True)
        self.error.setStyleSheet("color: #D55E00")
        path_row = QtWidgets.QHBoxLayout()
        path_row.addWidget(self.path, 1)
        path_row.addWidget(browse)
        form = QtWidgets.QFormLayout()
        form.addRow("File (.png, .svg, .pdf)", path_row)
        form.addRow("Width", self.width_px)
        form.addRow("or DPI", self.dpi)
        form.addRow("Aspect", self.aspect)
        form.addRow("Theme", self.theme)
        form.addRow("Title", self.title)
        form.addRow("Subtitle", self.subtitle)
        form.addRow(self.transparent)
        form.addRow(self.legend)
        form.addRow(self.annotations)
        buttons = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Save
                                             | QtWidgets.QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._export)
        buttons.rejected.connect(self.reject)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        self.written: Path | None = None

    def options(self) -> ExportOptions:
        return ExportOptions(width_px=self.width_px.value(), dpi=self.dpi.value() or None,
                             aspect=self.aspect.currentText(), transparent=self.transparent.isChecked(),
                             title=self.title.text().strip() or None, legend=self.legend.isChecked(),
                             subtitle=self.subtitle.text().strip() or None,
                             annotations=self.annotations.isChecked(), theme=self.theme.currentText())

    def _browse(self) -> None:
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Export chart", self.path.text(),
                                                        "PNG (*.png);;SVG (*.svg);;PDF (*.pdf)")
        if path:
            self.path.setText(path)

    def _export(self) -> None:
        try:
            format_of(self.path.text())
            self.written = export_chart(self.state, self.path.text(), self.options(), self.slots)
        except (ValueError, OSError) as exc:
            self.error.setText(str(exc))
            return
        self.accept()


def copy_to_clipboard(state: AppState, width: int = 1920, theme: str = "light",
                      slots: dict[str, int] | None = None) -> None:
    options = ExportOptions(width_px=width, theme=theme)
    QtWidgets.QApplication.clipboard().setImage(render_image(state, options, slots))
