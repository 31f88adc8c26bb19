"""Workload panel: model preset, step parameters, the op table, totals and a memory bar."""

from __future__ import annotations

from html import escape
from typing import cast

from PySide6 import QtCore, QtWidgets

from explorer.core.analysis.report_words import expected_words, parameter_words
from explorer.core.model import parallel
from explorer.core.model.applicability import Phase
from explorer.core.model.hf_config import CONFIG_MODEL
from explorer.core.model.models import TransformerSpec
from explorer.core.model.parameters import PARAMETERS, Kind, Parameter
from explorer.core.model.session import CUSTOM, config_spec
from explorer.core.model.workload import WorkloadError
from explorer.core.units import format_bytes, format_count, format_number, format_si, format_time
from explorer.state import AppState
from explorer.ui.follow import Follower
from explorer.ui.panels.compare_box import CompareBox
from explorer.ui.panels.layer_editor import LayerStackEditor
from explorer.ui.panels.memory_bar import MemoryBar
from explorer.ui.panels.op_table import NAME_ROLE, SHARE_COLUMN, SORT_ROLE, OpTableModel, fit_columns

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


# The editor of each kind of parameter: made from its row of the table, set from a value,
# read back as a value, and the signal it changes by. A share is shown in percent; a choice
# whose default is "as another parameter" (None) offers SAME first.
def _editor(p: Parameter) -> QtWidgets.QWidget:
    if p.kind is Kind.COUNT:
        box = _spin(int(p.maximum), p.help)
        box.setMinimum(int(p.minimum))
        box.setSpecialValueText(p.zero_means)  # shown at the minimum, 0 (none: the number)
        return box
    if p.kind is Kind.SHARE:
        box = _spin(100, p.help)
        box.setRange(round(p.minimum * 100), round(p.maximum * 100))
        box.setSuffix(" %")
        return box
    if p.kind is Kind.CHOICE:
        return _combo(((SAME,) if p.default is None else ()) + p.choices, p.help)
    check = QtWidgets.QCheckBox(p.caption)
    check.setToolTip(p.help)
    return check


def _show(p: Parameter, editor: QtWidgets.QWidget, value) -> None:
    # (the editor's class follows the parameter's kind: ``_editor``)
    if p.kind is Kind.COUNT:
        cast(QtWidgets.QSpinBox, editor).setValue(value)
    elif p.kind is Kind.SHARE:
        cast(QtWidgets.QSpinBox, editor).setValue(round(value * 100))
    elif p.kind is Kind.CHOICE:
        cast(QtWidgets.QComboBox, editor).setCurrentText(SAME if value is None else value)
    else:
        cast(QtWidgets.QCheckBox, editor).setChecked(value)


def _read(p: Parameter, editor: QtWidgets.QWidget):
    if p.kind is Kind.COUNT:
        return cast(QtWidgets.QSpinBox, editor).value()
    if p.kind is Kind.SHARE:
        return cast(QtWidgets.QSpinBox, editor).value() / 100
    if p.kind is Kind.CHOICE:
        text = cast(QtWidgets.QComboBox, editor).currentText()
        return None if text == SAME else text
    return cast(QtWidgets.QCheckBox, editor).isChecked()


def _changed(p: Parameter, editor: QtWidgets.QWidget):
    if p.kind in (Kind.COUNT, Kind.SHARE):
        return cast(QtWidgets.QSpinBox, editor).valueChanged
    if p.kind is Kind.CHOICE:
        return cast(QtWidgets.QComboBox, editor).currentTextChanged
    return cast(QtWidgets.QCheckBox, editor).toggled


# Attribute names the panel has always had for a parameter's editor.
ATTRIBUTES = {"memory_fraction": "memory_share"}
# In a row of several editors (Devices: TP, PP, DP, EP): px between a caption and its editor,
# and between one editor and the next caption. The row sets the panel's least width, which
# the scroll bar beside it (``Scrolled``) adds to; these keep that within a 1024 px window.
CAPTION_GAP, EDITOR_GAP = 2, 6


def measured_words(row) -> str:
    """A class of ops' row of a comparison in words: "matrix products 1.2 ms (1.31× expected)";
    "none measured" where the profile has no kernel of the class, "none predicted" where
    the prediction has no time for it."""
    if not row.kernels:
        return f"{row.op_class}: none measured"
    against, name = (row.expected_s, "expected") if row.expected_s else (row.bound_s, "the bound")
    ratio = f"{row.measured_s / against:.2f}× {name}" if against > 0 else "none predicted"
    return f"{row.op_class} {format_time(row.measured_s)} ({ratio})"


class WorkloadPanel(QtWidgets.QWidget):
    seq: QtWidgets.QSpinBox  # (each parameter's editor is set by its name: ATTRIBUTES)
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
        self.compare_box = CompareBox(state)
        form = self._form = QtWidgets.QFormLayout()
        form.addRow("Model", model_row)
        form.addRow("Compare with", self.compare_box)
        self._build_parameter_rows(form)
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
        self.model_box.currentIndexChanged.connect(self._on_model_chosen)
        self.edit_layers.clicked.connect(self.open_layer_editor)
        for p in PARAMETERS:
            editor = self.editors[p.name]
            _changed(p, editor).connect(lambda *_, p=p, editor=editor: self._set(p.name, _read(p, editor)))
        self.table.selectionModel().currentRowChanged.connect(self._on_row_changed)
        self._follower = Follower(state, (state.sig_workload_changed, state.sig_hardware_changed,
                                          state.sig_results_changed),  # a profile's times in the totals
                                  self.refresh, self)
        state.sig_selection_changed.connect(lambda _selection: self._select_row(state.session.selected_op))
        self.refresh()

    def _measured_words(self, analysis) -> str:
        """With a profile shown: its time in each class of op against the prediction's
        ("products 1.31× expected"; kernels are told apart by name, so by class, not by op)."""
        if not self.state.profiles:
            return ""
        # (not at start-up: profiles are rare)
        from explorer.core.analysis.profile_match import compare, device_mismatch

        profile = self.state.profiles[0]
        comparison = compare(profile, analysis, self.state.expected())
        parts = [escape(measured_words(row)) for row in comparison.rows]
        mismatch = device_mismatch(profile.device, analysis.hardware)
        warning = f"<br><b>Note</b>: {escape(mismatch)}." if mismatch else ""
        words = "<br><b>Profile</b> (one step's kernels by class): " + "; ".join(parts) + "." if parts else ""
        return words + warning

    def _build_parameter_rows(self, form: QtWidgets.QFormLayout) -> None:
        """One editor per row of the parameter table, in its order: a row of the form each,
        or several in one row (``Parameter.row``), each with its caption."""
        self.editors: dict[str, QtWidgets.QWidget] = {}
        self._rows: dict[str, QtWidgets.QHBoxLayout] = {}
        for p in PARAMETERS:
            editor = self.editors[p.name] = _editor(p)
            setattr(self, ATTRIBUTES.get(p.name, p.name), editor)
            if not p.row:
                form.addRow(p.label, editor)
                continue
            if p.row not in self._rows:
                self._rows[p.row] = QtWidgets.QHBoxLayout()
                self._rows[p.row].setSpacing(CAPTION_GAP)  # a caption beside its editor
                form.addRow(p.row, self._rows[p.row])
            else:
                self._rows[p.row].addSpacing(EDITOR_GAP - CAPTION_GAP)
            self._rows[p.row].addWidget(QtWidgets.QLabel(p.caption))
            self._rows[p.row].addWidget(editor, 1)
        self.degrees = {d.name: self.editors[d.name] for d in parallel.DEGREES}

    def _show_config_item(self) -> None:
        """The model of an open config.json, as the last item of the model box."""
        index = self.model_box.findData(CONFIG_MODEL)
        config = self.state.session.model_config
        if not config:
            if index >= 0:
                self.model_box.removeItem(index)
            return
        spec = config_spec(config)
        gguf = spec.quantization is not None and spec.quantization.method == "gguf"
        held = "GGUF file" if gguf else "config.json"
        text = f"{spec.name} ({held})"
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

    def _show_rows(self, p, model) -> None:
        """Each row where its parameter applies to this model and step (``Parameter.applies``):
        shown and enabled; elsewhere greyed out (the rows every step has, ``keeps_place``) or
        hidden. A row of several parameters is hidden when none of them applies."""
        transformer = isinstance(model, TransformerSpec) or model.id == CUSTOM
        moe = bool(getattr(model, "moe", False))
        kinds = frozenset(d.kind for d in self.state.devices())  # threads: where a CPU is shown
        shared: dict[str, bool] = {}
        for parameter in PARAMETERS:
            applies = parameter.applies.holds(p, transformer, moe, kinds)
            editor = self.editors[parameter.name]
            hidden_instead = not parameter.keeps_place and not parameter.row  # (hidden, never greyed)
            editor.setEnabled(applies or hidden_instead)
            if parameter.row:
                shared[parameter.row] = shared.get(parameter.row, False) or applies or parameter.keeps_place
            else:
                self._form.setRowVisible(editor, applies or parameter.keeps_place)
        for row, shown in shared.items():
            self._form.setRowVisible(self._rows[row], shown)
        label = cast(QtWidgets.QLabel, self._form.labelForField(self.seq))  # (addRow's label)
        label.setText("Sequence tokens" if p.phase == Phase.TRAIN else "Prompt tokens")

    def refresh(self) -> None:
        """Show the state: parameters, op table, totals, memory."""
        p, model = self.state.params, self.state.model
        widgets = [self.model_box, self.compare_box, *self.editors.values()]
        for w in widgets:
            w.blockSignals(True)
        self._show_config_item()
        self.model_box.setCurrentIndex(self.model_box.findData(self.state.session.model))
        self.compare_box.show_compare(self.state.session.compare)
        for parameter in PARAMETERS:
            _show(parameter, self.editors[parameter.name], getattr(p, parameter.name))
        for w in widgets:
            w.blockSignals(False)
        self._show_rows(p, model)
        analysis = self.state.analysis()
        # During a drag only the totals follow live; the table catches up when it ends.
        if not self.state.in_gesture or self.table_model.rowCount() != len(analysis.ops):
            self.table_model.set_analysis(analysis)
            fit_columns(self.table, self.table_model)
            self._select_row(self.state.session.selected_op)
        t = analysis.totals
        unit = t.item_unit
        self.totals.setText(
            f"{escape(model.name)}: {escape(parameter_words(model))}.<br>"
            f"<b>On {escape(analysis.hardware.name)}</b>: {format_time(t.time_s)} per step at datasheet "
            f"peaks, <b>{t.tokens_per_s:,.0f} {unit}/s</b>, {t.bound}-bound "
            f"(compute alone {format_time(t.compute_time_s)}, memory alone "
            f"{format_time(t.memory_time_s)}"
            + (f", communication {format_time(t.link_time_s)}" if t.link_bytes else "")
            + ")" + (f" on {t.devices:,} devices" if t.devices > 1 else "")
            + f"; {escape(expected_words(analysis, self.state.expected()))}"
            + f".<br>{format_count(t.flops)}FLOP and {format_si(t.bytes, 'B')} per step"
            + (" and device" if t.devices > 1 else "") + f": {format_number(t.intensity)} FLOP/byte. "
            + (f"KV cache {format_bytes(t.kv_bytes_per_token)} per token." if t.kv_bytes_per_token else "")
            + self._measured_words(analysis))
        self.memory.set_totals(t)
        compared = self.state.compared()
        why = [f"{compared.name} is not drawn beside it: {compared.why}"] if compared and compared.why else []
        # what its reader said of the profile shown (a counter missing, a time read another way):
        # each note's lead clause here, the whole of each in the tooltip
        said = self.state.profiles[0].notes if self.state.profiles else ()
        read = ["Profile: " + "; ".join(_lead(note) for note in said)] if said else []
        # names are the user's: escaped
        self.notes.setText("<br>".join(escape(note) for note in (*analysis.notes, *why, *read)))
        self.notes.setToolTip("<br>".join(escape(f"Profile: {note}") for note in said))

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


def _lead(note: str) -> str:
    """A note's lead clause: what it says before its first " (" or ": " (the how and the why)."""
    cuts = [at for at in (note.find(" ("), note.find(": ")) if at > 0]
    return note[:min(cuts)] if cuts else note
