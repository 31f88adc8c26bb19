"""Opening a Hugging Face ``config.json`` (or a GGUF file) in the window: File › Open model
config…, or a config.json or GGUF file dropped anywhere on the window (a session file
dropped opens as a session); and
a profile of a real run: File › Import profile…, or a profile dropped (an Nsight Compute
CSV, a PyTorch trace, a rocprof-compute workload folder or its pmc_perf.csv).
A part of ``MainWindow`` (a mixin), like ``window_sessions``; the reading itself is
``explorer.core.model.hf_config``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6 import QtCore, QtGui, QtWidgets

from explorer.core.files.datafile import DataFileError
from explorer.core.model.hf_config import read_model_file
from explorer.ui.window_host import WindowHost

if TYPE_CHECKING:
    from explorer.core.model.profile import Profile

CONFIG_FILTER = "Model configs (*.json *.gguf);;All files (*)"
PROFILE_FILTER = "Profiles (*.csv *.json *.json.gz);;All files (*)"
SESSION_SUFFIXES = (".yaml", ".yml")


class ModelConfigFiles(WindowHost):
    """Expects ``state`` and ``open_session`` on the window."""

    def open_model_config_dialog(self) -> None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(self, "Open model config (config.json)",
                                                        str(Path.home()), CONFIG_FILTER)
        if path:
            self.open_model_config(path)

    def open_model_config(self, path: str | Path, name: str = "") -> bool:
        """Use the model ``path`` describes (``name``: what to call it when the file does not
        say, a cache's repository); a file that cannot be read gets a dialog naming the field,
        and the workload stays as it was."""
        try:
            spec = read_model_file(path, name)  # a config.json, or a GGUF file (kept by reference)
        except DataFileError as exc:
            QtWidgets.QMessageBox.critical(self, "Cannot open model config", str(exc))
            return False
        self.state.open_model_config(spec)
        return True

    def import_profile_dialog(self) -> None:
        title = "Import profile (Nsight Compute CSV, PyTorch trace, rocprof-compute pmc_perf.csv)"
        path, _ = QtWidgets.QFileDialog.getOpenFileName(self, title, str(Path.home()), PROFILE_FILTER)
        if path:
            self.profile_import.start(path)  # off the GUI thread: a trace may take seconds

    def import_profile(self, path: str | Path) -> bool:
        """Show a real run's kernels beside the prediction, read here and now (the menu and
        a drop read in the background: ``profile_import``); a file that cannot be read gets
        a dialog naming the kernel and metric, and the chart stays as it was."""
        try:
            from explorer.profiles.reading import read_profile  # (not at start-up)

            profile = read_profile(path)
        except DataFileError as exc:
            self._refuse_profile(str(exc))
            return False
        self._show_profile(Path(path), profile)
        return True

    def _show_profile(self, path: Path, profile: Profile) -> None:
        self.state.show_profile(profile)
        kernels = len(profile.shown)
        self.state.sig_message.emit(f"Profile {path.name}: {kernels} kernels on the chart; a saved "
                                    "session keeps them (Ctrl+Z hides them again)")

    def _refuse_profile(self, message: str) -> None:
        QtWidgets.QMessageBox.critical(self, "Cannot import profile", message)

    # -- drag and drop ---------------------------------------------------------------------------
    @staticmethod
    def _dropped_file(event) -> Path | None:
        urls = event.mimeData().urls() if event.mimeData().hasUrls() else []
        if len(urls) != 1 or not urls[0].isLocalFile():
            return None
        path = Path(urls[0].toLocalFile())
        if path.suffix.lower() in (".json", ".gguf", ".csv", ".gz", *SESSION_SUFFIXES) or path.is_dir():
            return path
        return None

    def dragEnterEvent(self, event: QtGui.QDragEnterEvent) -> None:
        if self._dropped_file(event) is not None:
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: QtGui.QDropEvent) -> None:
        path = self._dropped_file(event)
        if path is None:
            event.ignore()
            return
        event.acceptProposedAction()
        suffix = path.suffix.lower()
        from explorer.profiles.kineto import is_trace

        profile = suffix in (".csv", ".gz") or (suffix == ".json" and is_trace(path)) or path.is_dir()
        opener = (self.open_session if suffix in SESSION_SUFFIXES
                  else self.profile_import.start if profile else self.open_model_config)
        # After the drop returns: a dialog inside it would hold the dragging application.
        QtCore.QTimer.singleShot(0, lambda: opener(path))
