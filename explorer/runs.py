"""RunController: kernel suites on a worker thread, reported to the GUI through signals.

Each run has a generation number; signals of an older run (one cancelled and replaced)
are ignored by whoever listens. Cancel takes effect between kernel launches. ``shutdown``
cancels and waits for the thread, so closing the window never leaves one behind.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Callable

from PySide6 import QtCore

from explorer.core.catalog import Catalog
from explorer.kernels.backends import BackendUnavailable, open_backend
from explorer.kernels.reference import reference_for
from explorer.kernels.runner import drive, run
from explorer.kernels.timing import CancelToken

log = logging.getLogger(__name__)


class RunController(QtCore.QObject):
    sig_started = QtCore.Signal(int, str)  # generation, what runs ("NumPy on …")
    sig_progress = QtCore.Signal(int, object)  # generation, runner.Progress
    sig_finished = QtCore.Signal(int, object)  # generation, results.Results
    sig_failed = QtCore.Signal(int, str)  # generation, a message for a person

    def __init__(self, catalog: Callable[[], Catalog], parent: QtCore.QObject | None = None) -> None:
        """``catalog`` gives the catalogue as it is when a run starts (a custom device saved
        since is there)."""
        super().__init__(parent)
        self.catalog = catalog
        self._generations = itertools.count(1)
        self.generation = 0
        self._thread: threading.Thread | None = None
        self._token: CancelToken | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, backend: str, suites: list[str], device: int = 0,
              compare: str | None = None) -> int:
        """Start a run (cancelling one in progress); returns its generation."""
        self.cancel()
        self.generation = next(self._generations)
        self._token = CancelToken()
        self._thread = threading.Thread(
            target=self._work, name=f"explorer-run-{self.generation}", daemon=True,
            args=(self.generation, self._token, backend, list(suites), device, compare, self.catalog()))
        self._thread.start()
        return self.generation

    def cancel(self) -> None:
        if self._token is not None:
            self._token.cancel()

    def shutdown(self, timeout_s: float = 5.0) -> bool:
        """Cancel and wait for the worker; True if it stopped in time."""
        self.cancel()
        thread = self._thread
        if thread is None:
            return True
        thread.join(timeout_s)
        return not thread.is_alive()

    def _work(self, generation: int, token: CancelToken, backend_name: str, suites: list[str],
              device: int, compare: str | None, catalog: Catalog) -> None:
        try:
            backend = open_backend(backend_name, device)
        except BackendUnavailable as exc:
            self.sig_failed.emit(generation, f"The {backend_name} backend cannot run here: {exc}")
            return
        try:
            reference, note = reference_for(backend, catalog, compare)
            self.sig_started.emit(generation, backend.label + (f" ({note})" if note else ""))
            results = drive(run(backend, suites, cancel=token, reference=reference),
                            lambda progress: self.sig_progress.emit(generation, progress))
        except Exception as exc:  # a GPU error mid-run: report it, keep the app
            log.exception("kernel run failed")
            self.sig_failed.emit(generation, f"The run stopped with an error: {type(exc).__name__}: {exc}")
            return
        self.sig_finished.emit(generation, results)
