"""A run's measured points on disk as they arrive, so a crash keeps them.

A journal is a JSON Lines file beside where the run's results will go: the first line
describes the run (the results file's fields, without points) and the process writing it;
each further line is one measured point, written and flushed to disk as soon as it is
measured. When the run's results file has been written the journal is deleted. A journal
left behind by a process that is no longer running is an interrupted run: ``recover``
turns it into an ordinary results file (marked cancelled), dropping only a last line that
the crash cut short.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import secrets
import socket
import tempfile
from pathlib import Path
from typing import Any

from explorer.core.datafile import DataFileError
from explorer.core.processes import recorded_alive, this_process
from explorer.kernels.results import Point, Results, parse_json, read_point, results_from
from explorer.kernels.runner import results_of
from explorer.kernels.suites import resolve
from explorer.paths import user_file

SUFFIX = ".journal.jsonl"
RECOVERED_NOTE = "recovered from the journal of a run that was interrupted"


class Journal:
    """Append-only record of one run (raises OSError where ``folder`` cannot be written)."""

    def __init__(self, folder: str | Path, run: Results) -> None:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        name = f".run-{stamp}-{os.getpid()}-{secrets.token_hex(3)}{SUFFIX}"
        self.path = folder / name
        header = {k: v for k, v in run.to_dict().items() if k not in ("points", "ceilings")}
        self.stopped: str | None = None
        # The header is written under another name and renamed into place: no other
        # instance ever sees a journal without it. Private to the user (mode 0600), and held
        # under an exclusive lock for the whole run: a lock another process can take means
        # the writer is gone (pids say less across containers and shared home folders).
        partial = folder / f"{name}.new"
        descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        self._file = os.fdopen(descriptor, "w", encoding="utf-8")
        try:
            _lock(self._file)
            self._write({"journal": 1, "process": this_process(), "host": socket.gethostname(),
                         "run": header})
            os.replace(partial, self.path)
        except BaseException:
            self._file.close()
            partial.unlink(missing_ok=True)
            raise

    def _write(self, record: dict[str, Any]) -> None:
        self._file.write(json.dumps(record) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def add(self, point: Point) -> str | None:
        """Record one point. When the disk refuses it the journal stops, and the reason is
        returned once (the run goes on: its points are still kept in memory)."""
        if self.stopped:
            return None
        try:
            self._write(point.to_dict())
        except OSError as exc:
            self.stopped = exc.strerror or str(exc)
            self.close()
            return self.stopped
        return None

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._file.close()

    def discard(self) -> None:
        """The results are safe elsewhere: the journal goes."""
        self.close()
        with contextlib.suppress(OSError):
            self.path.unlink(missing_ok=True)


def journal_folders() -> list[Path]:
    """Where a run's journal goes when no other folder is asked for: the data folder's
    results, else the temporary folder."""
    return [user_file("results"), Path(tempfile.gettempdir())]


def open_journal(folders: list[Path], backend, suites, reference) -> Journal | None:
    """A journal for a run of ``suites`` (names and preset, as ``run`` takes them) in the
    first of ``folders`` that can be written (None: none can). Raises UnknownSuiteError."""
    header = results_of(backend, *resolve(list(suites), "quick"), [], reference, cancelled=True)
    for folder in folders:
        try:
            return Journal(folder, header)
        except OSError:
            continue
    return None


def recover(path: str | Path) -> Results:
    """The results an interrupted run's journal holds (raises DataFileError when even its
    first line cannot be read)."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        raise DataFileError(path, f"cannot be read: {exc.strerror or exc}") from exc
    try:
        header = parse_json(lines[0])["run"]
    except (IndexError, ValueError, KeyError, TypeError) as exc:
        raise DataFileError(path, "does not start with a run's description") from exc
    points, lost = [], 0
    for number, line in enumerate(lines[1:], start=2):
        try:
            points.append(read_point(parse_json(line), path, f"line {number}"))
        except (ValueError, DataFileError):
            lost += 1  # a line the crash cut short
    note = RECOVERED_NOTE + (f" ({lost} unreadable line{'s' * (lost != 1)} dropped)" if lost else "")
    data = {**header, "points": [p.to_dict() for p in points], "cancelled": True,
            "notes": [*header.get("notes", []), note]} if isinstance(header, dict) else header
    return results_from(data, path)


def _lock(handle, blocking: bool = True) -> bool:
    """An exclusive advisory lock on an open file (True: held); where the system has none
    (Windows), True, and liveness falls back to the process id."""
    try:
        import fcntl
    except ImportError:
        return True
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
    except BlockingIOError:
        return False
    return True


def _writer_alive(path: Path) -> bool:
    """Whether the process writing ``path`` still runs: it holds the journal's lock, or it
    runs on another host or is another user's (neither can be told from here: left alone)."""
    try:
        getuid = getattr(os, "getuid", None)  # (Windows has no file owners to compare)
        if getuid is not None and path.stat().st_uid != getuid():
            return True
        with open(path, encoding="utf-8") as handle:
            if not _lock(handle, blocking=False):
                return True
            record = parse_json(handle.readline())
            if record.get("host", socket.gethostname()) != socket.gethostname():
                return True
            return recorded_alive(record.get("process"))
    except (OSError, ValueError, AttributeError):
        return False


def leftovers(folder: str | Path) -> list[Path]:
    """Journals in ``folder`` whose run was interrupted (their writer is not running)."""
    folder = Path(folder)
    found = sorted(folder.glob(f".run-*{SUFFIX}")) if folder.is_dir() else []
    return [path for path in found if not _writer_alive(path)]


def recover_all(*folders: str | Path) -> list[tuple[Path, Results]]:
    """Turn every interrupted run's journal in ``folders`` into a results file beside it;
    returns the files written and their results. A journal that cannot be read or whose
    results cannot be written stays where it is, for the next try."""
    recovered = []
    for journal in (path for folder in dict.fromkeys(map(Path, folders)) for path in leftovers(folder)):
        try:
            results = recover(journal)
            if not results.points:  # stopped before its first point: nothing to keep
                with contextlib.suppress(OSError):
                    journal.unlink(missing_ok=True)
                continue
            target = journal.with_name(journal.name.removeprefix(".").removesuffix(SUFFIX)
                                       + "-recovered.json")
            results.save(target)
            journal.unlink(missing_ok=True)
        except (DataFileError, OSError):
            continue  # left for the next try; the rest is recovered
        recovered.append((target, results))
    return recovered
