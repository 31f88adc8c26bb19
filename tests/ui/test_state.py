"""AppState: the document's notifications as Qt signals, its history as undo actions."""

from PySide6 import QtWidgets

from explorer.core.model.session import WhatIf


def test_notifications_become_signals(state, qtbot):
    with qtbot.waitSignal(state.sig_workload_changed):
        state.set_params(batch=8)
    with qtbot.waitSignal(state.sig_hardware_changed):
        state.set_what_if("h100-sxm", WhatIf(bandwidth_scale=2.0))
    with qtbot.waitSignal(state.sig_selection_changed) as blocker:
        state.select_op("q_proj")
    assert blocker.args[0].name == "q_proj"
    with qtbot.waitSignal(state.sig_hardware_changed):
        state.undo_stack.undo()  # the what-if
    assert state.undo_stack.count() == 2 and state.params.batch == 8


def test_undo_actions_follow_the_history(state, qtbot):
    parent = QtWidgets.QWidget()
    qtbot.addWidget(parent)
    undo, redo = state.undo_stack.createUndoAction(parent), state.undo_stack.createRedoAction(parent)
    assert not undo.isEnabled() and not redo.isEnabled()
    state.set_params(batch=8)
    assert undo.isEnabled() and undo.text() == "&Undo Set batch 8"
    state.begin_gesture("Drag the batch")
    assert not undo.isEnabled()  # not in the middle of a drag
    state.cancel_gesture()
    undo.trigger()
    assert state.params.batch == 1 and redo.isEnabled() and redo.text() == "&Redo Set batch 8"
    cleans = []
    state.undo_stack.cleanChanged.connect(cleans.append)
    redo.trigger()
    assert cleans == [False] and not state.undo_stack.isClean()
    state.undo_stack.setClean()
    assert cleans == [False, True]
