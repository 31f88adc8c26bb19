"""The window's session files: New, Open, Save, Save as, Open recent, workload files,
autosave and the offer to restore after a crash. A part of ``MainWindow`` (a mixin), kept apart so the window
stays readable; the files themselves are ``explorer.document.files``."""

from __future__ import annotations

import time
from pathlib import Path

from PySide6 import QtWidgets

from explorer.core.files.datafile import DataFileError
from explorer.core.files.userfiles import Skipped
from explorer.core.model.session import Session, load_session, load_workload, save_workload
from explorer.ui.window_host import WindowHost, call_with

SESSION_FILTER = "Sessions (*.yaml *.yml)"


class SessionFiles(WindowHost):
    """Expects ``state``, ``notice``, ``recent``, ``recovery``, ``autosaver``, ``kernel_panel`` and
    ``session_path`` on the window, and sets ``unchanged_session``: the session as the
    window opened it or as its file holds it (an autosave of it would be noise)."""

    # -- sessions --------------------------------------------------------------------------------
    def new_session(self) -> None:
        self.session_path = None
        self.state.replace_session(Session(), "New session")

    def open_session_dialog(self) -> None:
        start = str(self.session_path.parent) if self.session_path else str(Path.home())
        path, _ = QtWidgets.QFileDialog.getOpenFileName(self, "Open session", start, SESSION_FILTER)
        if path:
            self.open_session(path)

    def open_session(self, path: str | Path) -> bool:
        """Load a session file; a broken one gets a dialog and changes nothing."""
        path = Path(path)
        try:
            skipped = self.state.open_session(path)
        except DataFileError as exc:
            QtWidgets.QMessageBox.critical(self, "Cannot open session", str(exc))
            return False
        self.notice.add(skipped)  # measurements that could not be loaded, named above the chart
        self.session_path = path
        self.unchanged_session = self.state.session
        self._remember(path)
        return True

    def save_session(self) -> bool:
        if self.session_path is None:
            return self.save_session_as()
        return self.save_session_to(self.session_path)

    def save_session_as(self) -> bool:
        start = str(self.session_path or Path.home() / "session.yaml")
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Save session", start, SESSION_FILTER)
        if not path:
            return False
        return self.save_session_to(Path(path))

    def save_session_to(self, path: Path) -> bool:
        """Save the session to ``path`` and make it the window's file (False on a write error)."""
        try:
            self.state.session.save(path)
        except OSError as exc:
            QtWidgets.QMessageBox.critical(self, "Cannot save session", f"{path}: {exc.strerror or exc}")
            return False
        self.session_path = path
        self.unchanged_session = self.state.session
        self.state.undo_stack.setClean()
        self._remember(path)
        self.statusBar().showMessage(f"Saved {path}", 6000)
        self._update_title()
        return True

    def _remember(self, path: Path) -> None:
        try:
            self.recent.remember(path)
        except OSError as exc:  # a read-only data folder: the list just does not grow
            self.statusBar().showMessage(f"Cannot update the recent files: {exc.strerror or exc}", 6000)

    def recent_files(self) -> list[str]:
        return self.recent.list()

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        files = self.recent_files()
        if not files:
            self.recent_menu.addAction("(none)").setEnabled(False)
        for path in files:
            self.recent_menu.addAction(path, call_with(self.open_session, path))

    # -- workloads (the model and its parameters alone) --------------------------------------
    def open_workload_dialog(self) -> None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(self, "Open workload", str(Path.home()),
                                                        "Workloads (*.yaml *.yml)")
        if path:
            self.open_workload(path)

    def open_workload(self, path: str | Path) -> bool:
        try:
            workload = load_workload(path, set(self.state.models))
        except DataFileError as exc:
            QtWidgets.QMessageBox.critical(self, "Cannot open workload", str(exc))
            return False
        self.state.set_workload(workload.model, workload.params, f"Workload from {Path(path).name}",
                                workload.layers, workload.config)
        return True

    def save_workload_dialog(self) -> None:
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Save workload",
                                                        str(Path.home() / "workload.yaml"),
                                                        "Workloads (*.yaml *.yml)")
        if path:
            try:
                save_workload(path, self.state.session)
            except OSError as exc:
                QtWidgets.QMessageBox.critical(self, "Cannot save workload", f"{path}: {exc.strerror or exc}")

    # -- autosave and restore --------------------------------------------------------------------
    def _write_autosave(self) -> None:
        if self.state.session == self.unchanged_session:
            self.recovery.discard()  # nothing a crash could lose: nothing to offer after one
        else:
            self.recovery.save(self.state.session)

    def _autosave_tick(self) -> None:
        try:
            if self.autosaver.tick():
                self.save_banner.solved()
        except (OSError, ValueError) as exc:  # a full disk must not interrupt the user
            self.save_banner.show_problem(getattr(exc, "strerror", None) or str(exc))

    def autosave_into(self, folder: str) -> None:
        """Crash recovery in ``folder`` from now on (the data folder could not take it): the
        old folder's files go only once ``folder`` holds the session."""
        try:
            self.recovery = self.recovery.moved_to(folder, self.state.session)
        except OSError as exc:
            self.save_banner.show_problem(f"{folder}: {exc.strerror or exc}")
            return
        self.autosaver.flush()  # nothing left due: the session was just saved there
        self.save_banner.solved()
        self.statusBar().showMessage(f"Autosaving into {folder}", 6000)

    def offer_restore(self) -> None:
        """Mark this instance as running, then offer the session of every instance that
        stopped without closing (newest first). A broken autosave is reported in the notice
        bar; a declined one is kept aside until this instance exits cleanly."""
        try:
            self.recovery.claim()
        except OSError as exc:  # a read-only data folder: say so until it is solved
            self.save_banner.show_problem(f"cannot write {self.recovery.folder}: {exc.strerror or exc}")
        self.recovery.tidy()  # locks and half-written files of instances that left no session
        from explorer.kernels.journal import journal_folders, recover_all  # (after the first paint)

        recovered = recover_all(*journal_folders())  # measurements first: they never wait for an answer
        if recovered:
            self.kernel_panel.show_recovered(recovered)
        for crashed in self.recovery.crashed():
            notes: list[str] = []  # a listed model whose config.json is gone: said, the rest restored
            try:
                session = load_session(crashed.autosave, self.state.catalog, self.state.models, notes=notes)
            except DataFileError as exc:
                self.notice.add([Skipped("autosaved session", exc)])
                continue
            when = time.strftime("%H:%M on %d %b", time.localtime(crashed.saved_at))
            answer = QtWidgets.QMessageBox.question(
                self, "Restore session?",
                f"Roofline Explorer did not close properly. Restore the session it was showing "
                f"(autosaved at {when})?")
            if answer == QtWidgets.QMessageBox.StandardButton.Yes:
                session, skipped = self.state.with_results(session)
                self.notice.add([*skipped, *(Skipped("autosaved session's model",
                                                     DataFileError(crashed.autosave, note, field="workload"))
                                             for note in notes)])
                self.state.replace_session(session, "Restored the autosaved session")
                self.session_path = None
                self._update_title(clean=False)
                # The crashed instance's copy goes only once this one's is on disk: a kill
                # right after the restore still leaves the session to offer.
                if problem := self.recovery.restored(crashed, self.state.session):
                    self.save_banner.show_problem(problem)
                    self.autosaver.changed()
                return
            self.recovery.declined(crashed)
