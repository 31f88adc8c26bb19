"""What the commands that measure (``bench``, ``calibrate``) share, so a run keeps what it
measured whatever stops it.

- ``--out``'s folder is checked before minutes of measuring (``check_out``).
- Journals that killed runs left behind are turned into results files first
  (``recover_journals``), then this run's journal is opened (``start_journal``): every
  point is on disk as soon as it is measured (``kernels.journal``).
- The first Ctrl+C cancels between kernel launches; a second one or a SIGTERM stops at once
  (``StopNow``); once measuring is over a Ctrl+C waits for the saving (``interrupts``).
- A file that cannot be written where it was meant to go is written to the next place that
  takes it, saying why (``save_first``).
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

from explorer.core.files.atomic import refuse_special, target_of
from explorer.core.files.fallback import place
from explorer.kernels.journal import Journal, journal_folders, open_journal, recover_all
from explorer.kernels.suites import UnknownSuiteError
from explorer.kernels.timing import CancelToken

EXIT_CANCELLED = 130
EXIT_TERMINATED = 143


class StopNow(BaseException):  # like KeyboardInterrupt: past the runner's "except Exception"
    """A second Ctrl+C or a SIGTERM: stop without waiting for the current launch."""


def check_out(path: str) -> str | None:
    """Why ``path`` cannot be written (None: it can), asked before an hour of measuring."""
    folder = Path(path).expanduser().resolve().parent
    if not folder.is_dir():
        return f"the folder {folder} does not exist"
    if not os.access(folder, os.W_OK):
        return f"the folder {folder} is not writable"
    try:
        refuse_special(path)  # a folder, a FIFO or a device, or a link to one
    except OSError as exc:
        return exc.strerror
    target = target_of(path)
    if target.exists() and not os.access(target, os.W_OK):
        return f"{target} is read-only (the writer does not replace it)"
    return None


def journal_folders_for(out: str | None) -> list[Path]:
    """Where a run's journal may go: beside ``--out`` first, then the data folder's results,
    then the temporary folder (``journal.journal_folders``)."""
    near = [Path(out).expanduser().resolve().parent] if out else []
    return [*near, *journal_folders()]


def recover_journals(folders: list[Path], err: TextIO) -> None:
    """Turn the journals of killed runs in ``folders`` into results files, and say where."""
    for path, results in recover_all(*folders):
        hint = ""
        if {"shapes", "stream"} <= set(results.suites):  # a calibration's run
            hint = f" (fit it with: roofline-explorer calibrate --results {path})"
        print(f"recovered {len(results.points)} points of an interrupted run into {path}{hint}", file=err)


def start_journal(folders: list[Path], backend, suites, reference, err: TextIO) -> Journal | None:
    """This run's journal in the first of ``folders`` that takes it (None: none can, or the
    suites are unknown, which the run itself reports)."""
    try:
        journal = open_journal(folders, backend, suites, reference)
    except UnknownSuiteError:
        return None
    if journal is None:
        print("note: no folder can hold a journal; the points are kept in memory only", file=err)
    return journal


def journal_point(journal: Journal | None, point, err: TextIO) -> None:
    """Append ``point`` to ``journal``; a disk that refuses it is said once."""
    if journal is not None and (problem := journal.add(point)):
        print(f"\nnote: the journal stopped ({problem}); the points are kept in memory", file=err)


@contextlib.contextmanager
def interrupts(err: TextIO) -> Iterator[CancelToken]:
    """The interrupt protocol while measuring: the first Ctrl+C cancels the token (the
    run stops between launches), a second Ctrl+C or a SIGTERM raises ``StopNow``. The
    handlers are restored when the block ends."""
    cancel = CancelToken()

    def on_interrupt(signum, frame):
        if signum == signal.SIGINT and not cancel.cancelled:
            print("\ncancelling after the current launch (Ctrl+C again to stop at once)", file=err)
            cancel.cancel()
            return
        raise StopNow

    previous = {sig: signal.signal(sig, on_interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield cancel
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def shield(err: TextIO) -> None:
    """From here until ``interrupts`` ends, a Ctrl+C or SIGTERM waits for the table and the
    files: they take a moment, and they are what the run was for."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: print("\nsaving what was measured…", file=err))


def save_first(write: Callable[[Path], object], targets: list[Path], err: TextIO) -> Path | None:
    """Write with ``write`` to the first of ``targets`` that takes it, naming each place
    that refused it and why (``files.fallback.place``). Returns where it went (None: nowhere)."""
    placed = place(write, targets)
    say_refused(placed.refused, err)
    return placed.path


def say_refused(refused, err: TextIO) -> None:
    """Each place that refused a file, and why (``files.fallback.Placed.refused``)."""
    for refusal in refused:
        print(f"roofline-explorer: {refusal}", file=err)
