"""The Layouts dialog: the ranked table, the chart with its Pareto front, applying a layout."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from PySide6 import QtCore

from explorer.ui.layouts_dialog import ROWS_MEASURED, LayoutRows, LayoutsDialog, pareto


def searched(qtbot, dialog) -> None:
    """Wait for the dialog's search (a job) to be shown."""
    qtbot.waitUntil(lambda: not dialog.searching, timeout=10000)


def test_the_pareto_front_keeps_points_no_other_beats_on_both_axes():
    points = [(1, 5), (2, 4), (3, 1), (1.5, 3), (2, 2)]
    assert pareto(points) == [0, 1, 2]  # (1.5, 3) loses to (2, 4); (2, 2) to (2, 4)


def test_the_dialog_ranks_layouts_and_applies_the_chosen_one(window, qtbot):
    state = window.state
    state.set_model("llama-3-70b")
    state.set_params(phase="decode", batch=8)
    dialog = LayoutsDialog(state, window, window.runs)
    qtbot.addWidget(dialog)
    searched(qtbot, dialog)
    assert dialog.devices.value() == 8 and dialog.rows.rowCount() == 10
    assert dialog.cell(0, 1) == "TP 8" and "Best: <b>TP 8</b>" in dialog.summary.text()
    assert dialog.cell(9, 2) == "no"  # DP 8 does not fit, ranked last, in grey
    foreground = QtCore.Qt.ItemDataRole.ForegroundRole
    assert dialog.rows.data(dialog.rows.index(9, 2), foreground) == LayoutRows.GREY
    assert dialog.rows.data(dialog.rows.index(0, 2), foreground) is None
    assert len(dialog.points.points()) == 10 and dialog.front.xData is not None
    dialog.table.selectRow(1)  # TP 4 × DP 2
    assert dialog.selected().name == "TP 4 × DP 2"
    dialog.apply()
    assert (state.params.tp, state.params.dp) == (4, 2)
    state.undo()
    assert (state.params.tp, state.params.dp) == (1, 1)


def test_a_training_step_ranks_its_options_and_the_goal_reorders(window, qtbot):
    state = window.state
    state.set_model("llama-3-8b")
    state.set_params(phase="train", batch=8, seq=2048)
    dialog = LayoutsDialog(state, window)
    qtbot.addWidget(dialog)
    dialog.devices.setValue(4)
    searched(qtbot, dialog)
    dialog.goal.setCurrentText("fit")  # ranked again at once
    memory = [c.memory_bytes for c in dialog.candidates if c.fits]
    assert memory == sorted(memory)
    assert dialog.plot.getPlotItem().getAxis("bottom").labelText == "memory a device (B)"
    dialog.apply()
    assert state.params.split.devices == 4 and state.params.phase == "train"
    assert (state.params.tp, state.params.pp, state.params.dp) == tuple(
        dict(dialog.candidates[0].choice)[k] for k in ("tp", "pp", "dp"))


@pytest.fixture
def held(monkeypatch):
    """A search on 64 devices held after its first layout until the test lets it go
    (``release``); a stop in between is seen by the search's next progress report."""
    import explorer.ui.layouts_dialog as module

    real, release, reached = module.layouts, threading.Event(), threading.Event()

    def layouts(model, device, devices, params, progress=None):
        if devices == 64:
            progress(1, 2)
            reached.set()
            assert release.wait(10)
            if progress(1, 2) is False:  # stopped
                return []
        return real(model, device, devices, params, progress)

    monkeypatch.setattr(module, "layouts", layouts)
    return release, reached


def _decode_dialog(window, qtbot) -> LayoutsDialog:
    window.state.set_model("llama-3-70b")
    window.state.set_params(phase="decode", batch=8)
    dialog = LayoutsDialog(window.state, window, window.runs)
    qtbot.addWidget(dialog)
    dialog.show()
    searched(qtbot, dialog)
    assert dialog.rows.rowCount() == 10 and dialog.cell(0, 1) == "TP 8"
    return dialog


def test_a_search_runs_in_the_background_with_its_progress(window, qtbot, held):
    release, reached = held
    dialog = _decode_dialog(window, qtbot)
    dialog.devices.setValue(64)
    assert reached.wait(10)  # costing, and the window is free meanwhile
    fired: list[int] = []
    QtCore.QTimer.singleShot(10, lambda: fired.append(1))
    qtbot.waitUntil(lambda: bool(fired), timeout=2000)
    assert dialog.searching and dialog.stop_button.isVisible() and dialog.bar.isVisible()
    qtbot.waitUntil(lambda: dialog.bar.value() == 1 and dialog.bar.maximum() == 2, timeout=2000)
    assert dialog.summary.text() == "Costing the layouts of 64 devices…"
    assert dialog.rows.rowCount() == 10  # the 8 devices' layouts, until the search is done
    release.set()
    searched(qtbot, dialog)
    assert "layouts of 64 devices" in dialog.summary.text() and not dialog.stop_button.isVisible()
    assert dialog.rows.rowCount() == len(dialog.candidates) == 28  # (DP 64, PP 2 × DP 32, …)
    splits: list[dict[str, Any]] = [dict(c.choice) for c in dialog.candidates]
    assert {s["tp"] * s["pp"] * s["dp"] for s in splits} == {64}


@pytest.mark.parametrize("how", ["button", "Esc"])
def test_a_stopped_search_leaves_the_layouts_shown_before(window, qtbot, held, how):
    release, reached = held
    dialog = _decode_dialog(window, qtbot)
    names = [c.name for c in dialog.candidates]
    dialog.devices.setValue(64)
    assert reached.wait(10)
    if how == "button":
        qtbot.mouseClick(dialog.stop_button, QtCore.Qt.MouseButton.LeftButton)
    else:
        qtbot.keyClick(dialog, QtCore.Qt.Key.Key_Escape)
    release.set()
    qtbot.waitUntil(lambda: not window.runs.running("layouts"), timeout=5000)
    qtbot.wait(50)  # (the stopped search's late result, delivered and dropped)
    assert dialog.isVisible() and not dialog.searching and dialog.devices.value() == 8
    assert [c.name for c in dialog.candidates] == names and dialog.rows.rowCount() == 10
    assert dialog.summary.text().startswith("10 layouts of 8 devices") and "stopped" in dialog.summary.text()
    qtbot.keyClick(dialog, QtCore.Qt.Key.Key_Escape)  # with no search, Esc closes
    assert not dialog.isVisible()


def test_hundreds_of_layouts_are_shown_with_only_the_rows_in_sight_written(window, qtbot):
    """DeepSeek-V3 on 16,384 devices has hundreds of layouts (919 today, trimmed pipelines and
    two-hop dispatch tried): the table writes the rows it shows and those its columns are
    sized from, not all of them, on the GUI thread."""
    window.state.set_model("deepseek-v3")
    window.state.set_params(phase="decode")
    dialog = LayoutsDialog(window.state, window, window.runs)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.devices.setValue(16384)
    searched(qtbot, dialog)
    found = len(dialog.candidates)
    assert dialog.rows.rowCount() == found and found > 500
    assert len(dialog.rows._cells) <= ROWS_MEASURED + 40
    assert dialog.cell(found - 1, 0) == str(found) and dialog.cell(0, 1) == dialog.candidates[0].name


def test_a_search_reports_its_progress_a_few_times_a_second_and_at_its_end(state, monkeypatch):
    """A report a layout would repaint the bar once a layout (on X11, each repaint a trip to
    the server): the search reports at most every ``PROGRESS_EVERY_S``, and its last one."""
    import explorer.ui.layouts_dialog as module
    from explorer.kernels.timing import CancelToken

    def layouts(model, device, devices, params, progress=None):
        for done in range(1, 501):
            progress(done, 500)
        return []

    monkeypatch.setattr(module, "layouts", layouts)
    reports: list = []
    found = module.search_in_job(state, 64)(CancelToken(), lambda kind, report: reports.append(report))
    assert found == module.Search(64, [])
    assert reports[0] == (1, 500) and reports[-1] == (500, 500) and len(reports) < 10


def test_the_search_lets_the_gui_thread_in_between_layouts(monkeypatch, state):
    """Each layout costed calls the job's ``GilShare`` (which sleeps every 5 ms): a search in
    Python otherwise keeps the GUI thread from Python's lock for hundreds of ms."""
    import explorer.ui.layouts_dialog as module
    from explorer.kernels.timing import CancelToken

    calls = []

    class Counting:
        def __call__(self):
            calls.append(1)
            return False

    def layouts(model, device, devices, params, progress=None):
        for done in range(1, 31):
            progress(done, 30)
        return []

    monkeypatch.setattr(module, "GilShare", Counting)
    monkeypatch.setattr(module, "layouts", layouts)
    module.search_in_job(state, 64)(CancelToken(), lambda kind, report: None)
    assert len(calls) == 30
