"""The Serving dialog: the workload's model served on the primary device with the layout and
precisions the workload sets, from batch 1 to the KV-cache wall (``core.analysis.serving``).
Its picture is the serve command's (``chart.serving_chart``: tokens/s a device against
tokens/s a user, the TPOT target a line, the chosen point ringed), drawn by the app's
painter, so it looks and exports as ``serve --out`` does; beside it the plan's sentences
(``core.words.serving_plan``) and one row a batch. Every input change plans again (a plan
takes tens of milliseconds)."""

from __future__ import annotations

from typing import Any

from PySide6 import QtCore, QtWidgets

from explorer.chart.elements import Page
from explorer.chart.serving_chart import serving_chart
from explorer.core.analysis.layouts import split_name
from explorer.core.analysis.serving import Plan, plan
from explorer.core.analysis.serving_layouts import search
from explorer.core.analysis.serving_request import KV_BLOCK, MAX_TOKENS
from explorer.core.analysis.speculation import Speculation
from explorer.core.model.models import TransformerSpec
from explorer.core.model.workload import WorkloadError
from explorer.core.units import format_number
from explorer.core.words.serving_plan import plan_sentences
from explorer.state import AppState
from explorer.ui.chart.picture import Picture, picture_buttons, save_picture

COLUMNS = ("batch", "TPOT", "TTFT", "tokens/s a device", "tokens/s a user", "$/1M tokens", "J/token at TDP",
           "J/token (estimate)")
RIGHT = QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter
DEFAULT_TTFT_MS, DEFAULT_TPOT_MS = 500.0, 50.0  # the targets issue 30 gives as its example


class ServingView(Picture):
    """The plan's picture."""

    def __init__(self, theme: str, parent=None) -> None:
        super().__init__(theme, parent)
        self.plan: Plan | None = None
        self.title = ""
        self.tpot_target_s: float | None = None
        self.others: tuple = ()  # (name, plan) of other layouts drawn beside it
        self.name = ""

    def show_plan(self, result: Plan | None, title: str, tpot_target_s: float | None, others: tuple = (),
                  name: str = "") -> None:
        self.plan, self.title, self.tpot_target_s = result, title, tpot_target_s
        self.others, self.name = others, name
        self.update()

    def shown(self) -> bool:
        return self.plan is not None

    def chart(self, page: Page):
        assert self.plan is not None  # (drawn when shown)
        return serving_chart(self.plan, page, self.theme, self.title, self.tpot_target_s, others=self.others,
                             name=self.name)


def _spin(low: float, high: float, value: float, suffix: str, tip: str, none: str = "",
          decimals: int = 0) -> QtWidgets.QDoubleSpinBox:
    """A number field; at ``low`` it reads ``none`` (no target, no price) when given."""
    box = QtWidgets.QDoubleSpinBox()
    box.setRange(low, high)
    box.setDecimals(decimals)
    box.setValue(value)
    box.setSuffix(suffix)
    box.setKeyboardTracking(False)
    box.setToolTip(tip)
    if none:
        box.setSpecialValueText(none)
    return box


class ServingDialog(QtWidgets.QDialog):
    """``settings``: where the fields' values are kept between openings (the window's)."""

    def __init__(self, state: AppState, theme: str = "light", parent=None,
                 settings: QtCore.QSettings | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.settings = settings
        self.setWindowTitle("Serving")
        self.resize(1000, 720)  # within a 1024×768 projector's screen, its title bar included
        self._make_fields()
        self.view = ServingView(theme)
        self.compare = QtWidgets.QCheckBox("Compare layouts")
        self.compare.setToolTip("Beside the workload's layout, the three best other splits of its devices, "
                                "planned alike (dashed curves); not under a load, where every split gives "
                                "the load's tokens/s")
        self.summary = QtWidgets.QLabel(wordWrap=True)
        self.summary.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = QtWidgets.QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        buttons, self.export_button = picture_buttons(self)
        self._lay_out(buttons)
        self.planned: Plan | None = None  # (not ``result``: QDialog.result() is the dialog's code)
        self._planning = False
        self.fields = {"prompt": self.prompt, "output": self.output, "ttft": self.ttft, "tpot": self.tpot,
                       "price": self.price, "block": self.block, "hit": self.hit, "chunk": self.chunk,
                       "offload": self.offload, "load": self.load, "gamma": self.gamma, "alpha": self.alpha}
        self._recall()
        for box in self.fields.values():
            box.valueChanged.connect(self.replan)
        self.compare.toggled.connect(self.replan)
        self.draft.currentIndexChanged.connect(self.replan)
        self.replan()

    def _make_fields(self) -> None:
        """The request's, the targets', the engine's and the draft's fields."""
        self.prompt = _spin(1, MAX_TOKENS - 1, 1024, " tokens", "Prompt tokens of a request")
        self.output = _spin(1, MAX_TOKENS - 1, 1024, " tokens", "Tokens a request generates")
        self.ttft = _spin(0, 1e6, DEFAULT_TTFT_MS, " ms", "Time to first token the requests must meet "
                          "(one prompt's prefill); at 0: no target", none="no target", decimals=1)
        self.tpot = _spin(0, 1e6, DEFAULT_TPOT_MS, " ms", "Time per output token the requests must meet "
                          "(the decode step at the batch); at 0: no target", none="no target", decimals=1)
        self.price = _spin(0, 1e6, 0, " $/h", "What a device costs an hour, for $ per million tokens; at 0: "
                           "no price", none="no price", decimals=2)
        self.block = _spin(1, 1 << 16, KV_BLOCK, " tokens", "Tokens in a page of the KV cache (16: vLLM's)")
        self.chunk = _spin(0, 1 << 20, 0, " tokens", "Continuous batching with chunked prefill: prompt "
                           "tokens a decode step also prefills, from one prompt at a time; at 0 "
                           "prefills run on their own", none="prefills apart")
        self.offload = _spin(0, 1 << 20, 0, " GiB", "KV offload: host memory a device may fill with KV "
                             "caches beyond its own, read over its host link every step; at 0 none",
                             none="none", decimals=1)
        self.load = _spin(0, 1e6, 0, " req/s", "The load: requests arriving a second, at random; the "
                          "batches that keep up, each with its wait for a slot, and the one with the "
                          "shortest time in the system; at 0 the most tokens/s a device",
                          none="most tokens/s", decimals=2)
        self.hit = _spin(0, 99, 0, " %", "Prefix caching: the share of each prompt found in the cache (a "
                         "shared system prompt), in whole pages; the prefill computes the rest", none="none")
        self.draft = QtWidgets.QComboBox()
        self.draft.addItem("none", "")
        for ident, spec in self.state.models.items():
            if isinstance(spec, TransformerSpec):
                self.draft.addItem(spec.name, ident)
        self.draft.setToolTip("Speculative decoding: the model that drafts tokens for the target to check")
        self.gamma = _spin(1, 64, 4, " tokens", "Tokens the draft proposes a step (γ)")
        self.alpha = _spin(0, 0.99, 0.7, "", "The chance each drafted token is accepted (α)", decimals=2)

    def _recall(self) -> None:
        """The fields as they were last left (values the fields cannot take are ignored)."""
        settings = self.settings
        for name, box in self.fields.items() if settings is not None else ():
            assert settings is not None
            stored: Any = settings.value(f"serving/{name}", box.value())  # (text or a number)
            try:
                value = float(stored)
            except (TypeError, ValueError):
                continue
            if box.minimum() <= value <= box.maximum():
                box.setValue(value)
        if self.settings is not None:  # the draft model by its id (an id no longer listed: none)
            remembered = str(self.settings.value("serving/draft", ""))
            self.draft.setCurrentIndex(max(0, self.draft.findData(remembered)))

    def _lay_out(self, buttons: QtWidgets.QDialogButtonBox) -> None:
        controls = QtWidgets.QGridLayout()
        fields = (("Prompt", self.prompt), ("Output", self.output), ("KV page", self.block),
                  ("Prefix hit", self.hit), ("TTFT target", self.ttft), ("TPOT target", self.tpot),
                  ("Price a device", self.price), ("Prefill chunk", self.chunk), ("KV offload", self.offload),
                  ("Arrival rate", self.load), ("Draft model", self.draft), ("Draft tokens", self.gamma),
                  ("Acceptance", self.alpha))
        for i, (label, box) in enumerate(fields):
            controls.addWidget(QtWidgets.QLabel(label), i // 4, 2 * (i % 4))
            controls.addWidget(box, i // 4, 2 * (i % 4) + 1)
        controls.addWidget(self.compare, len(fields) // 4, 2 * (len(fields) % 4), 1, 2)
        split = QtWidgets.QSplitter(QtCore.Qt.Orientation.Vertical)
        split.addWidget(self.view)
        split.addWidget(self.table)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(controls)
        layout.addWidget(split, 1)
        layout.addWidget(self.summary)
        layout.addWidget(buttons)

    def targets(self) -> tuple[float | None, float | None, float | None]:
        """(TTFT target s, TPOT target s, price $/h), None where the field says none."""
        def given(box: QtWidgets.QDoubleSpinBox, scale: float) -> float | None:
            return box.value() * scale if box.value() > box.minimum() else None

        return given(self.ttft, 1e-3), given(self.tpot, 1e-3), given(self.price, 1.0)

    def replan(self) -> None:
        """Plan again with the fields' values (kept for the next opening); a workload that
        cannot be served says why. (A search's progress dialog lets events through: a change
        meanwhile waits for the next.)"""
        if self._planning:
            return
        self._planning = True
        try:
            self._replan()
        finally:
            self._planning = False

    def _replan(self) -> None:
        state, hardware = self.state, self.state.primary
        settings = self.settings
        for name, box in self.fields.items() if settings is not None else ():
            assert settings is not None
            settings.setValue(f"serving/{name}", box.value())
        if self.settings is not None:
            self.settings.setValue("serving/draft", self.draft.currentData())
        options = self.options()
        try:
            self.planned = plan(state.model, state.params, hardware, int(self.prompt.value()),
                               int(self.output.value()), **options)
        except WorkloadError as error:
            self.planned = None
            self.summary.setText(f"Cannot plan serving: {error}")
            self.summary.setStyleSheet("color: #B00020")
            self.table.setRowCount(0)
            self.view.show_plan(None, "", None)
            self.export_button.setEnabled(False)
            return
        self.summary.setStyleSheet("")
        self.summary.setText(" ".join(plan_sentences(self.planned, state.model.name, hardware)))
        loaded = options["arrival_rate"] is not None  # every split gives the load's tokens/s: no ranking
        self.compare.setEnabled(not loaded)
        if not self.planned.points:  # a load no batch keeps up with: nothing to draw
            self.view.show_plan(None, "", None)
            self.export_button.setEnabled(False)
            self.table.setRowCount(0)
            return
        others = self.other_layouts(options) if self.compare.isChecked() and not loaded else ()
        name = split_name(*_degrees(state.params.split)) if others else ""
        self.view.show_plan(self.planned, self.title(), options["tpot_target_s"], others, name)
        self.export_button.setEnabled(True)
        self._fill_table()

    def options(self) -> dict:
        """``serving.plan``'s keywords from the fields."""
        ttft, tpot, price = self.targets()
        return dict(ttft_target_s=ttft, tpot_target_s=tpot, price_per_device_hour=price,
                    block=int(self.block.value()), prefix_hit=self.hit.value() / 100,
                    prefill_chunk=int(self.chunk.value()) or None,
                    kv_offload_bytes=self.offload.value() * 2**30, arrival_rate=self.load.value() or None,
                    speculation=self.speculation())

    def speculation(self) -> Speculation | None:
        """The draft model the fields name, with its tokens and acceptance (None: no draft)."""
        ident = self.draft.currentData()
        if not ident:
            return None
        return Speculation(self.state.models[ident], int(self.gamma.value()), self.alpha.value())

    def other_layouts(self, options: dict) -> tuple:
        """The three best other splits of the workload's devices, planned alike (name, plan);
        a search of more than a moment shows its progress and can be stopped."""
        state = self.state
        bar = QtWidgets.QProgressDialog("Planning the other layouts…", "Stop", 0, 0, self)
        bar.setMinimumDuration(500)
        bar.setWindowModality(QtCore.Qt.WindowModality.WindowModal)

        def progress(done: int, total: int) -> bool:
            bar.setMaximum(total)
            bar.setValue(done)
            return not bar.wasCanceled()

        try:
            ranked = search(state.model, state.params, state.primary, state.params.split.devices,
                            int(self.prompt.value()), int(self.output.value()), progress, **options)
        except WorkloadError:
            ranked = []
        finally:
            bar.close()
        own = _degrees(state.params.split)
        return tuple((s.name, s.plan) for s in ranked if s.plan is not None and s.split != own)[:3]

    def title(self) -> str:
        assert self.planned is not None  # (a title is asked for a plan shown)
        return f"Serving {self.state.model.name} on {self.planned.devices} × {self.state.primary.name}"

    def _fill_table(self) -> None:
        assert self.planned is not None  # (filled for a plan shown)
        points = self.planned.points
        self.table.setRowCount(len(points))
        chosen = self.planned.chosen
        for row, p in enumerate(points):
            cells = (f"{p.batch:,}", f"{p.tpot_s * 1e3:.2f} ms", f"{p.ttft_s * 1e3:.1f} ms",
                     format_number(p.tokens_per_s_per_device), format_number(p.tokens_per_s_per_user),
                     "–" if p.cost_per_million_tokens is None else f"${p.cost_per_million_tokens:.3f}",
                     "–" if p.joules_per_token is None else f"{p.joules_per_token:.3g} J",
                     "–" if p.joules_per_token_estimate is None else f"{p.joules_per_token_estimate:.3g} J")
            for column, text in enumerate(cells):
                item = QtWidgets.QTableWidgetItem(text)
                item.setTextAlignment(RIGHT)
                if chosen is not None and p.batch == chosen.batch:
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                    item.setToolTip(f"The chosen point; no larger batch: {chosen.limited_by}")
                self.table.setItem(row, column, item)
        self.table.resizeColumnsToContents()

    def export(self, path: str | None = None) -> bool:
        """Save the picture (with the compared layouts where shown) laid out for a slide
        (``path``: asked for when None)."""
        return self.planned is not None and save_picture(self, self.view, self.title(), "serving.png", path)


def _degrees(split) -> tuple[int, int, int, int]:
    return split.tp, split.pp, split.dp, split.ep
