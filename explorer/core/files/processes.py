"""Is the process that wrote a file still running? Crash recovery asks this of autosave
locks and of measurement journals: a live instance's files are never taken for a crashed
one's, even when the process id has been reused."""

from __future__ import annotations

import os
from collections.abc import Mapping

from explorer.core.files.errors import DataFileError
from explorer.core.files.reading import read_text


def process_start(pid: int) -> str | None:
    """When process ``pid`` started (Linux: its start time in clock ticks since boot), so a
    reused process id is not taken for the instance that wrote a lock; None elsewhere."""
    try:
        stat = read_text(f"/proc/{pid}/stat", 64 << 10)
    except DataFileError:
        return None
    return stat.rsplit(")", 1)[-1].split()[19]  # field 22, after the command in parentheses


def running(pid: int, start: str | None) -> bool:
    """Is the process that wrote a lock (``pid``, started at ``start``) still running?"""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # someone else's process: it exists
    except OSError:
        return False
    return start is None or process_start(pid) in (None, start)


def this_process() -> dict[str, object]:
    """What a lock or journal records about the process writing it."""
    return {"pid": os.getpid(), "start": process_start(os.getpid())}


def recorded_alive(record: object) -> bool:
    """Is the process a ``this_process()`` record names still running? A record that cannot
    be read names no running process."""
    if not isinstance(record, Mapping):
        return False
    try:
        return running(int(record["pid"]), record.get("start"))
    except (ValueError, KeyError, TypeError, AttributeError):
        return False
