"""A profile imported from the menu or by a drop is read off the GUI thread: the window
keeps handling events while it reads, the status bar shows the share read with a Cancel
button, Esc or the button stop it and leave the chart as it was, and a broken file is
refused by name once the read has failed."""

from __future__ import annotations

import json
import threading

import pytest
from PySide6 import QtCore, QtWidgets

from tests.profiles.test_kineto import trace
from tests.profiles.test_ncu import raw_page
from tests.ui.drops import drop_file


@pytest.fixture
def trace_file(tmp_path):
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(trace()))
    return path


def choose(monkeypatch, path) -> None:
    monkeypatch.setattr(QtWidgets.QFileDialog, "getOpenFileName", lambda *args, **kwargs: (str(path), ""))


@pytest.fixture
def held(monkeypatch):
    """The read held half-way until the test lets it go (``release``): a cancel in between
    is seen by the read's next progress report."""
    import explorer.profiles.reading as reading

    real, release, reached = reading.read_profile, threading.Event(), threading.Event()

    def read_profile(path, progress=None):
        progress(0.5)
        reached.set()
        assert release.wait(10)
        progress(0.75)  # (raises when cancelled)
        return real(path, progress)

    monkeypatch.setattr(reading, "read_profile", read_profile)
    return release, reached


def test_the_menu_reads_the_profile_in_the_background_with_progress(window, qtbot, trace_file, monkeypatch,
                                                                    held):
    release, reached = held
    choose(monkeypatch, trace_file)
    shares: list[float] = []
    window.runs.sig_progress.connect(lambda job, share: shares.append(share) if job == "profile" else None)
    height, page = window.statusBar().height(), window.chart.page()
    window.act_import_profile.trigger()
    assert reached.wait(10)  # the read is under way, and the window is free meanwhile
    importing = window.profile_import
    assert importing.running and window.state.profiles == ()
    qtbot.waitUntil(lambda: importing.bar.value() == 500, timeout=2000)
    assert importing.cancel_button.isVisible() and "trace.json: 50%" in importing.label.text()
    assert window.statusBar().height() == height  # the chart does not jump while it reads
    release.set()
    qtbot.waitUntil(lambda: bool(window.state.profiles), timeout=5000)
    assert window.state.profiles[0].tool.startswith("PyTorch profiler")
    assert not importing.running and not importing.bar.isVisible() and not importing.cancel_button.isVisible()
    assert window.chart.page() == page
    assert shares[:2] == [0.5, 0.75] and shares[-1] == 1.0 and shares == sorted(shares)
    window.state.undo()  # one undo step, as a profile read at once
    assert window.state.profiles == ()


@pytest.mark.parametrize("how", ["button", "Esc"])
def test_a_cancelled_import_leaves_the_chart_as_it_was(window, qtbot, trace_file, monkeypatch, held, how):
    release, reached = held
    shown = []
    monkeypatch.setattr(QtWidgets.QMessageBox, "critical", lambda *args: shown.append(args[2]))
    before = window.state.session
    window.profile_import.start(trace_file)
    assert reached.wait(10)
    if how == "button":
        qtbot.mouseClick(window.profile_import.cancel_button, QtCore.Qt.MouseButton.LeftButton)
    else:
        qtbot.keyClick(window, QtCore.Qt.Key.Key_Escape)
    assert "Cancelling" in window.profile_import.label.text()
    release.set()
    qtbot.waitUntil(lambda: not window.profile_import.running, timeout=5000)
    assert window.state.profiles == () and window.state.session == before and not shown
    assert "cancelled: the chart is as it was" in window.statusBar().currentMessage()


def test_esc_is_the_import_s_only_while_it_runs(window, trace_file):
    assert not window.profile_import.escape.isEnabled()
    window.presentation.enter(full_screen=False)
    window.profile_import.start(trace_file)  # presenting: Esc still leaves presentation mode
    assert not window.profile_import.escape.isEnabled()
    window.presentation.leave()


def test_a_dropped_broken_profile_is_refused_by_name_after_the_read(window, qtbot, tmp_path, monkeypatch):
    shown = []
    monkeypatch.setattr(QtWidgets.QMessageBox, "critical", lambda *args: shown.append(args[2]))
    path = tmp_path / "run.csv"
    path.write_text(raw_page().replace('"10.00"', '"ten"'))
    drop_file(window, path)
    qtbot.waitUntil(lambda: bool(shown), timeout=5000)
    assert f"{path}: entry 'kernel ID 0': field 'gpu__time_duration.sum': 'ten' is not a number" in shown[0]
    assert window.state.profiles == () and not window.profile_import.running
