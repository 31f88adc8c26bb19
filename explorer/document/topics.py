"""What the document notifies about, and how listeners subscribe: plain callbacks per topic
(``explorer.state`` turns them into Qt signals)."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any


class Topic(StrEnum):
    """What a notification is about; listeners subscribe to one topic each."""

    HARDWARE = "hardware"  # devices shown, their order, or what-ifs
    WORKLOAD = "workload"  # model or parameters
    PRECISIONS = "precisions"
    RESULTS = "results"  # measurement files or a profile shown
    SELECTION = "selection"  # the new selection: an op, a roof or nothing
    LIVE = "live"  # points of the kernel run in progress
    CATALOG = "catalog"  # devices were added
    SESSION = "session"  # anything above (for saving and autosave)
    MESSAGE = "message"  # what the last action did
    HISTORY = "history"  # undo history: a step, or a gesture began, ended or was cancelled


TOPICS = tuple(Topic)


class Notifier:
    """Callbacks by topic. The class using it sets ``self._listeners`` to a
    ``defaultdict(list)`` (no ``__init__`` here: the Qt state mixes it with QObject)."""

    _listeners: dict[Topic, list[Callable[..., Any]]]

    def subscribe(self, topic: Topic | str, callback: Callable[..., Any]) -> Callable[[], None]:
        """Call ``callback`` on every ``topic`` notification; returns the unsubscribe function."""
        if topic not in TOPICS:
            raise ValueError(f"unknown topic {topic!r} (known: {', '.join(TOPICS)})")
        topic = Topic(topic)
        self._listeners[topic].append(callback)
        return lambda: self._listeners[topic].remove(callback)

    def _emit(self, topic: Topic, *args: Any) -> None:
        for callback in list(self._listeners[topic]):
            callback(*args)
