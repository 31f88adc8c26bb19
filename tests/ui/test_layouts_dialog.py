"""The Layouts dialog: the ranked table, the chart with its Pareto front, applying a layout."""

from __future__ import annotations

from explorer.ui.layouts_dialog import LayoutsDialog, pareto


def test_the_pareto_front_keeps_points_no_other_beats_on_both_axes():
    points = [(1, 5), (2, 4), (3, 1), (1.5, 3), (2, 2)]
    assert pareto(points) == [0, 1, 2]  # (1.5, 3) loses to (2, 4); (2, 2) to (2, 4)


def test_the_dialog_ranks_layouts_and_applies_the_chosen_one(window, qtbot):
    state = window.state
    state.set_model("llama-3-70b")
    state.set_params(phase="decode", batch=8)
    dialog = LayoutsDialog(state, window)
    qtbot.addWidget(dialog)
    assert dialog.devices.value() == 8 and dialog.table.rowCount() == 10
    assert dialog.table.item(0, 1).text() == "TP 8" and "Best: <b>TP 8</b>" in dialog.summary.text()
    assert dialog.table.item(9, 2).text() == "no"  # DP 8 does not fit, ranked last
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
    dialog.goal.setCurrentText("fit")
    memory = [c.memory_bytes for c in dialog.candidates if c.fits]
    assert memory == sorted(memory)
    assert dialog.plot.getPlotItem().getAxis("bottom").labelText == "memory a device (B)"
    dialog.apply()
    assert state.params.split.devices == 4 and state.params.phase == "train"
    assert (state.params.tp, state.params.pp, state.params.dp) == tuple(
        dict(dialog.candidates[0].choice)[k] for k in ("tp", "pp", "dp"))
