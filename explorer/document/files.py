"""The files the app keeps about sessions: recent files, and crash recovery.

Recovery: every running instance has an id and two files in the data folder's
``autosave/``: ``<id>.lock`` (its process id and start time) and ``<id>.yaml`` (its
session). ``Autosaver`` decides when to write the session: once changes pause for
``DEBOUNCE_S``, and at the latest ``MAX_INTERVAL_S`` after the first unsaved change while
changes continue, so at most ``MAX_INTERVAL_S`` plus one tick of work is ever lost. A clean
exit deletes both files. On start, an instance whose lock names a process that is no longer
running has crashed: its autosave is offered, and nothing of it is touched until the user
has answered; a declined one is kept as ``declined-<id>.yaml`` until the next clean exit.
A restored one is removed only once this instance's own autosave holds it on disk (if that
cannot be written, at this instance's clean exit), so a crash right after a restore loses
nothing. Locks and temporary files of instances that are gone and left no session are
removed at start-up. Every write is atomic and every read bounded (``core.atomic``,
``core.reading``): two instances never see each other's half-written files, and nothing put
in the folder (a pipe, a huge file) can stop the app.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from explorer.core.files.atomic import remove_stale, write_text_atomic
from explorer.core.files.datafile import DataFileError
from explorer.core.files.processes import recorded_alive, this_process
from explorer.core.files.reading import read_text
from explorer.core.model.session import Session
from explorer.paths import user_file

LOCK_BYTES = 4096  # a lock holds a process id and a start time
DEBOUNCE_S = 1.0
MAX_INTERVAL_S = 4.0  # with a tick every second: at most 5 s of work lost
MAX_RECENT = 8


@dataclass(frozen=True)
class Crashed:
    """An instance that did not close properly, and the session it last autosaved (when)."""

    instance: str
    autosave: Path
    saved_at: float


class Recovery:
    def __init__(self, folder: str | Path | None = None) -> None:
        self.folder = Path(folder) if folder is not None else user_file("autosave")
        self.instance = f"{os.getpid()}-{os.urandom(3).hex()}"
        self._adopted: list[Crashed] = []  # restored, removed once this instance's copy is safe

    @property
    def autosave_path(self) -> Path:
        return self.folder / f"{self.instance}.yaml"

    @property
    def lock_path(self) -> Path:
        return self.folder / f"{self.instance}.lock"

    def claim(self) -> None:
        """Mark this instance as running (raises OSError where the folder cannot be written)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        write_text_atomic(self.lock_path, json.dumps(this_process()))

    def crashed(self) -> list[Crashed]:
        """Other instances that stopped without closing and left a session, newest first."""
        found = []
        adopted = {c.instance for c in self._adopted}
        for autosave in self.folder.glob("*.yaml") if self.folder.is_dir() else ():
            instance = autosave.stem
            if instance in (self.instance, *adopted) or instance.startswith("declined-"):
                continue
            lock = self.folder / f"{instance}.lock"
            if lock.exists() and self._alive(lock):
                continue
            try:
                found.append(Crashed(instance, autosave, autosave.stat().st_mtime))
            except OSError:
                continue  # taken by another instance meanwhile
        return sorted(found, key=lambda c: c.saved_at, reverse=True)

    @staticmethod
    def _alive(lock: Path) -> bool:
        try:
            return recorded_alive(json.loads(read_text(lock, LOCK_BYTES)))
        except (DataFileError, ValueError, RecursionError):
            return False  # an unreadable lock belongs to no running instance

    def tidy(self) -> list[Path]:
        """Remove what gone instances left that holds no session: a lock without an
        autosave beside it, and half-written temporary files. Returns what was removed."""
        removed = remove_stale(self.folder)
        for lock in self.folder.glob("*.lock") if self.folder.is_dir() else ():
            orphan = lock.stem != self.instance and not lock.with_suffix(".yaml").exists()
            if orphan and not self._alive(lock):
                with contextlib.suppress(OSError):
                    lock.unlink()
                    removed.append(lock)
        return removed

    def save(self, session: Session) -> None:
        """Autosave ``session`` (raises OSError); once it is on disk, the sessions this
        instance restored are held by it, and their crashed copies go."""
        session.save(self.autosave_path)
        for crashed in list(self._adopted):
            self._forget(crashed)

    def moved_to(self, folder: str | Path, session: Session) -> Recovery:
        """This instance's recovery in ``folder`` from now on: claimed there and holding
        ``session`` before anything here is released (raises OSError and changes nothing
        when ``folder`` cannot take it)."""
        moved = Recovery(folder)
        moved.claim()
        moved.save(session)
        self.release()  # the restored sessions' crashed copies go only now
        return moved

    def discard(self) -> None:
        """This instance's session holds nothing a crash could lose: no autosave of it."""
        with contextlib.suppress(OSError):
            self.autosave_path.unlink(missing_ok=True)

    def restored(self, crashed: Crashed, session: Session) -> str | None:
        """The user took ``crashed``'s session: this instance's autosave takes it over (on
        disk, flushed) before ``crashed``'s files go. Where that write fails they stay until
        this instance's first autosave that works (or its clean exit), and the system's
        reason is returned."""
        self._adopted.append(crashed)
        try:
            self.save(session)
        except OSError as exc:
            return exc.strerror or str(exc)
        return None

    def _forget(self, crashed: Crashed) -> None:
        for path in (crashed.autosave, self.folder / f"{crashed.instance}.lock"):
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)
        self._adopted.remove(crashed)

    def declined(self, crashed: Crashed) -> None:
        """The user said no: keep the session aside until this instance exits cleanly (where
        it cannot be moved, it stays, and is offered again at the next start)."""
        with contextlib.suppress(OSError):
            crashed.autosave.replace(self.folder / f"declined-{crashed.instance}.yaml")
            (self.folder / f"{crashed.instance}.lock").unlink(missing_ok=True)

    def release(self) -> None:
        """A clean exit: this instance's files and any declined sessions go (a folder that
        cannot be read or written has none to remove)."""
        for crashed in list(self._adopted):
            self._forget(crashed)
        declined = self.folder.glob("declined-*.yaml") if self.folder.is_dir() else ()
        for path in (self.autosave_path, self.lock_path, *declined):
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)


class Autosaver:
    """When to save: ``debounce_s`` after the last change, and at the latest
    ``max_interval_s`` after the first unsaved one while changes continue. ``tick`` is
    called regularly (every second); ``clock`` is injectable for tests."""

    def __init__(self, save: Callable[[], None], debounce_s: float = DEBOUNCE_S,
                 max_interval_s: float = MAX_INTERVAL_S, clock: Callable[[], float] = time.monotonic) -> None:
        self._save, self._clock = save, clock
        self.debounce_s, self.max_interval_s = debounce_s, max_interval_s
        self._first: float | None = None  # the first change not saved yet
        self._last = 0.0

    @property
    def dirty(self) -> bool:
        return self._first is not None

    def changed(self) -> None:
        now = self._clock()
        if self._first is None:
            self._first = now
        self._last = now

    def tick(self) -> bool:
        """Save if it is due; True if it saved."""
        if self._first is None:
            return False
        now = self._clock()
        if now - self._last < self.debounce_s and now - self._first < self.max_interval_s:
            return False
        return self.flush()

    def flush(self) -> bool:
        """Save now if anything changed (a failed save stays due and raises OSError)."""
        if self._first is None:
            return False
        self._save()
        self._first = None
        return True


class RecentFiles:
    """The sessions opened or saved last, newest first, kept in the data folder."""

    def __init__(self, path: str | Path | None = None, limit: int = MAX_RECENT) -> None:
        self.path = Path(path) if path is not None else user_file("recent.json")
        self.limit = limit

    def list(self) -> list[str]:
        try:
            value = json.loads(read_text(self.path, 64 << 10))
        except (DataFileError, ValueError, RecursionError):
            return []
        return [v for v in value if isinstance(v, str)][: self.limit] if isinstance(value, list) else []

    def remember(self, path: str | Path) -> None:
        """Put ``path`` first (raises OSError where the data folder cannot be written)."""
        entries = [str(path), *(p for p in self.list() if p != str(path))][: self.limit]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(self.path, json.dumps(entries, indent=1))
