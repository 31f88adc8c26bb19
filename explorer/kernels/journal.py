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
import socket
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from explorer.core.files.datafile import DataFileError
from explorer.core.files.fallback import is_temporary
from explorer.core.files.processes import recorded_alive, this_process
from explorer.core.files.reading import open_regular, read_text
from explorer.kernels.results import MAX_RESULTS_BYTES, Point, Results, parse_json, read_point, results_from
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
        name = f".run-{stamp}-{os.getpid()}-{os.urandom(3).hex()}{SUFFIX}"
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

    def settle(self, saved: Path | None) -> bool:
        """The run's results were written to ``saved`` (None: nowhere): the journal goes,
        unless they reached only the temporary folder, which a reboot may empty, while the
        journal lies somewhere lasting (the next run recovers it from there). Returns
        whether it went."""
        if saved is None or (is_temporary(saved) and not is_temporary(self.path)):
            self.close()
            return False
        self.discard()
        return True


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
    return _recovered(read_text(path, MAX_RESULTS_BYTES), Path(path))


def _recovered(text: str, path: Path) -> Results:
    lines = text.splitlines()
    try:
        header = parse_json(lines[0], path)["run"]
    except (IndexError, DataFileError, KeyError, TypeError) as exc:
        raise DataFileError(path, "does not start with a run's description") from exc
    points, lost = [], 0
    for number, line in enumerate(lines[1:], start=2):
        try:
            points.append(read_point(parse_json(line, path), path, f"line {number}"))
        except DataFileError:
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


@contextlib.contextmanager
def _claimed(path: Path) -> Iterator[str | None]:
    """The text of an interrupted run's journal, held under its lock while the block runs
    (None: its writer still runs, another process is recovering it, or it is gone). The
    lock makes recovery happen once across processes: whoever takes it second finds the
    journal's name no longer leads to the file it opened."""
    with contextlib.ExitStack() as held:
        yield _claim(path, held)


def _claim(path: Path, held: contextlib.ExitStack) -> str | None:
    try:
        handle = held.enter_context(open_regular(path))
        info = os.fstat(handle.fileno())
        getuid = getattr(os, "getuid", None)  # (Windows has no file owners to compare)
        if getuid is not None and info.st_uid != getuid():
            return None  # another user's run: not ours to take
        if not _lock(handle, blocking=False):
            return None  # its writer (or another recovery) holds it
        now = os.stat(path)
        if (now.st_ino, now.st_dev) != (info.st_ino, info.st_dev):
            return None  # recovered and removed while this process waited
        data = handle.read(MAX_RESULTS_BYTES + 1)
    except (OSError, DataFileError):
        return None  # gone, or not a file: nothing to recover here
    if len(data) > MAX_RESULTS_BYTES:
        return None  # more than any run writes: left whole where it is, never cut and removed
    text = data.decode("utf-8", errors="replace")
    return None if _writer_alive(text) else text


def _writer_alive(text: str) -> bool:
    """Whether the run a journal's first line names still runs, as far as a lock cannot
    tell: it runs on another host (left alone), or its process is alive (systems without
    file locks)."""
    try:
        record = json.loads(text.split("\n", 1)[0])
        if record.get("host", socket.gethostname()) != socket.gethostname():
            return True
        return recorded_alive(record.get("process"))
    except (ValueError, AttributeError, RecursionError):
        return False


def _journals(folder: Path) -> list[Path]:
    return sorted(folder.glob(f".run-*{SUFFIX}")) if folder.is_dir() else []


def leftovers(folder: str | Path) -> list[Path]:
    """Journals in ``folder`` whose run was interrupted (their writer is not running)."""
    found = []
    for path in _journals(Path(folder)):
        with _claimed(path) as text:
            if text is not None:
                found.append(path)
    return found


def recover_all(*folders: str | Path) -> list[tuple[Path, Results]]:
    """Turn every interrupted run's journal in ``folders`` into a results file beside it
    (as private as the journal was); returns the files written and their results. Each
    journal is recovered once, whichever processes look at once. A journal that cannot be
    read or whose results cannot be written stays where it is, for the next try."""
    recovered = []
    for journal in (path for folder in dict.fromkeys(map(Path, folders)) for path in _journals(folder)):
        with _claimed(journal) as text:
            if text is None:
                continue
            try:
                results = _recovered(text, journal)
                target = journal.with_name(journal.name.removeprefix(".").removesuffix(SUFFIX)
                                           + "-recovered.json")
                if results.points:  # (stopped before its first point: nothing to keep)
                    results.save(target, mode=stat.S_IMODE(journal.stat().st_mode))
                journal.unlink(missing_ok=True)  # while still locked: nobody recovers it again
            except (DataFileError, OSError):
                continue  # left for the next try; the rest is recovered
            if results.points:
                recovered.append((target, results))
    return recovered
