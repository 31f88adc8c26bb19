"""Kernel lab panel: choose a backend and suites, run them off the GUI thread with progress
and cancel, watch points arrive on the chart, keep or load results files."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from explorer.core.files.datafile import DataFileError
from explorer.core.units import format_si, format_time, rate_unit
from explorer.kernels import gpuinfo
from explorer.kernels.cases import PRESETS, Preset
from explorer.kernels.results import Point, new_results_name
from explorer.kernels.suites import SUITES
from explorer.paths import user_file, user_path
from explorer.runs import KERNELS, Jobs, gpu_job
from explorer.state import AppState
from explorer.ui.panels.calibration_view import keep_calibration_run, show_calibration

LIVE_EVERY_MS = 100  # the chart takes a run's new points at most this often: a burst of them
# delivered at once (a busy GUI thread, cache-sized kernels) would redraw it once a point.
RESULT_COLUMNS = ("suite", "kernel", "dtype", "param", "median", "compute", "memory", "flag")


CALIBRATE_TIP = ("Measure this machine's matrix products and streams (the shapes and stream suites), fit the "
                 "shares of its roofs they reach and use them for the expected time (Times: calibrated)")
CALIBRATE_SMOKE = ("Calibrate needs main memory's stream rate: smoke's working sets stay in the caches. "
                   "Choose quick or full sizes")


class KernelPanel(QtWidgets.QWidget):
    def __init__(self, state: AppState, runs: Jobs, parent=None) -> None:
        super().__init__(parent)
        self.state, self.runs = state, runs
        self._build_choices()
        suites_box = self._build_suites_box()
        self._build_run_widgets()
        self._build_file_widgets()
        self._lay_out(suites_box)
        self._live: list[Point] = []
        self._live_timer = QtCore.QTimer(self, singleShot=True, interval=LIVE_EVERY_MS)
        self._live_timer.timeout.connect(lambda: self.state.set_live_points(self._live))
        self._connect()
        self._on_backend_changed()
        self._sync_files()

    def _build_choices(self) -> None:
        """Where the kernels run and at which sizes."""
        self.backend = QtWidgets.QComboBox()
        self.backend.addItem("NumPy (CPU)", "numpy")
        self.backend.addItem("CuPy (GPU)", "cupy")
        self.backend.setToolTip("Where the kernels run")
        self.device = QtWidgets.QSpinBox(minimum=0, maximum=15, toolTip="GPU number (CuPy)")  # type: ignore[call-arg]  # (Qt properties as keywords: the stubs do not say)
        self.availability = QtWidgets.QLabel(wordWrap=True)
        self.preset = QtWidgets.QComboBox()
        self.preset.addItems(list(PRESETS))
        self.preset.setCurrentText("quick")
        self.preset.setToolTip("smoke: seconds, cache-sized; quick: about a minute; full: everything")

    def _build_suites_box(self) -> QtWidgets.QGroupBox:
        """A check box per suite, two to a row, each with its docstring's first line as tooltip."""
        self.suites = {}
        suites_box = QtWidgets.QGroupBox("Suites")
        grid = QtWidgets.QGridLayout(suites_box)
        for i, name in enumerate(SUITES):
            box = QtWidgets.QCheckBox(name, checked=True)  # type: ignore[call-overload]  # (Qt properties as keywords: the stubs do not say)
            box.setToolTip((SUITES[name].__doc__ or "").strip().splitlines()[0])
            self.suites[name] = box
            grid.addWidget(box, i // 2, i % 2)
        return suites_box

    def _build_run_widgets(self) -> None:
        """Run and cancel, the progress of a run and its points as they arrive."""
        self.run_button = QtWidgets.QPushButton("Run")
        self.run_button.setToolTip("Run the chosen suites (Ctrl+R)")
        self.calibrate_button = QtWidgets.QPushButton("Calibrate")
        self.calibrate_button.setToolTip(CALIBRATE_TIP)
        self.cancel_button = QtWidgets.QPushButton("Cancel", enabled=False)  # type: ignore[call-overload]  # (Qt properties as keywords: the stubs do not say)
        self.cancel_button.setToolTip("Stop after the current kernel launch (Esc)")
        # Esc stops a run where the panel has the focus (Run or Calibrate was clicked: the
        # focus goes to Cancel), so that it never takes Esc from presentation mode or an import.
        self.escape = QtGui.QShortcut(QtGui.QKeySequence("Esc"), self)
        self.escape.setContext(QtCore.Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.escape.setEnabled(False)
        self.progress = QtWidgets.QProgressBar()
        self.progress.setFormat("%v / %m")
        self.eta = QtWidgets.QLabel()
        self.table = QtWidgets.QTableWidget(0, len(RESULT_COLUMNS))
        self.table.setHorizontalHeaderLabels(RESULT_COLUMNS)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)

    def _build_file_widgets(self) -> None:
        """The results shown on the chart: measured ceilings, loading, saving, the list of files."""
        self.measured_roofs = QtWidgets.QCheckBox("Draw measured ceilings")
        self.measured_roofs.setToolTip("Roofs at the best trusted measured bandwidth and FLOP/s "
                                       "(dash-dot, orange)")
        self.load_button = QtWidgets.QPushButton("Load results…")
        self.save_button = QtWidgets.QPushButton("Save results as…")
        self.save_button.setToolTip("Save the selected results (or the latest run) to a file of your choice")
        self.files = QtWidgets.QListWidget()
        self.files.setToolTip("Results shown on the chart; Delete removes the selected one")
        self.files.setMaximumHeight(70)

    def _lay_out(self, suites_box: QtWidgets.QGroupBox) -> None:
        top = QtWidgets.QFormLayout()
        backend_row = QtWidgets.QHBoxLayout()
        backend_row.addWidget(self.backend, 1)
        backend_row.addWidget(QtWidgets.QLabel("device"))
        backend_row.addWidget(self.device)
        top.addRow("Backend", backend_row)
        top.addRow(self.availability)
        top.addRow("Sizes", self.preset)
        buttons = QtWidgets.QHBoxLayout()
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.calibrate_button)
        buttons.addWidget(self.cancel_button)
        files_row = QtWidgets.QHBoxLayout()
        files_row.addStretch(1)
        files_row.addWidget(self.load_button)
        files_row.addWidget(self.save_button)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(suites_box)
        layout.addLayout(buttons)
        layout.addWidget(self.progress)
        layout.addWidget(self.eta)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.measured_roofs)
        layout.addLayout(files_row)
        layout.addWidget(self.files)

    def _connect(self) -> None:
        self.run_button.clicked.connect(self.start)
        self.calibrate_button.clicked.connect(self.calibrate)
        self.preset.currentTextChanged.connect(self._sizes_changed)
        self.cancel_button.clicked.connect(lambda: self.runs.cancel(KERNELS))
        self.escape.activated.connect(lambda: self.runs.cancel(KERNELS))
        self.backend.currentIndexChanged.connect(self._on_backend_changed)
        self.measured_roofs.toggled.connect(self.state.set_measured_roofs)
        self.load_button.clicked.connect(self._on_load_clicked)
        self.save_button.clicked.connect(self._on_save_clicked)
        self.files.installEventFilter(self)
        self.runs.sig_started.connect(self._on_started)
        self.runs.sig_progress.connect(self._on_progress)
        self.runs.sig_finished.connect(self._on_finished)
        self.runs.sig_failed.connect(self._on_failed)
        self.state.sig_results_changed.connect(self._sync_files)

    # -- backend ---------------------------------------------------------------------------------
    def _on_backend_changed(self) -> None:
        if self.backend.currentData() == "numpy":
            self.availability.setText("NumPy runs on this machine's CPU.")
            self._set_runnable(not self.runs.running(KERNELS))
            self.device.setEnabled(False)
            return
        self.device.setEnabled(True)
        job = gpu_job(self.device.value())
        if job in self.runs.results:
            self._on_gpu_checked(self.runs.results[job])
            return
        self.availability.setText("Looking for a GPU…")
        self._set_runnable(False)
        self.runs.detect_gpu(self.device.value())

    def _on_gpu_checked(self, info) -> None:
        if self.backend.currentData() != "cupy":
            return
        if isinstance(info, gpuinfo.Unavailable):
            self.availability.setText(f"<span style='color:#D55E00'>Unavailable: {info.reason}</span>")
            self._set_runnable(False)
        else:
            self.availability.setText(f"{info.name}, CUDA {info.runtime_version}, CuPy {info.cupy_version}")
            self._set_runnable(not self.runs.running(KERNELS))

    def _set_runnable(self, runnable: bool) -> None:
        self._runnable = runnable
        self.run_button.setEnabled(runnable)
        self._sizes_changed()

    def _sizes_changed(self) -> None:
        """A calibration needs main memory's stream rate, which smoke's cache-sized sets
        cannot give: Calibrate waits for quick or full sizes, and says so."""
        smoke = self.preset.currentText() == Preset.SMOKE
        self.calibrate_button.setEnabled(getattr(self, "_runnable", True) and not smoke)
        self.calibrate_button.setToolTip(CALIBRATE_SMOKE if smoke else CALIBRATE_TIP)

    # -- running ---------------------------------------------------------------------------------
    def chosen_suites(self) -> list[str]:
        return [name for name, box in self.suites.items() if box.isChecked()]

    def start(self) -> None:
        suites = self.chosen_suites()
        if not suites:
            self.state.sig_message.emit("Choose at least one suite")
            return
        self._starting()
        self.runs.run_kernels(self.backend.currentData(), [*suites, self.preset.currentText()],
                              self.device.value())

    def calibrate(self) -> None:
        """Measure and fit this machine's efficiency (``roofline-explorer calibrate``)."""
        self._starting()
        self.runs.calibrate(self.backend.currentData(), self.device.value(), self.preset.currentText())

    def _starting(self) -> None:
        self.table.setRowCount(0)
        self._live = []
        self._live_timer.stop()
        self.state.set_live_points([])
        self.progress.setRange(0, 0)  # busy until the plan is known
        self.eta.setText("Starting…")
        focus = QtWidgets.QApplication.focusWidget()
        focused = focus is not None and self.isAncestorOf(focus)
        self._set_runnable(False)
        self.cancel_button.setEnabled(True)
        self.escape.setEnabled(True)
        if focused:  # (the button clicked is disabled now: Cancel takes the focus, and Esc works)
            self.cancel_button.setFocus()

    def _on_started(self, job: str, label: str) -> None:
        if job == KERNELS:
            self.state.sig_message.emit(f"Measuring with {label}")

    def _on_progress(self, job: str, progress) -> None:
        if job != KERNELS:
            return
        self.progress.setRange(0, progress.total)
        self.progress.setValue(progress.done)
        eta = f", about {format_time(progress.eta_s)} left" if progress.eta_s is not None else ""
        self.eta.setText(f"{progress.current or 'finishing'}{eta}")
        if progress.point is not None:
            self._live.append(progress.point)
            self._add_row(progress.point)
            if not self._live_timer.isActive():
                self._live_timer.start()

    def _add_row(self, p: Point) -> None:
        row = self.table.rowCount()
        self.table.insertRow(row)
        flag = p.flag
        values = (p.suite, p.kernel, p.dtype, " ".join(f"{k}={v}" for k, v in p.param.items()),
                  format_time(p.time_median_s),
                  format_si(p.flops_per_s, rate_unit(p.dtype)) if p.flops else "–",
                  format_si(p.bytes_per_s, "B/s"), flag)
        for column, value in enumerate(values):
            item = QtWidgets.QTableWidgetItem(value)
            item.setToolTip(p.doubt or p.convention)
            self.table.setItem(row, column, item)
        self.table.scrollToBottom()

    def _finish_ui(self) -> None:
        self._set_runnable(True)
        self.cancel_button.setEnabled(False)
        self.escape.setEnabled(False)
        self.progress.setRange(0, max(1, self.progress.maximum()))

    def _on_finished(self, job: str, results) -> None:
        if job == gpu_job(self.device.value()):
            self._on_gpu_checked(results)
        if job != KERNELS:
            return
        self._finish_ui()
        self._live_timer.stop()
        self.state.set_live_points([])
        from explorer.kernels.calibrate import Calibration  # (imported when a run ends)

        calibration = results if isinstance(results, Calibration) else None
        results = calibration.results if calibration else results
        where = keep_calibration_run(self, calibration) if calibration else self._keep_run(results)
        if calibration is not None and calibration.profile is not None:
            show_calibration(self, calibration)
            return
        status = "cancelled" if results.cancelled else "finished"
        self.eta.setText(f"Run {status}: {len(results.points)} points {where}")
        if calibration is not None and calibration.error:
            self.eta.setText(f"{calibration.error} (its {len(results.points)} points {where})")
            QtWidgets.QMessageBox.warning(self, "Kernel lab", self.eta.text())
        for note in results.notes:
            self.state.sig_message.emit(note)

    def _keep_run(self, results) -> str:
        """Save a finished run in the data folder and show it; when that folder cannot be
        written, ask where to save it; declined or failing too, keep it in the session
        (Save results as… still saves it). Returns where it went, for the status line."""
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        journal = self.runs.journals.pop(KERNELS, None)  # the points on disk while it ran
        try:
            path = user_path("results", new_results_name("run", results.created))
            results.save(path)
            if journal is not None:
                journal.discard()
        except OSError as exc:
            reason = exc.strerror or str(exc)
            chosen, _ = QtWidgets.QFileDialog.getSaveFileName(
                self, f"Save the run elsewhere (the data folder failed: {reason})",
                str(Path.home() / f"run-{stamp}.json"), "Results (*.json)")
            if chosen and self.save_results(results, chosen):
                self.state.keep_results(chosen, results)
                if journal is not None:
                    journal.discard()
                return f"saved to {chosen}"
            label = f"run {stamp} (not saved)"
            self.state.keep_results(label, results)
            self.state.sig_message.emit(f"The run is kept in this session only ({reason}): "
                                        "Kernel lab › Save results as… writes it to a file")
            return "kept in this session only: use Save results as…"
        self.state.add_results(str(path))
        return f"saved to {path.name}"

    def show_recovered(self, recovered) -> None:
        """Show the results files the journals of interrupted kernel runs (the app was
        killed, the machine stopped) were turned into (``journal.recover_all``)."""
        for path, results in recovered:
            self.state.keep_results(str(path), results)
            self.eta.setText(f"Recovered {len(results.points)} points of an interrupted run: {path.name}")
            self.state.sig_message.emit(f"Recovered {len(results.points)} measured points of a "
                                        f"kernel run that was interrupted, into {path}")

    def _on_failed(self, job: str, message: str) -> None:
        if job != KERNELS:
            return
        self._finish_ui()
        self.eta.setText(message)
        self._live_timer.stop()
        self.state.set_live_points([])
        QtWidgets.QMessageBox.warning(self, "Kernel lab", message)

    # -- files ---------------------------------------------------------------------------------
    def _on_load_clicked(self) -> None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(self, "Load results", str(user_file("results")),
                                                        "Results (*.json)")
        if path:
            self.load(path)

    def load(self, path: str) -> bool:
        try:
            results = self.state.add_results(path)
        except DataFileError as exc:
            QtWidgets.QMessageBox.warning(self, "Cannot load results", str(exc))
            return False
        self.state.sig_message.emit(f"Loaded {len(results.points)} measured points from {Path(path).name}")
        return True

    def _on_save_clicked(self) -> None:
        current = self.files.currentItem()
        source = current.text() if current else self.state.session.results[-1]
        results = dict(self.state.results()).get(source)
        if results is None:
            return
        start = str(Path.home() / Path(source).name)
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Save results", start, "Results (*.json)")
        if path:
            self.save_results(results, path)

    def save_results(self, results, path: str) -> bool:
        try:
            results.save(path)
        except OSError as exc:
            QtWidgets.QMessageBox.critical(self, "Cannot save results", f"{path}: {exc.strerror or exc}")
            return False
        self.state.sig_message.emit(f"Saved {len(results.points)} measured points to {path}")
        return True

    def _sync_files(self) -> None:
        self.files.clear()
        for path in self.state.session.results:
            self.files.addItem(path)
        self.save_button.setEnabled(bool(self.state.session.results))
        self.measured_roofs.blockSignals(True)
        self.measured_roofs.setChecked(self.state.session.measured_roofs)
        self.measured_roofs.blockSignals(False)

    def eventFilter(self, obj, event) -> bool:
        if (obj is self.files and event.type() == QtCore.QEvent.Type.KeyPress
                and event.key() == QtCore.Qt.Key.Key_Delete and self.files.currentItem()):
            self.state.remove_results(self.files.currentItem().text())
            return True
        return super().eventFilter(obj, event)
