"""Panels that follow the state without slowing a drag down.

During a gesture (a roof or batch drag) the chart redraws on every move; a panel that also
redrew on every move would cost the chart its frame (the workload dock alone repaints a
dozen widgets). ``Follower`` calls a panel's refresh at once for ordinary changes, but
during a gesture at most every ``GESTURE_INTERVAL_MS`` (so totals still move with the
drag), and always once more when the gesture ends or is cancelled, so nothing stays stale.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6 import QtCore

from explorer.document import Topic

GESTURE_INTERVAL_MS = 500


class Follower(QtCore.QObject):
    def __init__(self, state, signals, refresh: Callable[[], None], parent: QtCore.QObject,
                 interval_ms: int = GESTURE_INTERVAL_MS) -> None:
        super().__init__(parent)
        self.state, self.refresh = state, refresh
        self._due = False  # a catch-up is waiting
        self._moved = False  # the state changed during this gesture
        self._in_gesture = state.in_gesture
        self._timer = QtCore.QTimer(self, singleShot=True, interval=interval_ms)
        self._timer.timeout.connect(self._catch_up)
        for signal in signals:
            signal.connect(self.changed)
        # a gesture began, ended or was cancelled
        unsubscribe = state.subscribe(Topic.HISTORY, self._on_history)
        self.destroyed.connect(lambda *_: unsubscribe())  # the state may outlive the panel

    def changed(self, *_args) -> None:
        if not self.state.in_gesture:
            self._due = self._moved = False
            self.refresh()
            return
        self._due = self._moved = True
        if not self._timer.isActive():
            self._timer.start()

    def _catch_up(self) -> None:
        if self._due:
            self._due = False
            self.refresh()

    def _on_history(self) -> None:
        ended = self._in_gesture and not self.state.in_gesture
        self._in_gesture = self.state.in_gesture
        if ended and self._moved:  # (a cancel has already shown the state it went back to)
            self._timer.stop()
            self._due = self._moved = False
            self.refresh()  # whatever the gesture left, in full (some panels skip the catch-ups)
