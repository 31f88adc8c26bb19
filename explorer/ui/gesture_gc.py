"""No garbage collection in the middle of a drag. A drag makes and drops thousands of
objects a second (each frame's chart description); none of them form reference cycles
(a 4-second roof drag of four devices leaves nothing for the collector to free), so the
collector's passes during a drag, 1–4 ms every fifteenth frame or so, only make those
frames late. It is paused while a gesture of the window's state lasts and resumes when
the gesture ends or is cancelled, when the window goes away, and after ``LONGEST_PAUSE_MS``
whatever happens (a gesture whose end never came must not leave it off)."""

from __future__ import annotations

import gc

from PySide6 import QtCore

from explorer.document import Topic

LONGEST_PAUSE_MS = 30_000


def pause_collection_in_gestures(state, owner: QtCore.QObject) -> None:
    """Pause the collector while ``state`` is in a gesture, for as long as ``owner`` lives."""
    limit = QtCore.QTimer(owner, singleShot=True, interval=LONGEST_PAUSE_MS)
    limit.timeout.connect(gc.enable)

    def follow() -> None:
        if state.in_gesture:
            gc.disable()
            limit.start()
        else:
            limit.stop()
            gc.enable()

    unsubscribe = state.subscribe(Topic.HISTORY, follow)

    def release(*_args) -> None:
        unsubscribe()
        gc.enable()

    owner.destroyed.connect(release)
