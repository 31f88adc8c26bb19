"""A profile imported off the GUI thread: File › Import profile… and a dropped profile read
as the app's ``profile`` job, the share of the file read shown in the status bar with a
Cancel button (and Esc), and the chart left as it was when the import is cancelled or the
file refused. A trace of hundreds of MB takes seconds to read: the window keeps drawing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6 import QtCore, QtGui, QtWidgets

from explorer.runs import JobError, Jobs, Report

if TYPE_CHECKING:
    from explorer.core.model.profile import Profile
    from explorer.kernels.timing import CancelToken

PROFILE = "profile"  # the job's name
STEPS = 1000  # the progress bar's resolution


def read_in_job(path: Path) -> Callable[[CancelToken, Callable[[Report, Any], None]], Profile | None]:
    """The job's work: the profile at ``path`` as a session keeps it, or None when cancelled
    (between chunks of the file, or after the read: nothing is shown then); a file that
    cannot be read fails the job with its message."""

    def work(token: CancelToken, emit: Callable[[Report, Any], None]) -> Profile | None:
        from explorer.core.files.datafile import DataFileError
        from explorer.core.model.profile import kept
        from explorer.kernels.timing import Cancelled
        from explorer.profiles.reading import read_profile

        def progress(share: float) -> None:
            token.check()
            emit(Report.PROGRESS, share)

        try:
            profile = read_profile(path, progress)
        except Cancelled:
            return None
        except DataFileError as exc:
            raise JobError(str(exc)) from None
        # As the session keeps it (kernels by name) here: folding the 48,000 kernels of a
        # 250 MB trace takes a third of a second, which the GUI thread would stop for.
        return None if token.cancelled else kept(profile)

    return work


class ProfileImport(QtCore.QObject):
    """The status bar's import progress and the job behind it. ``show(path, profile)`` puts
    a read profile on the chart; ``refuse(message)`` tells the user why a file was not."""

    def __init__(self, window: QtWidgets.QMainWindow, runs: Jobs, show: Callable[[Path, Profile], None],
                 refuse: Callable[[str], None], presenting: Callable[[], bool]) -> None:
        super().__init__(window)
        self.window, self.runs, self._show, self._refuse = window, runs, show, refuse
        self._presenting = presenting
        self.path: Path | None = None
        self._cancelled = False  # asked to stop: a result that arrives anyway is dropped
        self.label = QtWidgets.QLabel()
        self.bar = QtWidgets.QProgressBar()
        self.bar.setRange(0, STEPS)
        self.bar.setMaximumWidth(160)
        self.cancel_button = QtWidgets.QToolButton()
        self.cancel_button.setText("Cancel")
        self.cancel_button.setToolTip("Stop the import (Esc): the chart stays as it was")
        self.cancel_button.clicked.connect(self.cancel)
        for widget in (self.bar, self.cancel_button):  # no taller than the status bar's text
            widget.setMaximumHeight(window.statusBar().fontMetrics().height() + 2)
        self.escape = QtGui.QShortcut(QtGui.QKeySequence("Esc"), window)
        self.escape.setContext(QtCore.Qt.ShortcutContext.WindowShortcut)
        self.escape.setEnabled(False)  # only while an import runs (presentation mode has its own Esc)
        self.escape.activated.connect(self.cancel)
        runs.sig_progress.connect(self._on_progress)
        runs.sig_finished.connect(self._on_finished)
        runs.sig_failed.connect(self._on_failed)

    @property
    def running(self) -> bool:
        return self.path is not None

    def start(self, path: str | Path) -> None:
        """Read ``path`` in the background (an import already running is cancelled)."""
        self.path, self._cancelled = Path(path), False
        self.label.setText(f"Reading {self.path.name}…")
        self.bar.setValue(0)
        status = self.window.statusBar()
        for widget in (self.label, self.bar, self.cancel_button):  # (in the bar only while it runs)
            status.addPermanentWidget(widget)
            widget.show()
        self.escape.setEnabled(not self._presenting())
        self.runs.submit(PROFILE, read_in_job(self.path))

    def cancel(self) -> None:
        if self.path is None:
            return
        self._cancelled = True
        self.runs.cancel(PROFILE)
        self.label.setText(f"Cancelling the import of {self.path.name}…")

    def _done(self) -> Path | None:
        path, self.path = self.path, None
        for widget in (self.label, self.bar, self.cancel_button):
            self.window.statusBar().removeWidget(widget)
        self.escape.setEnabled(False)
        return path

    def _on_progress(self, job: str, share: float) -> None:
        if job == PROFILE and self.path is not None:
            self.bar.setValue(round(share * STEPS))
            self.label.setText(f"Reading {self.path.name}: {share:.0%}")

    def _on_finished(self, job: str, profile: Profile | None) -> None:
        if job != PROFILE:
            return
        path = self._done()
        if path is None:
            return
        if profile is None or self._cancelled:
            self.window.statusBar().showMessage(f"Import of {path.name} cancelled: the chart is as it was",
                                                6000)
        else:
            self._show(path, profile)

    def _on_failed(self, job: str, message: str) -> None:
        if job == PROFILE and self._done() is not None:
            self._refuse(message)
