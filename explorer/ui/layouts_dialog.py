"""The Layouts dialog: every parallel layout of the workload's step on N devices
(``core.analysis.layouts``), as a chart of tokens/s per device against tokens/s per user
(against the memory a device holds, in training) with the Pareto front marked, and as a
ranked table saying why each layout ranks where it does. Apply (or a double click) sets
the chosen layout, one undo step.

The search runs as the app's ``layouts`` job (an MoE model on tens of thousands of devices
costs hundreds of layouts, most of a second): the dialog shows how many are costed, with
Stop (or Esc) to stop it, which leaves the layouts shown before and their device count.
Ranking them by another goal is done at once, without a search."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from explorer.chart import palette
from explorer.core.analysis.layouts import GOALS, MAX_DEVICES, Layout, layouts, ranked, why
from explorer.core.model.applicability import Phase
from explorer.core.model.workload import WorkloadError
from explorer.core.units import format_bytes, format_time
from explorer.runs import GilShare, JobError, Jobs, Report
from explorer.state import AppState
from explorer.ui.chart.axes import SiLogAxis, fixed_plot

if TYPE_CHECKING:
    from explorer.kernels.timing import CancelToken

JOB = "layouts"  # the job's name
PROGRESS_EVERY_S = 0.05  # the search's progress reaches the dialog at most this often
ROWS_MEASURED = 100  # the rows whose text sizes the columns (all of 500 take tens of ms)
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


class LayoutRows(QtCore.QAbstractTableModel):
    """The ranked layouts as the table's rows, each row's text made when the table first
    asks for it (the rows in sight, and the first ``ROWS_MEASURED`` its columns are sized
    from): 500 layouts cost the GUI thread no more to show than the 20 on screen."""

    GREY = QtGui.QColor("#888888")  # a layout that does not fit

    def __init__(self, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self.layouts: list[Layout] = []
        self.goal = ""
        self._cells: dict[int, tuple[str, ...]] = {}

    def show(self, ranked_layouts: list[Layout], goal: str) -> None:
        self.beginResetModel()
        self.layouts, self.goal, self._cells = ranked_layouts, goal, {}
        self.endResetModel()

    def cells(self, row: int) -> tuple[str, ...]:
        """The text of each column of ``row`` (0: the best)."""
        if row not in self._cells:
            c, best = self.layouts[row], self.layouts[0]
            costed = not c.error
            rate = c.tokens_per_s_per_user
            per_user = "–" if not costed or rate is None else f"{rate:,.1f}"
            step = format_time(c.time_s) if costed else "–"
            self._cells[row] = (str(row + 1), c.name, "yes" if c.fits else "no", step,
                                f"{c.tokens_per_s_per_device:,.0f}" if costed else "–", per_user,
                                format_bytes(c.memory_bytes) if costed else "–", why(c, best, self.goal))
        return self._cells[row]

    def rowCount(self, parent: Any = None) -> int:
        return 0 if parent is not None and parent.isValid() else len(self.layouts)

    def columnCount(self, parent: Any = None) -> int:
        return 0 if parent is not None and parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: QtCore.Qt.Orientation,
                   role: int = QtCore.Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == QtCore.Qt.Orientation.Horizontal and role == QtCore.Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index: Any, role: int = QtCore.Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        if role == QtCore.Qt.ItemDataRole.DisplayRole:
            return self.cells(index.row())[index.column()]
        if role == QtCore.Qt.ItemDataRole.ForegroundRole and not self.layouts[index.row()].fits:
            return self.GREY
        return None


class Search(NamedTuple):
    """A finished search: the device count and every layout costed for it."""

    devices: int
    found: list[Layout]


def search_in_job(state: AppState, devices: int) -> Callable[[CancelToken, Callable[[Report, Any], None]],
                                                               Search | None]:
    """The job's work: every layout of the workload as it is now on ``devices``, or None
    when cancelled (checked after each layout is costed); progress is ``(done, total)``."""
    model, device, params = state.model, state.primary, state.params  # (read here, on the GUI thread)

    def work(token: CancelToken, emit: Callable[[Report, Any], None]) -> Search | None:
        last = [-math.inf]
        share = GilShare()  # (without it the search keeps the GUI thread waiting for 0.3-0.7 s)

        def progress(done: int, total: int) -> bool:
            share()
            now = time.perf_counter()
            if now - last[0] >= PROGRESS_EVERY_S or done == total:  # (a report a layout would be a
                last[0] = now  # repaint of the bar a layout: on X11, each a trip to the server)
                emit(Report.PROGRESS, (done, total))
            return not token.cancelled

        try:
            found = layouts(model, device, devices, params, progress)
        except WorkloadError as exc:
            raise JobError(str(exc)) from None
        return None if token.cancelled else Search(devices, found)

    return work


class LayoutsDialog(QtWidgets.QDialog):
    def __init__(self, state: AppState, parent=None, runs: Jobs | None = None) -> None:
        """``runs``: the window's jobs (the dialog's own without)."""
        super().__init__(parent)
        self.state = state
        self.runs = runs or Jobs(lambda: state.catalog, self)
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
        self.bar = QtWidgets.QProgressBar()
        self.bar.setFormat("%v of %m layouts")
        self.stop_button = QtWidgets.QPushButton("Stop")
        self.stop_button.setToolTip("Stop the search (Esc): the layouts shown stay")
        self.stop_button.clicked.connect(self.stop)
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
        controls.addWidget(self.bar)
        controls.addWidget(self.stop_button)
        split = QtWidgets.QSplitter(QtCore.Qt.Orientation.Vertical)
        split.addWidget(self.plot)
        split.addWidget(self.table)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(controls)
        layout.addWidget(self.summary)
        layout.addWidget(split, 1)
        layout.addWidget(buttons)
        self.candidates: list[Layout] = []
        self.shown: Search | None = None  # the search whose layouts are shown
        self._searching: int | None = None  # the device count of the search under way
        self.runs.sig_progress.connect(self._on_progress)
        self.runs.sig_finished.connect(self._on_finished)
        self.runs.sig_failed.connect(self._on_failed)
        self.devices.valueChanged.connect(self.search)
        self.goal.currentTextChanged.connect(self._rank)
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
        self.table = QtWidgets.QTableView()
        self.rows = LayoutRows(self)
        self.table.setModel(self.rows)
        self.table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.horizontalHeader().setResizeContentsPrecision(ROWS_MEASURED)
        self.table.doubleClicked.connect(lambda _index: self.apply())
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._selection_changed())

    @property
    def searching(self) -> bool:
        return self._searching is not None

    def search(self) -> None:
        """Cost every layout on the devices asked for, in the background (a search under
        way is replaced); they are shown, best first, when all are costed."""
        self._searching = self.devices.value()
        self.bar.setRange(0, 0)  # busy until the first layout is costed
        self._show_searching()
        self.runs.submit(JOB, search_in_job(self.state, self._searching))

    def _show_searching(self) -> None:
        for widget in (self.bar, self.stop_button):
            widget.setVisible(self.searching)
        if self.searching:
            self.summary.setText(f"Costing the layouts of {self._searching:,} devices…")

    def stop(self) -> None:
        """Stop the search under way: the layouts shown before stay, with their device count."""
        if self._searching is None:
            return
        self._searching = None
        self.runs.cancel(JOB)
        self._show_searching()
        shown = self.shown
        if shown is not None:
            self.devices.blockSignals(True)  # (no search for the count put back)
            self.devices.setValue(shown.devices)
            self.devices.blockSignals(False)
            self._rank()
            self.summary.setText(self.summary.text() + " The search was stopped: these are as before.")
        else:
            self.summary.setText("The search was stopped before any layout was shown.")

    def keyPressEvent(self, event: QtGui.QKeyEvent) -> None:
        if event.key() == QtCore.Qt.Key.Key_Escape and self.searching:
            self.stop()  # Esc stops a search; with none, it closes the dialog
            return
        super().keyPressEvent(event)

    def done(self, result: int) -> None:  # closed any way: a search under way is dropped
        if self._searching is not None:
            self._searching = None
            self.runs.cancel(JOB)
        super().done(result)

    def _on_progress(self, job: str, report: tuple[int, int]) -> None:
        if job == JOB and self.searching:
            self.bar.setRange(0, report[1])
            self.bar.setValue(report[0])

    def _on_finished(self, job: str, search: Search | None) -> None:
        if job != JOB or search is None or search.devices != self._searching:
            return  # another dialog's search, or a stopped one
        self._searching = None
        self._show_searching()
        self.shown = search
        self._rank()

    def _on_failed(self, job: str, message: str) -> None:
        if job == JOB and self.searching:
            self._searching = None
            self._show_searching()
            self.summary.setText(f"The layouts could not be costed: {message}")

    def _rank(self) -> None:
        """The layouts shown, ranked by the goal chosen (no search: ranking takes no time)."""
        if self.shown is None:
            return
        if not self.shown.found:
            self.summary.setText(f"No layout of {self.shown.devices:,} devices.")
            return
        self.candidates = ranked(self.shown.found, self.goal.currentText())
        self._fill_table()
        self._fill_plot()
        self._show_searching()  # (a search under way still says so)

    def _fill_table(self) -> None:
        goal, best = self.goal.currentText(), self.candidates[0]
        self.rows.show(self.candidates, goal)
        self.table.resizeColumnsToContents()
        fitting = sum(1 for c in self.candidates if c.fits)
        kind = "expected" if best.expected else "bound"
        devices = self.shown.devices if self.shown else self.devices.value()
        self.summary.setText(f"{len(self.candidates)} layouts of {devices:,} devices, {fitting} "
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

    def cell(self, row: int, column: int) -> str:
        """The table's text at ``row`` and ``column``."""
        return self.rows.cells(row)[column]

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
