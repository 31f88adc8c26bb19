"""File › Export chart: PNG, SVG or PDF with the slide options; and copy to the clipboard.

The chart's description is made on the GUI thread (milliseconds); drawing and encoding it
(a 3,840 px PNG takes most of a second, a 16,384 px one seconds) and writing the file run as
the app's ``export`` job, the dialog showing that it writes, with Cancel (or Esc) to stop:
a stopped export writes nothing (the bytes are dropped before the file is touched, and the
write itself replaces the file atomically), and the dialog stays open to try again."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6 import QtWidgets

from explorer import defaults
from explorer.chart.slides import TEXT_FORMATS, slide_chart, slide_text
from explorer.core.files.atomic import write_bytes_atomic
from explorer.runs import JobError, Jobs, Report
from explorer.state import AppState
from explorer.ui.chart.export import ASPECTS, THEMES, ExportOptions, chart_bytes, format_of, render_image

if TYPE_CHECKING:
    from explorer.kernels.timing import CancelToken

EXPORT = "export"  # the job's name


Emit = Callable[[Report, Any], None]


def write_in_job(path: Path, draw: Callable[[], bytes]) -> Callable[[CancelToken, Emit], Path | None]:
    """The job's work: the file's bytes drawn (``draw``), then, unless cancelled meanwhile,
    written in one atomic replace: ``path``, or None when cancelled (nothing written)."""

    def work(token: CancelToken, emit: Emit) -> Path | None:
        data = draw()
        if token.cancelled:
            return None
        try:
            return write_bytes_atomic(path, data)
        except OSError as exc:
            raise JobError(f"{path}: {exc.strerror or exc}") from None

    return work


class ExportDialog(QtWidgets.QDialog):
    def __init__(self, state: AppState, start: Path, parent=None, theme: str = "light",
                 subtitle: str = "", slots: dict[str, int] | None = None, runs: Jobs | None = None) -> None:
        """``slots``: the window's device styles, so the slide matches what is on screen;
        ``runs``: the window's jobs (the dialog's own without)."""
        super().__init__(parent)
        self.state, self.slots = state, slots
        self.runs = runs or Jobs(lambda: state.catalog, self)
        self._writing: Path | None = None  # the file an export under way writes
        self._stopped: Path | None = None  # the file of the export last stopped
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
        self.status = QtWidgets.QLabel()
        self.bar = QtWidgets.QProgressBar()
        self.bar.setRange(0, 0)  # busy: drawing a picture has no steps to count
        self.bar.hide()
        form = self._form(browse)
        buttons = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Save
                                             | QtWidgets.QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._export)
        buttons.rejected.connect(self.reject)
        self.save_button = buttons.button(QtWidgets.QDialogButtonBox.StandardButton.Save)
        self.cancel_button = buttons.button(QtWidgets.QDialogButtonBox.StandardButton.Cancel)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error)
        progress = QtWidgets.QHBoxLayout()
        progress.addWidget(self.status, 1)
        progress.addWidget(self.bar)
        layout.addLayout(progress)
        layout.addWidget(buttons)
        self.written: Path | None = None
        self.runs.sig_finished.connect(self._on_finished)
        self.runs.sig_failed.connect(self._on_failed)

    @property
    def writing(self) -> bool:
        return self._writing is not None

    def options(self) -> ExportOptions:
        return ExportOptions(width_px=self.width_px.value(), dpi=self.dpi.value() or None,
                             aspect=self.aspect.currentText(), transparent=self.transparent.isChecked(),
                             title=self.title.text().strip() or None, legend=self.legend.isChecked(),
                             subtitle=self.subtitle.text().strip() or None,
                             annotations=self.annotations.isChecked(), theme=self.theme.currentText())

    def _form(self, browse: QtWidgets.QPushButton) -> QtWidgets.QFormLayout:
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
        return form

    def _browse(self) -> None:
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Export chart", self.path.text(),
                                                        "PNG (*.png);;SVG (*.svg);;PDF (*.pdf)")
        if path:
            self.path.setText(path)

    def _export(self) -> None:
        """Describe the chart here, draw and write it in the background."""
        if self.writing:
            return
        path = Path(self.path.text())
        try:
            kind = format_of(path)
            options = self.options()
            if kind in TEXT_FORMATS:  # (made here: milliseconds)
                draw = functools.partial(slide_text(self.state, options, self.slots, kind).encode, "utf-8")
            else:
                chart = slide_chart(self.state, options, self.slots)
                draw = functools.partial(chart_bytes, chart, kind, options)
        except ValueError as exc:
            self.error.setText(str(exc))
            return
        self.error.clear()
        self._writing = path
        self._busy(f"Writing {path.name}…")
        self.runs.submit(EXPORT, write_in_job(path, draw))

    def _busy(self, text: str) -> None:
        self.status.setText(text)
        self.bar.setVisible(self.writing)
        self.save_button.setEnabled(not self.writing)
        self.cancel_button.setToolTip("Stop writing (Esc): nothing is written" if self.writing else "")

    def cancel_export(self) -> None:
        """Stop the export under way: its file is not written (the dialog stays open)."""
        if self._writing is None:
            return
        path, self._writing = self._writing, None
        self._stopped = path
        self.runs.cancel(EXPORT)
        self._busy(f"Stopped: {path.name} was not written")

    def reject(self) -> None:
        """Cancel or Esc: stop an export under way, else close."""
        if self.writing:
            self.cancel_export()
        else:
            super().reject()

    def done(self, result: int) -> None:  # closed any way: an export under way is dropped
        self.cancel_export()
        super().done(result)

    def _on_finished(self, job: str, written: Path | None) -> None:
        if job == EXPORT and self._writing is None and written is not None and written == self._stopped:
            self._busy(f"The stop came as {written.name} was being written: it was written whole")
            return
        if job != EXPORT or self._writing is None:
            return  # (a stopped export's late result)
        self._writing = None
        if written is None:
            self._busy("")
            return
        self.written = written
        self._busy("")
        self.accept()

    def _on_failed(self, job: str, message: str) -> None:
        if job != EXPORT or self._writing is None:
            return
        self._writing = None
        self._busy("")
        self.error.setText(message)


def copy_to_clipboard(state: AppState, width: int = 1920, theme: str = "light",
                      slots: dict[str, int] | None = None) -> None:
    options = ExportOptions(width_px=width, theme=theme)
    QtWidgets.QApplication.clipboard().setImage(render_image(state, options, slots))
