"""From CPU to GPU: the design-choice lab in a window of its own. A catalogue CPU becomes a
catalogue GPU one design choice at a time; each stage moves the chart and says why, with a
Little's-law slider (and the user's parallelism measurements) and a batch slider (and
decode-batch measurements) where they matter. The user's session is never touched."""

from __future__ import annotations

import math
from dataclasses import replace

from PySide6 import QtCore, QtGui, QtWidgets

from explorer import defaults
from explorer.core.files.datafile import DataFileError
from explorer.core.hardware.catalog import Catalog
from explorer.core.hardware.hardware import CPU, GPU
from explorer.core.units import format_bytes, format_si
from explorer.core.words.design_lab import BATCHING, OVERLAP, STAGES, Lab
from explorer.core.words.why import load_topics, render
from explorer.kernels.suites.parallelism import in_flight_bytes
from explorer.state import AppState
from explorer.ui.caption_bar import CaptionBar, chart_with_caption
from explorer.ui.chart.roofline_plot import RooflinePlot
from explorer.ui.littles_law_plot import LittlesLawPlot
from explorer.ui.presentation import Presentation

DEFAULT_CPU, DEFAULT_GPU, DEFAULT_MODEL = defaults.LAB_CPU, defaults.LAB_GPU, defaults.MODEL
QUARTER_OCTAVES_FROM_1KIB = 48  # the in-flight slider: 1 KiB … 4 MiB in steps of 2^(1/4)


def slider_bytes(value: int) -> float:
    return 1024.0 * 2.0 ** (value / 4)


def bytes_slider(value: float) -> int:
    return max(0, min(QUARTER_OCTAVES_FROM_1KIB, round(4 * math.log2(value / 1024.0))))


def lab_gpus(catalog) -> list:
    """GPUs the lab can end at: those with a measured memory latency."""
    return [hw for hw in catalog.values() if hw.kind == GPU and hw.main_memory.latency_s]


class DesignLabWindow(QtWidgets.QMainWindow):
    def __init__(self, main_state: AppState, theme: str = "light", parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("From CPU to GPU — Roofline Explorer design lab")
        self.main_state = main_state
        catalog, models = main_state.catalog, main_state.models
        cpus = [hw for hw in catalog.values() if hw.kind == CPU]
        gpus = lab_gpus(catalog)
        if not cpus or not gpus:
            raise ValueError("the design lab needs a CPU and a GPU with a measured memory latency "
                             "in the catalogue")
        model_id = main_state.session.model
        if model_id not in models or models[model_id].item_unit != "tokens":
            model_id = DEFAULT_MODEL
        cpu = catalog.get(DEFAULT_CPU, cpus[0])
        gpu = catalog.get(DEFAULT_GPU, gpus[0])
        self.lab = Lab(cpu, gpu, model_id, models[model_id], context=main_state.params.context)
        try:
            self.topics = {t.id: t for t in load_topics(catalog, models=models)}
        except DataFileError:
            self.topics = {}
        self.state = AppState(self._catalog(), models, self.lab.session(), self)
        self.chart = RooflinePlot(self.state, self)
        self.chart.measured_suites = {"decode-batch"}
        self.caption = CaptionBar()
        self.caption.sig_previous.connect(self.previous)
        self.caption.sig_next.connect(self.next)
        self.caption.sig_stop.connect(self.close)
        self.caption.buttons[2].setToolTip("Close the design lab")
        self.setCentralWidget(chart_with_caption(self.chart, self.caption))
        dock = QtWidgets.QDockWidget("Design choices", self)
        dock.setObjectName("dock-design-choices")
        dock.setFeatures(QtWidgets.QDockWidget.DockWidgetFeature.DockWidgetMovable)
        dock.setWidget(self._controls(cpus, gpus))
        self.addDockWidget(QtCore.Qt.DockWidgetArea.RightDockWidgetArea, dock)
        self.resizeDocks([dock], [400], QtCore.Qt.Orientation.Horizontal)
        self.presentation = Presentation(self, self.chart, self.caption, self, keep_docks=True)
        for keys, slot, tip in ((("Alt+Right", "PgDown"), self.next, "next stage"),
                                (("Alt+Left", "PgUp"), self.previous, "previous stage"),
                                (("F5",), self.presentation.toggle, "presentation mode"),
                                (("Ctrl+W",), self.close, "close")):
            action = QtGui.QAction(tip, self)
            action.setShortcuts([QtGui.QKeySequence(k) for k in keys])
            action.triggered.connect(slot)
            self.addAction(action)
        self.chart.set_theme(theme)
        self.caption.set_theme(self.chart.theme)
        self.resize(1366, 768)
        self._show()

    # -- controls ------------------------------------------------------------------------------
    def _controls(self, cpus, gpus) -> QtWidgets.QWidget:
        panel = QtWidgets.QWidget()
        layout = QtWidgets.QVBoxLayout(panel)
        form = QtWidgets.QFormLayout()
        self.cpu_box = QtWidgets.QComboBox()
        for hw in cpus:
            self.cpu_box.addItem(hw.name, hw.id)
        self.cpu_box.setCurrentIndex(self.cpu_box.findData(self.lab.cpu.id))
        self.cpu_box.setToolTip("The CPU the lab starts from")
        self.gpu_box = QtWidgets.QComboBox()
        for hw in gpus:
            self.gpu_box.addItem(hw.name, hw.id)
        self.gpu_box.setCurrentIndex(self.gpu_box.findData(self.lab.gpu.id))
        self.gpu_box.setToolTip("The GPU the lab ends at. Only GPUs whose memory latency is in the "
                                "catalogue (measured, with its source) can be chosen: Little's law needs it.")
        form.addRow("From", self.cpu_box)
        form.addRow("To", self.gpu_box)
        layout.addLayout(form)
        self.stages = QtWidgets.QListWidget()
        for index, stage in enumerate(STAGES):
            self.stages.addItem(f"{index}. {stage.title}")
        row_height = self.stages.fontMetrics().height() + 4
        self.stages.setFixedHeight(row_height * len(STAGES) + 2 * self.stages.frameWidth() + 4)
        self.stages.setToolTip("Each stage keeps the choices above it and adds one (Page Down / Page Up)")
        layout.addWidget(self.stages)
        self.in_flight = QtWidgets.QSlider(QtCore.Qt.Orientation.Horizontal, minimum=0,  # type: ignore[call-overload]  # (Qt properties as keywords: the stubs do not say)
                                           maximum=QUARTER_OCTAVES_FROM_1KIB)
        self.in_flight.setToolTip("Bytes requested from memory and not yet delivered (Little's law)")
        self.in_flight_label = QtWidgets.QLabel(wordWrap=True)
        self.law = LittlesLawPlot()
        self.law.setMaximumHeight(240)
        self.law_note = QtWidgets.QLabel(wordWrap=True)
        self.batch = QtWidgets.QSpinBox(minimum=1, maximum=1 << 16)
        self.batch.setToolTip("Sequences decoded together in one step")
        self.why = QtWidgets.QTextBrowser()
        self.why.setMinimumHeight(90)
        layout.addWidget(QtWidgets.QLabel("<b>Bytes in flight</b>"))
        layout.addWidget(self.in_flight)
        layout.addWidget(self.in_flight_label)
        layout.addWidget(self.law)
        layout.addWidget(self.law_note)
        row = QtWidgets.QHBoxLayout()
        row.addWidget(QtWidgets.QLabel("<b>Batch</b>"))
        row.addWidget(self.batch, 1)
        layout.addLayout(row)
        layout.addWidget(self.why, 1)
        self._sync_controls()
        self.cpu_box.currentIndexChanged.connect(self._devices_chosen)
        self.gpu_box.currentIndexChanged.connect(self._devices_chosen)
        self.stages.currentRowChanged.connect(self.go)
        self.in_flight.valueChanged.connect(lambda v: self._change(in_flight_bytes=slider_bytes(v)))
        self.batch.valueChanged.connect(lambda v: self._change(batch=v))
        return panel

    def _sync_controls(self) -> None:
        lab = self.lab
        blockers = [QtCore.QSignalBlocker(w) for w in (self.stages, self.in_flight, self.batch)]
        self.stages.setCurrentRow(lab.stage)
        self.in_flight.setValue(bytes_slider(lab.in_flight_bytes))
        self.batch.setValue(lab.batch)
        del blockers
        # The bytes-in-flight cap is a what-if of the latency-hiding stage only.
        self.in_flight.setEnabled(lab.stage == OVERLAP)
        self.law.setEnabled(lab.stage == OVERLAP)
        self.batch.setEnabled(lab.stage >= BATCHING)

    # -- stepping ------------------------------------------------------------------------------
    def next(self) -> bool:
        if self.lab.stage + 1 >= len(STAGES):
            return False
        self.go(self.lab.stage + 1)
        return True

    def previous(self) -> bool:
        if self.lab.stage == 0:
            return False
        self.go(self.lab.stage - 1)
        return True

    def go(self, stage: int) -> None:
        self._change(stage=max(0, min(stage, len(STAGES) - 1)))

    def _devices_chosen(self) -> None:
        catalog = self.main_state.catalog
        self._change(cpu=catalog[self.cpu_box.currentData()], gpu=catalog[self.gpu_box.currentData()])

    def _change(self, **changes) -> None:
        try:
            lab = replace(self.lab, **changes)
        except ValueError as exc:
            QtWidgets.QMessageBox.warning(self, "Design lab", str(exc))
            self._sync_controls()
            return
        if lab != self.lab:
            self.lab = lab
            self._show()

    def _catalog(self) -> Catalog:
        devices = {hw.id: hw for hw in (self.lab.cpu, self.lab.gpu, self.lab.device())}
        return Catalog(devices.values())

    def _measured(self, suite: str):
        return [(path, results) for path, results in self.main_state.results()
                if any(p.suite == suite for p in results.points)]

    def _show(self) -> None:
        lab = self.lab
        session = lab.session()
        decode = self._measured("decode-batch") if lab.stage >= BATCHING else []
        session = replace(session, results=tuple(path for path, _ in decode))
        self.state.reset(self._catalog(), session, STAGES[lab.stage].title, dict(decode))
        stage = STAGES[lab.stage]
        caption = lab.text()
        if decode:
            caption += " Filled points: decode-batch measured in " + ", ".join(p for p, _ in decode) + "."
        self.caption.show_step(stage.title, caption, lab.stage, len(STAGES))
        self._sync_controls()
        self.in_flight_label.setText(lab.in_flight_text())
        points, note = self._parallelism_points()
        self.law.show_law(lab.gpu.bandwidth_bytes_per_s, lab.latency_s, lab.in_flight_bytes, points)
        self.law_note.setText(note)
        topic = self.topics.get(stage.topic) if stage.topic else None
        self.why.setPlainText(render(topic, self.main_state.catalog, self.main_state.models) if topic else
                              "Step through the stages: Page Down (or Space and Right when "
                              "presenting, F5) moves on, Page Up goes back.")

    def _parallelism_points(self) -> tuple[list, str]:
        """(bytes in flight, bandwidth, tooltip) of the loaded GPU parallelism points, and a
        note on what is drawn."""
        runs = self._measured("parallelism")
        points = []
        for path, results in runs:
            gpu = results.machine.get("gpu")
            machine = gpu.get("name", path) if isinstance(gpu, dict) else path
            for p in results.points:
                x = in_flight_bytes(p)
                if x is not None and p.trusted:
                    points.append((x, p.bytes_per_s, f"{machine}: {p.param['blocks']} blocks, "
                                                     f"{format_bytes(x)} in flight, "
                                                     f"{format_si(p.bytes_per_s, 'B/s')} ({path})"))
        if points:
            plural = "s" if len(points) > 1 else ""
            return points, f"Hexagons: {len(points)} parallelism point{plural} measured in the Kernel lab."
        if runs:
            return points, ("The loaded parallelism runs vary CPU threads, not bytes in flight: "
                            "not drawn here.")
        return points, "Run the Kernel lab's parallelism suite on a GPU to see measured points here."
