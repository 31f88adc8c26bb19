"""Workload panel: model preset, step parameters, the op table, totals and a memory bar."""

from __future__ import annotations

from html import escape

from PySide6 import QtCore, QtWidgets

from explorer.core.analysis.report import parameter_words
from explorer.core.model import parallel
from explorer.core.model.hf_config import CONFIG_MODEL
from explorer.core.model.models import TransformerSpec
from explorer.core.model.session import CUSTOM, config_spec
from explorer.core.model.workload import (
    ATTENTIONS,
    MAX_BATCH,
    MAX_TOKENS,
    PHASES,
    ROUTINGS,
    SCALE_DTYPES,
    WEIGHT_FORMATS,
    WORKLOAD_DTYPES,
    WorkloadError,
)
from explorer.core.units import format_bytes, format_count, format_number, format_si, format_time
from explorer.state import AppState
from explorer.ui.follow import Follower
from explorer.ui.panels.layer_editor import LayerStackEditor
from explorer.ui.panels.memory_bar import MemoryBar
from explorer.ui.panels.op_table import NAME_ROLE, SHARE_COLUMN, SORT_ROLE, OpTableModel

SAME = "same as dtype"


def _spin(maximum: int, tooltip: str) -> QtWidgets.QSpinBox:
    box = QtWidgets.QSpinBox()
    box.setRange(1, maximum)
    box.setKeyboardTracking(False)  # one change when the user has finished typing
    box.setAccelerated(True)
    box.setGroupSeparatorShown(True)
    box.setToolTip(tooltip)
    return box


def _combo(items, tooltip: str) -> QtWidgets.QComboBox:
    box = QtWidgets.QComboBox()
    box.addItems(list(items))
    box.setToolTip(tooltip)
    return box


class WorkloadPanel(QtWidgets.QWidget):
    def __init__(self, state: AppState, parent=None) -> None:
        super().__init__(parent)
        self.state = state
        self.model_box = QtWidgets.QComboBox()
        self.model_box.setToolTip("Model preset (configurations from the published configs)")
        for ident, spec in state.models.items():
            self.model_box.addItem(spec.name, ident)
        self.model_box.addItem("Custom stack", CUSTOM)  # a config.json's model joins when one is open
        self.edit_layers = QtWidgets.QPushButton("Edit layers…")
        self.edit_layers.setToolTip("Build your own stack of layers (linear, attention, MLP, norm, "
                                    "softmax, elementwise, conv2d, embedding)")
        model_row = QtWidgets.QHBoxLayout()
        model_row.addWidget(self.model_box, 1)
        model_row.addWidget(self.edit_layers)
        self.phase = _combo(PHASES, "prefill: process the prompt; decode: one new token per sequence; "
                                    "train: forward, backward and the optimizer over whole sequences")
        self.batch = _spin(MAX_BATCH, "Sequences (or images) per step")
        self.seq = _spin(MAX_TOKENS, "Prompt tokens per sequence (prefill)")
        self.context = _spin(MAX_TOKENS, "Cached tokens each new token attends over (decode)")
        self.dtype = _combo(WORKLOAD_DTYPES, "Precision of activations and arithmetic")
        self.weight_dtype = _combo((SAME, *WORKLOAD_DTYPES, *WEIGHT_FORMATS),
                                   "Precision of stored weights. int4, fp4, nvfp4 and mxfp4 are "
                                   "dequantised to the compute precision (they run at its peak); "
                                   "their group scales are read with them")
        self.weight_group = _spin(1 << 16, "int4 / fp4 weights: values sharing one scale (GPTQ and "
                                           "AWQ use 128; nvfp4 and mxfp4 have fixed blocks of 16 and 32)")
        self.weight_scale = _combo(SCALE_DTYPES, "int4 / fp4 weights: the precision of the group scales")
        group_row = self._group_row = QtWidgets.QHBoxLayout()
        group_row.addWidget(QtWidgets.QLabel("group"))
        group_row.addWidget(self.weight_group, 1)
        group_row.addWidget(QtWidgets.QLabel("scale"))
        group_row.addWidget(self.weight_scale, 1)
        self.kv_dtype = _combo((SAME, *WORKLOAD_DTYPES), "Precision of the KV cache")
        self.attention = _combo(ATTENTIONS, "naive writes the score matrix to memory; fused keeps "
                                            "it on chip")
        self.memory_share = _spin(100, "Share of the device's usable memory a serving engine may fill "
                                       "with weights, KV cache and activations (vLLM's "
                                       "gpu_memory_utilization; 90% is its default). \"Fits\" and the "
                                       "largest batch use it.")
        self.routing = _combo(ROUTINGS, "Mixture of experts: the expert weights a step reads. uniform: "
                                        "the experts its tokens touch if each picks its experts "
                                        "uniformly at random, E·(1 − (1 − k/E)^tokens); all: every "
                                        "expert (the worst case)")
        self.causal = QtWidgets.QCheckBox("skip masked scores")
        self.causal.setToolTip("Prefill with a causal mask: compute only the query-key pairs the mask "
                               "keeps (t(t+1)/2 of t²), as kernels that skip masked tiles do. Bytes "
                               "stay: every key and value is still read.")
        self.recompute = QtWidgets.QCheckBox("recompute activations")
        self.recompute.setToolTip("Training: keep only each layer's input and recompute the rest in the "
                                  "backward pass (one more forward: ×4 instead of ×3 the forward's work)")
        self.degrees = {}
        split_row = self._split_row = QtWidgets.QHBoxLayout()
        for degree in parallel.DEGREES:
            tip = f"{degree.long.capitalize()}: {degree.help}"
            box = self.degrees[degree.name] = _spin(degree.maximum, tip)
            split_row.addWidget(QtWidgets.QLabel(degree.short))
            split_row.addWidget(box, 1)
        self.memory_share.setRange(5, 100)
        self.memory_share.setSuffix(" %")
        form = self._form = QtWidgets.QFormLayout()
        form.addRow("Model", model_row)
        form.addRow("Phase", self.phase)
        form.addRow("Batch", self.batch)
        form.addRow("Prompt tokens", self.seq)
        form.addRow("Context", self.context)
        form.addRow("Precision", self.dtype)
        form.addRow("Weights", self.weight_dtype)
        form.addRow("Weight scales", group_row)
        form.addRow("KV cache", self.kv_dtype)
        form.addRow("Attention", self.attention)
        form.addRow("Causal mask", self.causal)
        form.addRow("Devices", split_row)
        form.addRow("Training", self.recompute)
        form.addRow("Memory share", self.memory_share)
        form.addRow("Expert weights", self.routing)
        self.table_model = OpTableModel(self)
        self.proxy = QtCore.QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.table_model)
        self.proxy.setSortRole(SORT_ROLE)
        self.table = QtWidgets.QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(SHARE_COLUMN, QtCore.Qt.SortOrder.DescendingOrder)  # largest share first
        self.table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(QtWidgets.QHeaderView.ResizeMode.Interactive)
        self.totals = QtWidgets.QLabel(wordWrap=True)
        self.totals.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        self.memory = MemoryBar()
        self.notes = QtWidgets.QLabel(wordWrap=True)
        self.notes.setStyleSheet("color: #D55E00")
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(form)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.totals)
        layout.addWidget(self.memory)
        layout.addWidget(self.notes)
        self._editors = {
            "phase": self.phase, "batch": self.batch, "seq": self.seq, "context": self.context,
            "dtype": self.dtype, "weight_dtype": self.weight_dtype, "kv_dtype": self.kv_dtype,
            "attention": self.attention, "routing": self.routing, "weight_group": self.weight_group,
            "weight_scale": self.weight_scale, **self.degrees,
        }
        self.model_box.currentIndexChanged.connect(self._on_model_chosen)
        self.edit_layers.clicked.connect(self.open_layer_editor)
        for name, widget in self._editors.items():
            if isinstance(widget, QtWidgets.QSpinBox):
                widget.valueChanged.connect(lambda value, name=name: self._set(name, value))
            else:
                widget.currentTextChanged.connect(lambda text, name=name: self._set(name, text))
        self.memory_share.valueChanged.connect(lambda value: self._set("memory_fraction", value / 100))
        self.causal.toggled.connect(lambda on: self._set("causal", on))
        self.recompute.toggled.connect(lambda on: self._set("recompute", on))
        self.table.selectionModel().currentRowChanged.connect(self._on_row_changed)
        self._follower = Follower(state, (state.sig_workload_changed, state.sig_hardware_changed),
                                  self.refresh, self)
        state.sig_selection_changed.connect(lambda _selection: self._select_row(state.session.selected_op))
        self.refresh()

    def _show_config_item(self) -> None:
        """The model of an open config.json, as the last item of the model box."""
        index = self.model_box.findData(CONFIG_MODEL)
        config = self.state.session.model_config
        if not config:
            if index >= 0:
                self.model_box.removeItem(index)
            return
        text = f"{config_spec(config).name} (config.json)"
        if index < 0:
            self.model_box.addItem(text, CONFIG_MODEL)
        else:
            self.model_box.setItemText(index, text)

    def _on_model_chosen(self, _index: int) -> None:
        ident = self.model_box.currentData()
        if ident == CUSTOM and not self.state.session.custom_layers:
            self.open_layer_editor()
            self.refresh()  # back to the previous model if the editor was cancelled
        else:
            self.state.set_model(ident)

    def open_layer_editor(self) -> bool:
        dialog = LayerStackEditor(self.state.session.custom_layers, self)
        if dialog.exec() != QtWidgets.QDialog.DialogCode.Accepted:
            return False
        self.state.set_custom_layers(dialog.result_layers())
        return True

    def _set(self, name: str, value) -> None:
        if value == SAME:
            value = None
        try:
            self.state.set_params(**{name: value})
        except WorkloadError as exc:  # the widgets' ranges make this rare: say so, keep going
            self.state.sig_message.emit(str(exc))
            self.refresh()

    def refresh(self) -> None:
        """Show the state: parameters, op table, totals, memory."""
        p, model = self.state.params, self.state.model
        widgets = [self.model_box, self.memory_share, self.causal, self.recompute, *self._editors.values()]
        for w in widgets:
            w.blockSignals(True)
        self._show_config_item()
        self.model_box.setCurrentIndex(self.model_box.findData(self.state.session.model))
        self.phase.setCurrentText(p.phase)
        self.batch.setValue(p.batch)
        self.seq.setValue(p.seq)
        self.context.setValue(p.context)
        self.dtype.setCurrentText(p.dtype)
        self.weight_dtype.setCurrentText(p.weight_dtype or SAME)
        self.kv_dtype.setCurrentText(p.kv_dtype or SAME)
        self.attention.setCurrentText(p.attention)
        self.memory_share.setValue(round(p.memory_fraction * 100))
        self.routing.setCurrentText(p.routing)
        self.weight_group.setValue(p.weight_group)
        self.weight_scale.setCurrentText(p.weight_scale)
        self.causal.setChecked(p.causal)
        self.recompute.setChecked(p.recompute)
        for name, box in self.degrees.items():
            box.setValue(getattr(p, name))
        for w in widgets:
            w.blockSignals(False)
        transformer = isinstance(model, TransformerSpec) or model.id == CUSTOM
        for w in (self.phase, self.kv_dtype, self.attention):
            w.setEnabled(transformer)
        self._form.setRowVisible(self.routing, getattr(model, "moe", False))
        # The block formats (nvfp4, mxfp4) fix their own groups and scales.
        self._form.setRowVisible(self._group_row, p.weight_dtype in ("int4", "fp4"))
        self.seq.setEnabled(transformer and p.phase != "decode")
        label = self._form.labelForField(self.seq)
        label.setText("Sequence tokens" if p.phase == "train" else "Prompt tokens")
        # Rows that apply only sometimes are shown only then (the table keeps its room).
        self._form.setRowVisible(self.causal, transformer and p.phase != "decode")
        self._form.setRowVisible(self.recompute, p.phase == "train")
        for name in ("tp", "pp", "ep"):
            self.degrees[name].setEnabled(transformer if name != "ep" else getattr(model, "moe", False))
        self.context.setEnabled(transformer and p.phase == "decode")
        analysis = self.state.analysis()
        # During a drag only the totals follow live; the table catches up when it ends.
        if not self.state.in_gesture or self.table_model.rowCount() != len(analysis.ops):
            self.table_model.set_analysis(analysis)
            self.table.resizeColumnsToContents()
            self._select_row(self.state.session.selected_op)
        t = analysis.totals
        unit = t.item_unit
        self.totals.setText(
            f"{escape(model.name)}: {escape(parameter_words(model))}.<br>"
            f"<b>On {escape(analysis.hardware.name)}</b>: {format_time(t.time_s)} per step, "
            f"<b>{t.tokens_per_s:,.0f} {unit}/s</b>, {t.bound}-bound "
            f"(compute alone {format_time(t.compute_time_s)}, memory alone "
            f"{format_time(t.memory_time_s)}"
            + (f", communication {format_time(t.link_time_s)}" if t.link_bytes else "")
            + ")" + (f" on {t.devices:,} devices" if t.devices > 1 else "")
            + f".<br>{format_count(t.flops)}FLOP and {format_si(t.bytes, 'B')} per step"
            + (" and device" if t.devices > 1 else "") + f": {format_number(t.intensity)} FLOP/byte. "
            + (f"KV cache {format_bytes(t.kv_bytes_per_token)} per token." if t.kv_bytes_per_token else ""))
        self.memory.set_totals(t)
        self.notes.setText("<br>".join(escape(note) for note in analysis.notes))  # names are the user's

    def _on_row_changed(self, current, _previous) -> None:
        if current.isValid():
            self.state.select_op(self.proxy.data(current, NAME_ROLE))

    def _select_row(self, name) -> None:
        row = self.table_model.row_of(name) if name else -1
        selection = self.table.selectionModel()
        selection.blockSignals(True)
        if row < 0:
            self.table.clearSelection()
        else:
            index = self.proxy.mapFromSource(self.table_model.index(row, 0))
            self.table.selectRow(index.row())
            self.table.scrollTo(index)
        selection.blockSignals(False)
