"""The custom layer-stack editor: add, remove, reorder and edit layers; OK applies the
stack as one undo step."""

from __future__ import annotations

from collections.abc import Callable

from PySide6 import QtGui, QtWidgets

from explorer.core.model.custom import COUNT, FLAG, LAYER_FIELDS, LAYER_KINDS, CustomSpec, Layer, LayerKind
from explorer.core.units import format_count

STARTER = (
    Layer(LayerKind.EMBEDDING, (("vocab", 32000), ("d", 4096))),
    Layer(LayerKind.NORM, (("d", 4096),), 32),
    Layer(LayerKind.ATTENTION, (("d_model", 4096), ("heads", 32), ("kv_heads", 8)), 32),
    Layer(LayerKind.NORM, (("d", 4096),), 32),
    Layer(LayerKind.MLP, (("d_model", 4096), ("width", 14336)), 32),
    Layer(LayerKind.LINEAR, (("d_in", 4096), ("d_out", 32000), ("role", "lm_head"))),
)


class LayerStackEditor(QtWidgets.QDialog):
    def __init__(self, layers: tuple[Layer, ...], parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Custom layer stack")
        self.resize(760, 480)
        self.layers: list[Layer] = list(layers or STARTER)
        self.list = QtWidgets.QListWidget()
        self.list.setToolTip("The stack, first layer at the top (Delete removes, Ctrl+Up/Down moves)")
        add = QtWidgets.QToolButton(text="Add layer")  # type: ignore[call-arg]  # (Qt properties as keywords: the stubs do not say)
        add.setPopupMode(QtWidgets.QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QtWidgets.QMenu(add)
        for kind in LAYER_KINDS:
            menu.addAction(kind, self._adder(kind))
        add.setMenu(menu)
        self.remove_button = QtWidgets.QPushButton("Remove")
        self.up_button = QtWidgets.QPushButton("Move up")
        self.down_button = QtWidgets.QPushButton("Move down")
        self.form_box = QtWidgets.QGroupBox("Layer")
        self.form = QtWidgets.QFormLayout(self.form_box)
        self.summary = QtWidgets.QLabel()
        self.error = QtWidgets.QLabel(wordWrap=True)
        self.error.setStyleSheet("color: #D55E00")
        buttons = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Ok
                                             | QtWidgets.QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        side = QtWidgets.QVBoxLayout()
        for widget in (add, self.remove_button, self.up_button, self.down_button):
            side.addWidget(widget)
        side.addStretch(1)
        top = QtWidgets.QHBoxLayout()
        top.addWidget(self.list, 2)
        top.addLayout(side)
        top.addWidget(self.form_box, 2)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(top, 1)
        layout.addWidget(self.summary)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        self.remove_button.clicked.connect(self.remove_layer)
        self.up_button.clicked.connect(lambda: self.move_layer(-1))
        self.down_button.clicked.connect(lambda: self.move_layer(1))
        self.list.currentRowChanged.connect(self._show_form)
        shortcuts = ((QtGui.QKeySequence.StandardKey.Delete, self.remove_layer),
                     ("Ctrl+Up", lambda: self.move_layer(-1)), ("Ctrl+Down", lambda: self.move_layer(1)))
        for keys, slot in shortcuts:
            QtGui.QShortcut(QtGui.QKeySequence(keys), self.list, activated=slot)  # type: ignore[call-overload]  # (Qt properties as keywords: the stubs do not say)
        self._refresh(0)

    # -- the list ----------------------------------------------------------------------------------
    def _refresh(self, row: int) -> None:
        self.list.blockSignals(True)
        self.list.clear()
        for layer in self.layers:
            self.list.addItem(layer.describe())
        self.list.blockSignals(False)
        row = min(max(row, 0), len(self.layers) - 1)
        self.list.setCurrentRow(row)
        self._show_form(row)
        spec = CustomSpec(tuple(self.layers))
        self.summary.setText(f"{len(self.layers)} entries, {format_count(spec.parameter_count())} "
                             f"parameters; KV cache {spec.kv_values_per_token()} values per token")
        for button in (self.remove_button, self.up_button, self.down_button):
            button.setEnabled(bool(self.layers))

    def add_layer(self, kind: str) -> None:
        row = self.list.currentRow() + 1
        self.layers.insert(row, Layer(LayerKind(kind)))
        self._refresh(row)

    def remove_layer(self) -> None:
        row = self.list.currentRow()
        if 0 <= row < len(self.layers):
            del self.layers[row]
            self._refresh(row)

    def move_layer(self, step: int) -> None:
        row = self.list.currentRow()
        target = row + step
        if 0 <= row < len(self.layers) and 0 <= target < len(self.layers):
            self.layers[row], self.layers[target] = self.layers[target], self.layers[row]
            self._refresh(target)

    # -- the form ----------------------------------------------------------------------------------
    def _show_form(self, row: int) -> None:
        while self.form.rowCount():
            self.form.removeRow(0)
        if not 0 <= row < len(self.layers):
            self.form_box.setTitle("No layer: add one")
            return
        layer = self.layers[row]
        self.form_box.setTitle(f"Layer {row}: {layer.kind}")
        repeat = QtWidgets.QSpinBox(minimum=1, maximum=10_000, value=layer.repeat)
        repeat.setToolTip("How many identical copies follow each other")
        repeat.valueChanged.connect(lambda v: self._edit(row, None, v))
        self.form.addRow("repeat", repeat)
        for name, (_default, kind, help_text) in LAYER_FIELDS[layer.kind].items():
            widget: QtWidgets.QWidget
            if kind == COUNT:
                widget = spin = QtWidgets.QSpinBox(minimum=1, maximum=10_000_000, value=layer.count(name))
                spin.setGroupSeparatorShown(True)
                spin.setKeyboardTracking(False)
                spin.valueChanged.connect(lambda v, name=name: self._edit(row, name, v))
            elif kind == FLAG:
                widget = box = QtWidgets.QCheckBox(checked=layer.flag(name))  # type: ignore[call-overload]  # (Qt properties as keywords: the stubs do not say)
                box.toggled.connect(lambda v, name=name: self._edit(row, name, v))
            else:
                widget = combo = QtWidgets.QComboBox()
                combo.addItems(list(kind))
                combo.setCurrentText(layer.text(name))
                combo.currentTextChanged.connect(lambda v, name=name: self._edit(row, name, v))
            widget.setToolTip(help_text)
            self.form.addRow(name, widget)

    def _adder(self, kind: str) -> Callable[[], None]:
        return lambda: self.add_layer(kind)

    def _edit(self, row: int, name: str | None, value) -> None:
        layer = self.layers[row]
        try:
            self.layers[row] = (Layer(layer.kind, layer.values, value) if name is None
                                else layer.with_value(name, value))
        except ValueError as exc:
            self.error.setText(f"Layer {row}: {exc}")
            return
        self.error.clear()
        self.list.item(row).setText(self.layers[row].describe())
        spec = CustomSpec(tuple(self.layers))
        self.summary.setText(f"{len(self.layers)} entries, {format_count(spec.parameter_count())} "
                             f"parameters; KV cache {spec.kv_values_per_token()} values per token")

    def _accept(self) -> None:
        if not self.layers:
            self.error.setText("The stack is empty: add at least one layer")
            return
        self.accept()

    def result_layers(self) -> tuple[Layer, ...]:
        return tuple(self.layers)
