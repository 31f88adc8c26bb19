"""Jobs: everything that runs off the GUI thread (kernel runs, GPU detection), in one place.

A job has a name (``kernels``, ``gpu-0``) and runs a plain function on a worker thread:
``work(token, emit)`` checks ``token`` between steps (cancel) and calls ``emit(Report.STARTED,
label)`` or ``emit(Report.PROGRESS, report)``; what it returns is the result. Reports reach the
GUI through signals carrying the job's name. Starting a job cancels the running one of that
name (or, with ``restart=False``, lets the running one finish and shares its result), and
reports of a replaced run are dropped here, so listeners never see a stale one.
``shutdown`` cancels every job and joins its thread: closing the window never leaves one.
A kernel run appends each point to a journal as it is measured (``kernels.journal``);
``journals[job]`` is the current run's, for the panel to discard once the run is saved.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from PySide6 import QtCore

from explorer.core.hardware.catalog import Catalog

if TYPE_CHECKING:  # the kernels' modules load with the first job, not at start-up
    from explorer.kernels.journal import Journal
    from explorer.kernels.timing import CancelToken


class Report(StrEnum):
    """What a job reports to the GUI thread (the payload that comes with it)."""

    STARTED = "started"  # what runs, for a person ("NumPy on …")
    PROGRESS = "progress"  # a progress report
    JOURNAL = "journal"  # the run's journal (kernel runs)
    FINISHED = "finished"  # the result
    FAILED = "failed"  # a message for a person

log = logging.getLogger(__name__)

KERNELS = "kernels"
GIL_SHARE_EVERY_S = 0.005  # a job computing in Python lets the GUI thread in at least this often
GIL_SHARE_SLEEP_S = 0.0002


class GilShare:
    """Call between a job's steps: every ``every_s`` it sleeps a fifth of a millisecond.

    A worker thread computing in Python can keep Python's lock from the GUI thread for
    hundreds of milliseconds. CPython hands the lock to a waiting thread only once the
    holder has kept it for a whole switch interval (5 ms); a worker whose NumPy calls let go
    of it for microseconds restarts that count each time, and takes it back before the
    waiting thread wakes. A layout search of 1,024 devices held the GUI thread 0.3-0.7 s
    that way (``benchmarks/gui_stalls.py``). A sleep lets go for long enough: a waiting GUI
    thread runs, and the worker asks for the lock back in its turn."""

    def __init__(self, every_s: float = GIL_SHARE_EVERY_S, clock: Callable[[], float] = time.perf_counter,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.every_s, self._clock, self._sleep = every_s, clock, sleep
        self._last = clock()

    def __call__(self) -> bool:
        """Sleep if ``every_s`` has passed since the last sleep; True if it slept."""
        if self._clock() - self._last < self.every_s:
            return False
        self._sleep(GIL_SHARE_SLEEP_S)
        self._last = self._clock()
        return True

Work = Callable[["CancelToken", Callable[[Report, Any], None]], Any]


def run(*args, **kwargs):
    """The kernel runner's ``run``, imported on first use (the suites it imports take tens of
    ms, which start-up need not pay)."""
    from explorer.kernels import runner

    return runner.run(*args, **kwargs)


def drive(*args, **kwargs):
    """The kernel runner's ``drive`` (see ``run``)."""
    from explorer.kernels import runner

    return runner.drive(*args, **kwargs)


class JobError(Exception):
    """A job that cannot do its work: the message is for a person."""


def gpu_job(device: int = 0) -> str:
    return f"gpu-{device}"


def _opened(backend: str, device: int):
    """The backend a job measures with, or the JobError that says why it cannot run."""
    from explorer.kernels.backends import BackendUnavailable, open_backend

    try:
        return open_backend(backend, device)
    except BackendUnavailable as exc:
        raise JobError(f"The {backend} backend cannot run here: {exc}") from None


def _journalled(opened, names, reference, emit, measuring) -> tuple[Any, Journal | None]:
    """Drive the kernel run ``measuring`` (of the suites and preset ``names``), each point
    appended to a journal as it is measured (``kernels.journal``, reported as
    ``Report.JOURNAL``) and reported as progress: the results and the (closed) journal."""
    from explorer.kernels.journal import journal_folders, open_journal

    journal = open_journal(journal_folders(), opened, names, reference)
    emit(Report.JOURNAL, journal)

    def on_progress(progress) -> None:
        if progress.point is not None and journal is not None:
            journal.add(progress.point)
        emit(Report.PROGRESS, progress)

    try:
        return drive(measuring, on_progress), journal
    finally:
        if journal is not None:
            journal.close()


class Jobs(QtCore.QObject):
    sig_started = QtCore.Signal(str, str)  # job, what runs ("NumPy on …")
    sig_progress = QtCore.Signal(str, object)  # job, its report
    sig_finished = QtCore.Signal(str, object)  # job, its result
    sig_failed = QtCore.Signal(str, str)  # job, a message for a person
    _report = QtCore.Signal(str, int, str, object)  # job, generation, kind, payload (any thread)

    def __init__(self, catalog: Callable[[], Catalog], parent: QtCore.QObject | None = None) -> None:
        """``catalog`` gives the catalogue as it is when a kernel run starts (a custom device
        saved since is there)."""
        super().__init__(parent)
        self.catalog = catalog
        self._generations = itertools.count(1)
        self._current: dict[str, int] = {}
        self._threads: dict[str, tuple[threading.Thread, CancelToken]] = {}
        self.results: dict[str, Any] = {}  # the last result of each job
        self.journals: dict[str, Journal | None] = {}  # the journal of each job's current run
        self._report.connect(self._deliver)  # queued: delivered on the GUI thread

    def running(self, job: str) -> bool:
        entry = self._threads.get(job)
        return entry is not None and entry[0].is_alive()

    def submit(self, job: str, work: Work, restart: bool = True) -> None:
        if self.running(job):
            if not restart:
                return  # the running one's result will do
            self.cancel(job)
        from explorer.kernels.timing import CancelToken

        generation = self._current[job] = next(self._generations)
        token = CancelToken()

        def emit(kind: Report, payload: Any) -> None:
            self._report.emit(job, generation, kind, payload)

        def target() -> None:
            try:
                emit(Report.FINISHED, work(token, emit))
            except JobError as exc:
                emit(Report.FAILED, str(exc))
            except Exception as exc:  # a GPU error mid-run: report it, keep the app
                log.exception("%s failed", job)
                emit(Report.FAILED, f"It stopped with an error: {type(exc).__name__}: {exc}")

        thread = threading.Thread(target=target, name=f"explorer-{job}-{generation}", daemon=True)
        self._threads[job] = (thread, token)
        thread.start()

    def _deliver(self, job: str, generation: int, kind: str, payload: Any) -> None:
        if self._current.get(job) != generation:
            return  # a replaced run's late report
        if kind == Report.JOURNAL:
            self.journals[job] = payload
            return
        if kind == Report.FINISHED:
            self.results[job] = payload
        {Report.STARTED: self.sig_started, Report.PROGRESS: self.sig_progress,
         Report.FINISHED: self.sig_finished, Report.FAILED: self.sig_failed}[Report(kind)].emit(job, payload)

    def cancel(self, job: str | None = None) -> None:
        """Cancel ``job`` (every job when None) between its steps."""
        for name, (_, token) in self._threads.items():
            if job is None or name == job:
                token.cancel()

    def shutdown(self, timeout_s: float = 5.0) -> bool:
        """Cancel every job and wait for its thread; True if all stopped in time."""
        self.cancel()
        for thread, _ in self._threads.values():
            thread.join(timeout_s)
        return not any(thread.is_alive() for thread, _ in self._threads.values())

    # -- the app's jobs ----------------------------------------------------------------------
    def run_kernels(self, backend: str, suites: list[str], device: int = 0,
                    compare: str | None = None) -> None:
        """Measure ``suites`` with a backend (cancelling a run in progress)."""
        catalog = self.catalog()
        from explorer.kernels.reference import reference_for  # (not at start-up)

        def work(token: CancelToken, emit) -> Any:
            opened = _opened(backend, device)
            reference, note = reference_for(opened, catalog, compare)
            emit(Report.STARTED, opened.label + (f" ({note})" if note else ""))
            results, _ = _journalled(opened, suites, reference, emit,
                                     run(opened, list(suites), cancel=token, reference=reference))
            return results

        self.submit(KERNELS, work)

    def calibrate(self, backend: str, device: int = 0, preset: str = "quick") -> None:
        """Measure the calibration suites and fit, check and write this machine's profile
        (as ``roofline-explorer calibrate``); the result is a ``Calibration``. Runs as the
        ``kernels`` job: one measurement at a time. Each point is journalled as it is
        measured and the run is saved beside the profile before the fit, so neither a crash
        nor a fit or a folder that fails loses it (the ``Calibration`` says where it went)."""
        from explorer.kernels import calibrate  # (not at start-up: a calibration is rare)
        from explorer.kernels.energy import meter_for

        catalog = self.catalog()

        def work(token: CancelToken, emit) -> Any:
            opened = _opened(backend, device)
            emit(Report.STARTED, f"{opened.label}, calibrating")
            meter = meter_for(opened)  # (read once: it may take a second to find the counter's step)
            suites = calibrate.suites_for(meter)
            results, journal = _journalled(opened, [*suites, preset], None, emit,
                                           run(opened, suites, preset, cancel=token, energy=meter))
            kept = calibrate.keep_run(results, journal=journal)
            if results.cancelled:
                return calibrate.Calibration(results, kept=kept)
            try:
                return calibrate.calibrate_and_write(results, catalog, kept=kept)
            except calibrate.CalibrationError as exc:
                return calibrate.Calibration(results, kept=kept, error=f"The calibration could not be "
                                                                      f"fitted: {exc}")

        self.submit(KERNELS, work)

    def detect_gpu(self, device: int = 0) -> None:
        """Look for GPU ``device`` (importing CuPy takes seconds); the result arrives as
        ``gpu-N`` and stays in ``results``. Asking again while it looks shares the answer."""
        from explorer.kernels import gpuinfo

        self.submit(gpu_job(device), lambda token, emit: gpuinfo.detect_gpu(device), restart=False)
