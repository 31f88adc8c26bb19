"""AppState: the only mutation API, signals, undo steps, gestures."""

import pytest

from explorer.core.registry import UnknownIdError
from explorer.core.session import WhatIf
from explorer.core.workload import WorkloadError


def test_setters_emit_and_undo(state, qtbot):
    with qtbot.waitSignal(state.sig_workload_changed):
        state.set_params(batch=8)
    assert state.params.batch == 8 and state.undo_stack.count() == 1
    state.set_params(batch=8)  # no change: no step, no signal
    assert state.undo_stack.count() == 1
    with qtbot.waitSignal(state.sig_workload_changed):
        state.undo_stack.undo()
    assert state.params.batch == 1
    state.undo_stack.redo()
    assert state.params.batch == 8


def test_invalid_parameters_raise_and_change_nothing(state):
    with pytest.raises(WorkloadError, match="batch must be at least 1"):
        state.set_params(batch=0)
    assert state.params.batch == 1 and state.undo_stack.count() == 0


def test_devices(state, qtbot):
    messages = []
    state.sig_message.connect(messages.append)
    state.set_devices(["h100-sxm", "xeon-platinum-8480", "l4", "t4"])
    state.toggle_device("b200", True)  # a fifth is refused with a reason
    assert "b200" not in state.session.hardware and "at most 4" in messages[-1]
    state.set_devices([])
    assert "at least one device" in messages[-1]
    state.set_primary("t4")
    assert state.session.hardware[0] == "t4" and state.primary.id == "t4"
    assert state.analysis().hardware.id == "t4"
    with pytest.raises(UnknownIdError):
        state.set_devices(["h100"])


def test_gesture_is_one_undo_step_and_can_be_cancelled(state, qtbot):
    state.begin_gesture("Drag")
    for scale in (1.1, 1.3, 1.7):
        with qtbot.waitSignal(state.sig_hardware_changed):
            state.set_what_if("h100-sxm", WhatIf(bandwidth_scale=scale))
    assert state.undo_stack.count() == 0
    assert state.primary.bandwidth_bytes_per_s == pytest.approx(1.7 * 3.35e12)
    state.end_gesture()
    assert state.undo_stack.count() == 1
    state.undo_stack.undo()
    assert not state.session.what_if("h100-sxm").active
    state.begin_gesture("Drag")
    state.set_params(batch=64)
    state.cancel_gesture()
    assert state.params.batch == 1 and state.undo_stack.count() == 1  # the redo step remains


def test_analysis_is_cached_and_follows_what_ifs(state):
    first = state.analysis()
    assert state.analysis() is first
    state.set_what_if("h100-sxm", WhatIf(bandwidth_scale=2.0))
    faster = state.analysis()
    assert faster.totals.time_s == pytest.approx(first.totals.time_s / 2, rel=0.01)
    state.reset_what_ifs()
    assert state.analysis().totals.time_s == pytest.approx(first.totals.time_s)


def test_selection_is_not_an_edit(state, qtbot):
    with qtbot.waitSignal(state.sig_selection_changed):
        state.select_op("q_proj")
    assert state.session.selected_op == "q_proj" and state.undo_stack.count() == 0
    state.set_model("gpt2")
    assert state.session.selected_op is None  # the old op does not exist in the new model
