"""Panels follow the state at once, but during a drag at most every interval and once
more when it ends: the chart keeps the frame, nothing stays stale."""

from PySide6 import QtCore

from explorer.core.units import format_time
from explorer.ui.follow import Follower

from . import mouse
from .test_drags import on_bandwidth_roof


def follower(state, qtbot, interval_ms=10_000):
    calls = []
    parent = QtCore.QObject()
    Follower(state, (state.sig_workload_changed,), lambda: calls.append(state.params.batch), parent,
             interval_ms=interval_ms)
    return calls, parent


def test_outside_a_gesture_every_change_is_shown_at_once(state, qtbot):
    calls, _parent = follower(state, qtbot)
    state.set_params(batch=2)
    state.set_params(batch=3)
    assert calls == [2, 3]


def test_a_gesture_is_shown_once_at_its_end_or_cancel(state, qtbot):
    calls, _parent = follower(state, qtbot)
    state.begin_gesture("drag")
    for batch in range(2, 12):
        state.set_params(batch=batch)
    assert calls == []  # the interval has not passed: no panel work during the moves
    state.end_gesture()
    assert calls == [11]
    state.begin_gesture("drag")
    state.set_params(batch=20)
    state.cancel_gesture()
    assert calls == [11, 11]  # cancelled: shown as it was again


def test_during_a_long_gesture_panels_catch_up_every_interval(state, qtbot):
    calls, _parent = follower(state, qtbot, interval_ms=30)
    state.begin_gesture("drag")
    state.set_params(batch=5)
    qtbot.waitUntil(lambda: calls == [5], timeout=2000)
    state.set_params(batch=6)
    state.end_gesture()
    assert calls == [5, 6]


def test_after_a_roof_drag_the_totals_show_the_final_state(window):
    plot = window.chart
    start = on_bandwidth_roof(plot)
    mouse.drag(plot, start, QtCore.QPointF(start.x(), start.y() - 60))
    totals = window.state.analysis().totals
    assert window.state.session.what_if("h100-sxm").bandwidth_scale > 1.5
    assert f"{format_time(totals.time_s)} per step" in window.workload_panel.totals.text()
