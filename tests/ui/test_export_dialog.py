"""The export dialog draws and writes its file off the GUI thread: the window keeps handling
events meanwhile, the dialog says what it writes, Cancel or Esc stop it and leave the file
as it was (no partial file, no temporary one), and a file that cannot be written is
refused with the system's reason, the dialog open to try again."""

from __future__ import annotations

import threading

import pytest
from PySide6 import QtCore, QtGui, QtWidgets

import explorer.ui.export_dialog as export_dialog
from explorer.chart.slides import ChartFormat, slide_text
from explorer.ui.export_dialog import ExportDialog


@pytest.fixture
def held(monkeypatch):
    """The drawing held until the test lets it go (``release``)."""
    real, release, reached = export_dialog.chart_bytes, threading.Event(), threading.Event()

    def chart_bytes(*args, **kwargs):
        reached.set()
        assert release.wait(10)
        return real(*args, **kwargs)

    monkeypatch.setattr(export_dialog, "chart_bytes", chart_bytes)
    return release, reached


def _dialog(window, qtbot, path) -> ExportDialog:
    dialog = ExportDialog(window.state, path, window, runs=window.runs)
    qtbot.addWidget(dialog)
    dialog.width_px.setValue(800)
    dialog.show()
    return dialog


def _event_loop_runs(qtbot) -> bool:
    fired: list[int] = []
    QtCore.QTimer.singleShot(10, lambda: fired.append(1))
    qtbot.waitUntil(lambda: bool(fired), timeout=2000)
    return bool(fired)


def test_the_dialog_writes_in_the_background_and_closes_once_written(window, qtbot, tmp_path, held):
    release, reached = held
    path = tmp_path / "slide.png"
    dialog = _dialog(window, qtbot, path)
    qtbot.mouseClick(dialog.save_button, QtCore.Qt.MouseButton.LeftButton)
    assert reached.wait(10)  # drawing, and the window is free meanwhile
    assert _event_loop_runs(qtbot)
    assert dialog.writing and not path.exists() and dialog.status.text() == "Writing slide.png…"
    assert dialog.bar.isVisible() and not dialog.save_button.isEnabled()
    release.set()
    qtbot.waitUntil(lambda: dialog.result() == QtWidgets.QDialog.DialogCode.Accepted, timeout=10000)
    assert dialog.written == path and not dialog.writing
    image = QtGui.QImage(str(path))
    assert image.width() == 800 and image.height() == 450  # 16:9
    assert [p.name for p in tmp_path.iterdir() if "slide" in p.name] == ["slide.png"]  # no temporary file


@pytest.mark.parametrize("how", ["button", "Esc"])
def test_a_stopped_export_leaves_the_file_as_it_was(window, qtbot, tmp_path, held, how):
    release, reached = held
    path = tmp_path / "slide.png"
    path.write_bytes(b"the slide of last week")
    dialog = _dialog(window, qtbot, path)
    dialog.save_button.click()
    assert reached.wait(10)
    if how == "button":
        qtbot.mouseClick(dialog.cancel_button, QtCore.Qt.MouseButton.LeftButton)
    else:
        qtbot.keyClick(dialog, QtCore.Qt.Key.Key_Escape)
    assert dialog.isVisible() and not dialog.writing  # stopped at once; still open
    assert dialog.status.text() == "Stopped: slide.png was not written" and dialog.save_button.isEnabled()
    release.set()
    qtbot.waitUntil(lambda: not window.runs.running(export_dialog.EXPORT), timeout=10000)
    qtbot.wait(50)  # (the stopped job's late result, delivered and dropped)
    assert path.read_bytes() == b"the slide of last week" and dialog.written is None
    assert [p.name for p in tmp_path.iterdir() if "slide" in p.name] == ["slide.png"]  # no temporary file
    assert dialog.isVisible()
    dialog.reject()  # Cancel with nothing under way closes
    assert not dialog.isVisible()


def test_a_file_that_cannot_be_written_is_refused_with_the_reason(window, qtbot, tmp_path):
    dialog = _dialog(window, qtbot, tmp_path / "missing" / "slide.pdf")
    dialog.save_button.click()
    qtbot.waitUntil(lambda: not dialog.writing, timeout=10000)
    error = dialog.error.text()
    assert "No such file or directory" in error and str(tmp_path / "missing") in error
    assert dialog.isVisible() and dialog.written is None and dialog.save_button.isEnabled()
    dialog.path.setText(str(tmp_path / "slide.csv"))  # a text format: made at once, written in the job
    dialog.save_button.click()
    qtbot.waitUntil(lambda: dialog.written is not None, timeout=10000)
    expected = slide_text(window.state, dialog.options(), None, ChartFormat.CSV)
    assert dialog.written == tmp_path / "slide.csv" and (tmp_path / "slide.csv").read_text() == expected


def test_a_stop_that_comes_as_the_file_is_written_says_it_was_written_whole(window, qtbot, tmp_path,
                                                                           monkeypatch):
    """The stop is looked at once the picture is drawn; one that comes during the (atomic)
    write is too late, and the dialog says so rather than that nothing was written."""
    release, reached = threading.Event(), threading.Event()
    real = export_dialog.write_bytes_atomic

    def write_bytes_atomic(path, data):
        reached.set()
        assert release.wait(10)
        return real(path, data)

    monkeypatch.setattr(export_dialog, "write_bytes_atomic", write_bytes_atomic)
    path = tmp_path / "slide.svg"
    dialog = _dialog(window, qtbot, path)
    dialog.save_button.click()
    assert reached.wait(10)
    dialog.cancel_button.click()
    assert dialog.status.text() == "Stopped: slide.svg was not written"
    release.set()
    qtbot.waitUntil(lambda: "written whole" in dialog.status.text(), timeout=10000)
    assert path.read_text().startswith("<?xml") and dialog.isVisible() and dialog.written is None
