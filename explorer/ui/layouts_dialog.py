"""The Layouts dialog: every parallel layout of the workload's step on N devices
(``core.analysis.layouts``), as a chart of tokens/s per device against tokens/s per user
(against the memory a device holds, in training) with the Pareto front marked, and as a
ranked table saying why each layout ranks where it does. Apply (or a double click) sets
the chosen layout, one undo step."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from explorer.chart import palette
from explorer.core.analysis.layouts import GOALS, MAX_DEVICES, Layout, layouts, ranked, why
from explorer.core.model.applicability import Phase
from explorer.core.model.workload import WorkloadError
from explorer.core.units import format_bytes, format_time
from explorer.state import AppState
from explorer.ui.chart.axes import SiLogAxis, fixed_plot

COLUMNS = ("#", "layout", "fits", "step", "tokens/s a device", "per user", "memory a device", "why")


def chart_x(c: Layout) -> float:
    """The chart's x: tokens/s a user sees (decode, prefill); in training, whose tokens/s a
    device follow the step time, the memory a device holds (the trade-off that is left)."""
    return c.tokens_per_s_per_user if c.tokens_per_s_per_user is not None else c.memory_bytes


def pareto(points: list[tuple[float, float]]) -> list[int]:
    """Indices of the points no other point beats on both coordinates (higher is better),
    ordered by the first."""
    order = sorted(range(len(points)), key=lambda i: (-points[i][0], -points[i][1]))
    front, best_y = [], -math.inf
    for i in order:
        if points[i][1] > best_y:
            front.append(i)
            best_y = points[i][1]
    return sorted(front, key=lambda i: points[i][0])


def _spot(c: Layout) -> dict:
    """A costed layout's point: filled where it fits, a grey cross where it does not."""
    tip = f"{c.name}: {format_time(c.time_s)} a step, {c.tokens_per_s_per_device:,.0f} tokens/s a device"
    return {"pos": (math.log10(chart_x(c)), math.log10(c.tokens_per_s_per_device)),
            "data": tip + ("" if c.fits else " (does not fit)"),
            "brush": pg.mkBrush(palette.MEASURED if c.fits else "#FFFFFF"),
            "pen": pg.mkPen("k" if c.fits else "#999999"), "symbol": "o" if c.fits else "x"}


class LayoutsDialog(QtWidgets.QDialog):
    def __init__(self, state: AppState, parent=None) -> None:
        super().__init__(parent)
        self.state = state
        self.setWindowTitle("Parallel layouts")
        self.resize(980, 640)
        self.devices = QtWidgets.QSpinBox()
        self.devices.setRange(1, MAX_DEVICES)
        self.devices.setKeyboardTracking(False)
        self.devices.setValue(max(state.params.split.devices, 8))
        self.devices.setToolTip("Devices the step is spread over")
        self.goal = QtWidgets.QComboBox()
        self.goal.addItems(GOALS)
        self.goal.setToolTip("latency: the shortest step; throughput: the most tokens/s a device; "
                             "fit: the least memory a device")
        self.summary = QtWidgets.QLabel(wordWrap=True)
        self._build_plot()
        self._build_table()
        buttons = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Close)
        self.apply_button = buttons.addButton("Apply layout", QtWidgets.QDialogButtonBox.ButtonRole.ApplyRole)
        self.apply_button.setToolTip("Use the selected layout for the workload (Ctrl+Z undoes it)")
        self.apply_button.clicked.connect(self.apply)
        buttons.rejected.connect(self.reject)
        controls = QtWidgets.QHBoxLayout()
        for label, widget in (("Devices", self.devices), ("Rank by", self.goal)):
            controls.addWidget(QtWidgets.QLabel(label))
            controls.addWidget(widget)
        controls.addStretch(1)
        split = QtWidgets.QSplitter(QtCore.Qt.Orientation.Vertical)
        split.addWidget(self.plot)
        split.addWidget(self.table)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(controls)
        layout.addWidget(self.summary)
        layout.addWidget(split, 1)
        layout.addWidget(buttons)
        self.candidates: list[Layout] = []
        self.devices.valueChanged.connect(self.search)
        self.goal.currentTextChanged.connect(self.search)
        self.search()

    def _build_plot(self) -> None:
        self.plot = pg.PlotWidget(background="w", axisItems={"bottom": SiLogAxis("bottom"),
                                                               "left": SiLogAxis("left")})
        self.plot.setLogMode(x=True, y=True)
        fixed_plot(self.plot.getPlotItem(), "tokens/s a user", "tokens/s a device")
        dashed = pg.mkPen(palette.SELECTED, width=2, style=QtCore.Qt.PenStyle.DashLine)
        self.front = self.plot.plot(pen=dashed)
        self.front.setToolTip("Pareto front (ringed): no other layout that fits is better on both axes")
        self.front_points = pg.ScatterPlotItem(size=18, pen=pg.mkPen(palette.SELECTED, width=2),
                                               brush=pg.mkBrush(None))
        self.chosen = pg.ScatterPlotItem(size=22, symbol="s", pen=pg.mkPen("k", width=2),
                                         brush=pg.mkBrush(None))
        self.points = pg.ScatterPlotItem(size=10, hoverable=True, tip=lambda x, y, data: data)
        for item in (self.front_points, self.chosen):
            self.plot.addItem(item)
        self.chosen.setZValue(5)  # the selected layout's square stays on top
        self.points.sigClicked.connect(self._point_clicked)
        self.plot.addItem(self.points)

    def _build_table(self) -> None:
        self.table = QtWidgets.QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.itemDoubleClicked.connect(lambda _item: self.apply())
        self.table.itemSelectionChanged.connect(self._selection_changed)

    def search(self) -> None:
        """Cost every layout and show them, best first; a search of more than a moment
        shows its progress and can be cancelled (the layouts costed so far are shown)."""
        bar = QtWidgets.QProgressDialog("Costing parallel layouts…", "Stop", 0, 0, self)
        bar.setWindowTitle("Parallel layouts")
        bar.setMinimumDuration(500)  # only a search longer than half a second shows it
        bar.setWindowModality(QtCore.Qt.WindowModality.WindowModal)

        def progress(done: int, total: int) -> bool:
            bar.setMaximum(total)
            bar.setValue(done)
            return not bar.wasCanceled()

        state = self.state
        found = layouts(state.model, state.primary, self.devices.value(), state.params, progress)
        stopped = bar.wasCanceled()
        bar.close()
        self.candidates = ranked(found, self.goal.currentText())
        self._fill_table()
        self._fill_plot()
        if stopped:
            self.summary.setText(self.summary.text() + f" Stopped after {len(found):,} layouts.")

    def _fill_table(self) -> None:
        goal, best = self.goal.currentText(), self.candidates[0]
        self.table.setRowCount(len(self.candidates))
        for row, c in enumerate(self.candidates):
            costed = not c.error
            rate = c.tokens_per_s_per_user
            per_user = "–" if not costed or rate is None else f"{rate:,.1f}"
            step = format_time(c.time_s) if costed else "–"
            cells = (str(row + 1), c.name, "yes" if c.fits else "no", step,
                     f"{c.tokens_per_s_per_device:,.0f}" if costed else "–", per_user,
                     format_bytes(c.memory_bytes) if costed else "–", why(c, best, goal))
            for column, text in enumerate(cells):
                item = QtWidgets.QTableWidgetItem(text)
                if not c.fits:
                    item.setForeground(QtGui.QColor("#888888"))
                self.table.setItem(row, column, item)
        self.table.resizeColumnsToContents()
        fitting = sum(1 for c in self.candidates if c.fits)
        kind = "expected" if best.expected else "bound"
        self.summary.setText(f"{len(self.candidates)} layouts of {self.devices.value():,} devices, {fitting} "
                             f"fit; ranked by {goal}, step times {kind}. Best: <b>{best.name}</b>.")
        self.table.selectRow(0)

    def _fill_plot(self) -> None:
        costed = [(i, c) for i, c in enumerate(self.candidates) if not c.error]
        spots = [_spot(c) for _, c in costed]
        self.points.setData(spots)
        self._rows = [i for i, _ in costed]
        fitting = [c for _, c in costed if c.fits]
        sign = -1 if self.state.params.phase == Phase.TRAIN else 1  # less memory is better
        front = pareto([(sign * chart_x(c), c.tokens_per_s_per_device) for c in fitting])
        x = np.log10([chart_x(fitting[i]) for i in front])
        y = np.log10([fitting[i].tokens_per_s_per_device for i in front])
        self.front.setData(x, y)
        self.front_points.setData(x, y)
        if spots:
            xs, ys = zip(*(s["pos"] for s in spots), strict=True)
            box = self.plot.getPlotItem().getViewBox()
            box.setRange(xRange=(min(xs), max(xs)), yRange=(min(ys), max(ys)), padding=0.1)
        unit = "memory a device (B)" if self.state.params.phase == Phase.TRAIN else "tokens/s a user"
        self.plot.getPlotItem().setLabel("bottom", unit)

    def _point_clicked(self, _item, spots, *_args) -> None:
        if spots:
            index = self.points.points().tolist().index(spots[0])
            self.table.selectRow(self._rows[index])

    def _selection_changed(self) -> None:
        chosen = self.selected()
        self.apply_button.setEnabled(chosen is not None and not chosen.error)
        if chosen is None or chosen.error:
            self.chosen.clear()
        else:
            self.chosen.setData([math.log10(chart_x(chosen))], [math.log10(chosen.tokens_per_s_per_device)])

    def selected(self) -> Layout | None:
        rows = self.table.selectionModel().selectedRows()
        return self.candidates[rows[0].row()] if rows else None

    def apply(self) -> None:
        """Set the selected layout's split (and training options) on the workload."""
        chosen = self.selected()
        if chosen is None or chosen.error:
            return
        changes = dict(chosen.choice)  # as it was costed (its schedule: pp_trim, vpp)
        if self.state.params.phase != Phase.TRAIN:
            changes = {k: v for k, v in changes.items() if k in ("tp", "pp", "dp", "ep", "cp", "dispatch")}
        try:
            self.state.set_params(**changes)
        except WorkloadError as exc:
            QtWidgets.QMessageBox.warning(self, "Layout not applied", str(exc))
            return
        self.accept()
