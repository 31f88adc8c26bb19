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
import tempfile
from pathlib import Path
from typing import Any

from explorer.core.datafile import DataFileError
from explorer.core.processes import recorded_alive, this_process
from explorer.kernels.results import Point, Results, parse_json, read_point, results_from
from explorer.paths import user_file

SUFFIX = ".journal.jsonl"
RECOVERED_NOTE = "recovered from the journal of a run that was interrupted"


class Journal:
    """Append-only record of one run (raises OSError where ``folder`` cannot be written)."""

    def __init__(self, folder: str | Path, run: Results) -> None:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        self.path = folder / f".run-{stamp}-{os.getpid()}-{secrets.token_hex(3)}{SUFFIX}"
        header = {k: v for k, v in run.to_dict().items() if k not in ("points", "ceilings")}
        self.stopped: str | None = None
        self._file = open(self.path, "x", encoding="utf-8")  # noqa: SIM115 (open for the run)
        self._write({"journal": 1, "process": this_process(), "run": header})

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


def open_journal(folders: list[Path], run: Results) -> Journal | None:
    """A journal in the first of ``folders`` that can be written (None: none can)."""
    for folder in folders:
        try:
            return Journal(folder, run)
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


def _writer_alive(path: Path) -> bool:
    try:
        with open(path, encoding="utf-8") as handle:
            return recorded_alive(parse_json(handle.readline()).get("process"))
    except (OSError, ValueError, AttributeError):
        return False


def leftovers(folder: str | Path) -> list[Path]:
    """Journals in ``folder`` whose run was interrupted (their writer is not running)."""
    folder = Path(folder)
    found = sorted(folder.glob(f".run-*{SUFFIX}")) if folder.is_dir() else []
    return [path for path in found if not _writer_alive(path)]


def recover_all(folder: str | Path) -> list[tuple[Path, Results]]:
    """Turn every interrupted run's journal in ``folder`` into a results file beside it;
    returns the files written and their results. A journal that cannot be read or whose
    results cannot be written stays where it is, for the next try."""
    recovered = []
    for journal in leftovers(folder):
        try:
            results = recover(journal)
            if not results.points:  # stopped before its first point: nothing to keep
                journal.unlink(missing_ok=True)
                continue
            target = journal.with_name(journal.name.removeprefix(".").removesuffix(SUFFIX)
                                       + "-recovered.json")
            results.save(target)
        except (DataFileError, OSError):
            continue
        journal.unlink(missing_ok=True)
        recovered.append((target, results))
    return recovered
