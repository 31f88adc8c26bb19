"""Scaling-laws panel: for a training budget C, each fit's isoFLOP curve (loss against model
size at C = 6·N·D), its compute-optimal N and D, the ~20 tokens per parameter rule of thumb,
where the workload's model sits, and the days the budget takes on the chosen devices."""

from __future__ import annotations

from html import escape

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from explorer.chart.palette import OKABE_ITO
from explorer.core.analysis.scaling_laws import (
    BESIROGLU,
    BUDGET_RANGE,
    FLOPS_PER_PARAMETER_TOKEN,
    HOFFMANN,
    Placement,
    isoflop,
    rule_of_thumb,
    training_seconds,
    why_they_differ,
)
from explorer.core.analysis.terms import op_roofs
from explorer.core.model import parallel, training
from explorer.core.model.applicability import Phase
from explorer.core.units import format_parameters, format_si
from explorer.state import AppState
from explorer.ui.chart.axes import SiLogAxis, fixed_plot
from explorer.ui.follow import Follower

FITS = ((HOFFMANN, OKABE_ITO["blue"]), (BESIROGLU, OKABE_ITO["vermillion"]))
DEFAULT_BUDGET = 5.76e23  # Gopher's and Chinchilla's (Hoffmann et al. 2022)
NEIGHBOURS = (0.1, 10.0)  # budgets drawn faintly beside the chosen one: its isoFLOP curve's neighbours


class ScalingPanel(QtWidgets.QWidget):
    def __init__(self, state: AppState, parent=None) -> None:
        super().__init__(parent)
        self.state = state
        form = self._build_inputs()
        self._build_plot()
        self.text = QtWidgets.QTextBrowser()
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(form)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.text, 1)
        self.budget.editingFinished.connect(self.refresh)
        self.devices.valueChanged.connect(self.refresh)
        self.mfu.valueChanged.connect(self.refresh)
        self._follower = Follower(state, (state.sig_workload_changed, state.sig_hardware_changed),
                                  self._follow_state, self)
        self._follow_state()

    def _build_inputs(self) -> QtWidgets.QFormLayout:
        """The budget, and the cluster that spends it: devices and their utilisation."""
        self.budget = QtWidgets.QLineEdit(f"{DEFAULT_BUDGET:.3g}")
        self.budget.setToolTip("Training compute C in FLOPs (C ≈ 6 × parameters × tokens), e.g. 5.76e23, "
                               f"between {BUDGET_RANGE[0]:.0e} and {BUDGET_RANGE[1]:.0e}")
        self.devices = QtWidgets.QSpinBox()
        self.devices.setRange(1, parallel.MAX_DP * parallel.MAX_TP)
        self.devices.setValue(1024)
        self.devices.setGroupSeparatorShown(True)
        self.devices.setToolTip("Devices training together (the primary device of the Hardware panel); a "
                                "training step spread over devices sets it")
        self.mfu = QtWidgets.QDoubleSpinBox()
        self.mfu.setRange(0.01, 1.0)
        self.mfu.setSingleStep(0.05)
        self.mfu.setValue(training.DEFAULT_MFU)
        self.mfu.setToolTip("Model-FLOPs utilisation: the share of the peak training achieves (0.4 is a "
                            "stated default; large runs report 0.35–0.55)")
        form = QtWidgets.QFormLayout()
        form.addRow("Budget (FLOPs)", self.budget)
        row = QtWidgets.QHBoxLayout()
        row.addWidget(self.devices, 1)
        row.addWidget(QtWidgets.QLabel("at MFU"))
        row.addWidget(self.mfu)
        form.addRow("Devices", row)
        return form

    def _build_plot(self) -> None:
        """Per fit: the budget's isoFLOP curve, its neighbours' (faint), the compute-optimal
        frontier, the optimum (star) and the workload's model (ring); the rule of thumb's line."""
        self.plot = pg.PlotWidget(background="w", axisItems={"bottom": SiLogAxis("bottom")})
        self.plot.setLogMode(x=True, y=False)
        item = self.plot.getPlotItem()
        fixed_plot(item, "parameters N (at C = 6·N·D)", "predicted loss (fit)")
        self.plot.setMinimumHeight(200)
        self.curves = {fit.id: item.plot(pen=pg.mkPen(colour, width=2.5)) for fit, colour in FITS}
        for fit, _ in FITS:
            self.curves[fit.id].setToolTip(f"{fit.name}: loss at C = 6·N·D (a fit; colours as in the table)")
        dash, dot = QtCore.Qt.PenStyle.DashLine, QtCore.Qt.PenStyle.DotLine
        faint = {fit.id: pg.mkPen(colour, width=1.2, style=dash) for fit, colour in FITS}
        self.neighbours = {(fit.id, k): item.plot(pen=faint[fit.id]) for fit, _ in FITS for k in NEIGHBOURS}
        self.frontiers = {fit.id: item.plot(pen=pg.mkPen(colour, width=1.2, style=dot))
                          for fit, colour in FITS}
        self.optima = {fit.id: pg.ScatterPlotItem(size=14, symbol="star", pen=pg.mkPen("k"),
                                                  brush=pg.mkBrush(colour), hoverable=True)
                       for fit, colour in FITS}
        self.models = {fit.id: pg.ScatterPlotItem(size=10, symbol="o", pen=pg.mkPen(colour, width=2),
                                                  brush=pg.mkBrush("w"), hoverable=True)
                       for fit, colour in FITS}
        for scatter in (*self.optima.values(), *self.models.values()):
            scatter.setZValue(5)
            item.addItem(scatter)
        self.rule = pg.InfiniteLine(angle=90, pen=pg.mkPen("#767676", width=1.5,
                                                           style=QtCore.Qt.PenStyle.DashLine))
        item.addItem(self.rule)

    def _follow_state(self, *_args) -> None:
        """A training step spread over devices sets the cluster's size."""
        split = self.state.params.split
        if self.state.params.phase == Phase.TRAIN and split.devices > 1:
            self.devices.blockSignals(True)
            self.devices.setValue(split.devices)
            self.devices.blockSignals(False)
        self.refresh()

    def show_budget(self, budget: float) -> None:
        """Draw the fits for ``budget`` FLOPs (a scene's step names one)."""
        self.budget.setText(f"{budget:.3g}")
        self.refresh()

    def budget_flops(self) -> float | None:
        try:
            value = float(self.budget.text())
        except ValueError:
            return None
        return value if BUDGET_RANGE[0] <= value <= BUDGET_RANGE[1] else None

    def refresh(self, *_args) -> None:
        if self.state.in_gesture:
            return
        budget = self.budget_flops()
        if budget is None:
            self.budget.setStyleSheet("color: #D55E00")
            self.text.setHtml(f"<p><b>The budget must be a number of FLOPs between {BUDGET_RANGE[0]:.0e} and "
                              f"{BUDGET_RANGE[1]:.0e}</b>, such as 5.76e23.</p>")
            return
        self.budget.setStyleSheet("")
        model = self.state.model
        parameters = float(model.parameter_count())
        for fit, _ in FITS:
            n_opt, d_opt = fit.optimal(budget)
            for factor in (1.0, *NEIGHBOURS):
                centre = fit.optimal(budget * factor)[0]
                sizes = np.geomspace(centre / 30, centre * 30, 120)
                curve = [loss for _, _, loss in isoflop(fit, budget * factor, list(sizes))]
                line = self.curves[fit.id] if factor == 1.0 else self.neighbours[(fit.id, factor)]
                line.setData(sizes, curve)
                if factor != 1.0:
                    line.setToolTip(f"{fit.name}: the isoFLOP curve of {budget * factor:.3g} FLOPs")
            budgets = np.geomspace(budget * NEIGHBOURS[0] / 3, budget * NEIGHBOURS[1] * 3, 40)
            frontier = [fit.optimal(c) for c in budgets]
            self.frontiers[fit.id].setData([n for n, _ in frontier], [fit.loss(n, d) for n, d in frontier])
            self.frontiers[fit.id].setToolTip(f"{fit.name}: the compute-optimal frontier, each budget's "
                                              "best model size")
            self.optima[fit.id].setData([np.log10(n_opt)], [fit.loss(n_opt, d_opt)],
                                        data=[f"{fit.name}: optimum {format_parameters(n_opt)} parameters"])
            self.optima[fit.id].setToolTip(f"{fit.name}: N_opt {format_parameters(n_opt)}, "
                                           f"D_opt {format_parameters(d_opt)} tokens (fit)")
            at = Placement(fit, budget, parameters)
            self.models[fit.id].setData([np.log10(parameters)], [at.loss])
            self.models[fit.id].setToolTip(f"{model.name} on {format_parameters(at.tokens)} tokens: "
                                           f"loss {at.loss:.3f} ({fit.name})")
        self.rule.setValue(np.log10(rule_of_thumb(budget)[0]))
        self.rule.setToolTip("about 20 tokens per parameter: a rule of thumb (approximate)")
        self.text.setHtml(self._html(budget, model, parameters))

    def _html(self, budget: float, model, parameters: float) -> str:
        rows = []
        for fit, colour in FITS:
            n, d = fit.optimal(budget)
            at = Placement(fit, budget, parameters)
            rows.append(f"<tr><td><span style='color:{colour}'>■</span> {escape(fit.name)} "
                        f"(<a href='{fit.source}'>fit</a>)</td><td>{format_parameters(n)}</td>"
                        f"<td>{format_parameters(d)}</td><td>{d / n:.0f}</td><td>{fit.loss(n, d):.3f}</td>"
                        f"<td>{at.loss:.3f} (+{at.excess:.3f})</td></tr>")
        n, d = rule_of_thumb(budget)
        rows.append(f"<tr><td>┆ rule of thumb, 20 tokens per parameter (approximate)</td>"
                    f"<td>{format_parameters(n)}</td><td>{format_parameters(d)}</td><td>20</td><td>–</td>"
                    f"<td>–</td></tr>")
        head = ("<tr><th></th><th>N_opt</th><th>D_opt</th><th>D/N</th><th>loss</th>"
                f"<th>{escape(model.name)}</th></tr>")
        moe = (" (a mixture of experts: the fits were made on dense models)" if getattr(model, "moe", False)
               else "")
        tokens = budget / (FLOPS_PER_PARAMETER_TOKEN * parameters)
        out = [f"<p>Budget C = {budget:.3g} FLOPs = 6·N·D. {escape(model.name)}: "
               f"{format_parameters(parameters)} parameters{moe}; the budget buys it "
               f"{format_parameters(tokens)} tokens ({tokens / parameters:.0f} per parameter).</p>",
               f"<table cellspacing='4'>{head}{''.join(rows)}</table>", self._cluster_html(budget, tokens),
               f"<p><b>Why the fits differ.</b> {escape(why_they_differ(budget))}</p>",
               "<p><i>Fits: valid near the models they were fitted on (70 M to a little over 16 B "
               "parameters); beyond, they extrapolate. Losses are the fits' predictions, not "
               "measurements.</i></p>"]
        return "".join(out)

    def _cluster_html(self, budget: float, tokens: float) -> str:
        """Days the budget takes on the chosen devices at the stated utilisation, and at the
        roofline's step time when the workload is a training step."""
        hw = self.state.devices()[0]
        dtype = self.state.params.dtype if self.state.params.dtype in training.TRAINING_DTYPES else "bf16"
        peak = op_roofs(hw, dtype).matrix
        devices, mfu = self.devices.value(), self.mfu.value()
        seconds = training_seconds(budget, devices, peak.flops_per_s, mfu)
        energy = (f", {seconds * devices * hw.specs.tdp_w / 3.6e9:,.0f} MWh at TDP (every device at its TDP)"
                  if hw.specs.tdp_w else "")
        lines = [f"<p><b>On {devices:,} × {escape(hw.name)}</b> ({peak.label} "
                 f"{format_si(peak.flops_per_s, 'FLOP/s')}) at {mfu:.0%} utilisation: "
                 f"<b>{seconds / 86400:,.1f} days</b>, {seconds * devices / 3600:,.0f} "
                 f"device-hours{energy}.</p>"]
        params = self.state.params
        if params.phase == Phase.TRAIN:
            run = training.run(self.state.analysis(), tokens, mfu)
            lines.append(f"<p>At the roofline's step time for the training step in the Workload panel "
                         "(it counts recomputation and leaves communication unoverlapped) "
                         f"({params.split.devices:,} devices, {run.roofline_mfu:.0%} utilisation): "
                         f"{run.seconds(False) / 86400:,.1f} days for {format_parameters(tokens)} "
                         "tokens.</p>")
        else:
            lines.append("<p><i>Set the Workload's phase to train to compare with the roofline's "
                         "prediction of a training step.</i></p>")
        return "".join(lines)
