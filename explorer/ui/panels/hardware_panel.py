"""Hardware panel: a searchable catalogue to overlay, a details card, the local machine,
and "duplicate and edit" for custom devices (YAML validated like the catalogue)."""

from __future__ import annotations

import functools
from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from explorer.core.files.atomic import write_text_atomic
from explorer.core.files.datafile import DataFileError, dump_yaml
from explorer.core.hardware.catalog import hardware_to_dict, load_hardware_file, open_catalogue
from explorer.core.hardware.grouping import catalogue_groups, group_title, row_name, search
from explorer.core.units import format_si, rate_unit
from explorer.kernels.cpuinfo import cpu_model, describe_cpu
from explorer.paths import user_path
from explorer.runs import Jobs, gpu_job
from explorer.state import AppState
from explorer.ui.follow import Follower
from explorer.ui.panels.device_html import device_card

ID_ROLE = QtCore.Qt.ItemDataRole.UserRole


def _unavailable(info) -> bool:
    """Whether the GPU probe found none usable (its module loads with the probe, not at start-up)."""
    from explorer.kernels import gpuinfo

    return isinstance(info, gpuinfo.Unavailable)


class HardwarePanel(QtWidgets.QWidget):
    def __init__(self, state: AppState, runs: Jobs | None = None, parent=None) -> None:
        """``runs``: where the local GPU is looked for (none: the card says "looking")."""
        super().__init__(parent)
        self.state, self.runs = state, runs
        self.search = QtWidgets.QLineEdit(placeholderText="Search: 4090, Orin, Grace, AMD…")
        self.search.setClearButtonEnabled(True)
        self.search.setToolTip("Filter the list by id, name, short name, vendor, kind or class (data centre, "
                                  "workstation, desktop, laptop, edge); Ctrl+F jumps here")
        self.tree = QtWidgets.QTreeWidget()
        self.tree.setHeaderHidden(True)
        self.tree.setIndentation(14)  # kind, class, vendor: three levels in a 260-px panel
        self.tree.setToolTip("Tick up to four devices to overlay their roofs; select one to see its card")
        self.card = QtWidgets.QTextBrowser(openExternalLinks=True)
        self.primary_button = QtWidgets.QPushButton("Make primary")
        self.primary_button.setToolTip("Cost the workload's table and totals on the selected device")
        self.duplicate_button = QtWidgets.QPushButton("Duplicate and edit…")
        self.duplicate_button.setToolTip("Make a custom device from the selected one (saved in your "
                                         "data folder, validated like the catalogue)")
        buttons = QtWidgets.QHBoxLayout()
        buttons.addWidget(self.primary_button)
        buttons.addWidget(self.duplicate_button)
        splitter = QtWidgets.QSplitter(QtCore.Qt.Orientation.Vertical)
        splitter.addWidget(self.tree)
        splitter.addWidget(self.card)
        splitter.setSizes([300, 300])
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.search)
        layout.addWidget(splitter, 1)
        layout.addLayout(buttons)
        self._items: dict[str, QtWidgets.QTreeWidgetItem] = {}
        self._groups: list[QtWidgets.QTreeWidgetItem] = []  # kinds, classes and vendors
        self._primary: str | None = None  # the chart's primary device, as last shown
        self._local: QtWidgets.QTreeWidgetItem | None = None
        self._build()
        self.search.textChanged.connect(self._filter)
        self.tree.itemChanged.connect(self._on_tree_item_changed)
        self.tree.currentItemChanged.connect(lambda item, _prev: self._show_card(item))
        self.primary_button.clicked.connect(self._on_primary_clicked)
        self.duplicate_button.clicked.connect(self._on_duplicate_clicked)
        self._follower = Follower(state, (state.sig_hardware_changed,), self._sync_checks, self)
        state.sig_catalog_changed.connect(self._rebuild)
        if runs is not None:
            runs.sig_finished.connect(self._on_job_finished)
        self.tree.setCurrentItem(self._items[state.session.primary])  # its card, from the start
        self._sync_checks()

    # -- building ------------------------------------------------------------------------------
    def _build(self) -> None:
        self.tree.blockSignals(True)
        self.tree.clear()
        self._items.clear()
        self._groups = []
        for kind, classes in catalogue_groups(self.state.catalog.values()):
            kind_item = self._group_item(group_title(kind), sum(
                len(d) for vendors in classes.values() for d in vendors.values()))
            self.tree.addTopLevelItem(kind_item)
            for title, vendors in classes.items():
                # One vendor in a class: named on the class's row, a level less to indent
                # in a narrow panel ("Edge · NVIDIA (7)").
                if len(vendors) == 1:
                    [(vendor, devices)] = vendors.items()
                    class_item = self._group_item(f"{title} · {vendor}", len(devices))
                    kind_item.addChild(class_item)
                    for hw in devices:
                        class_item.addChild(self._device_item(hw))
                    continue
                class_item = self._group_item(title, sum(len(d) for d in vendors.values()))
                kind_item.addChild(class_item)
                for vendor, devices in vendors.items():
                    vendor_item = self._group_item(vendor, len(devices))
                    class_item.addChild(vendor_item)
                    for hw in devices:
                        vendor_item.addChild(self._device_item(hw))
        self._local = QtWidgets.QTreeWidgetItem(["This machine"])
        self._local.setFlags(QtCore.Qt.ItemFlag.ItemIsEnabled | QtCore.Qt.ItemFlag.ItemIsSelectable)
        self.tree.addTopLevelItem(self._local)
        cpu_item = QtWidgets.QTreeWidgetItem([f"CPU: {cpu_model()}"])
        cpu_item.setData(0, ID_ROLE, "local:cpu")
        self._local.addChild(cpu_item)
        self._gpu_item = QtWidgets.QTreeWidgetItem(["GPU: looking…"])
        self._gpu_item.setData(0, ID_ROLE, "local:gpu")
        self._local.addChild(self._gpu_item)
        self._gpu = None
        self.tree.expandAll()
        self.tree.blockSignals(False)

    def _group_item(self, text: str, count: int) -> QtWidgets.QTreeWidgetItem:
        group = QtWidgets.QTreeWidgetItem([f"{text} ({count})"])
        group.setFlags(QtCore.Qt.ItemFlag.ItemIsEnabled)
        self._groups.append(group)
        return group

    def _device_item(self, hw) -> QtWidgets.QTreeWidgetItem:
        best = max(hw.peaks, key=lambda p: p.flops_per_s)
        item = QtWidgets.QTreeWidgetItem([row_name(hw)])
        item.setData(0, ID_ROLE, hw.id)
        item.setFlags(item.flags() | QtCore.Qt.ItemFlag.ItemIsUserCheckable)
        item.setCheckState(0, QtCore.Qt.CheckState.Unchecked)
        item.setToolTip(0, f"{hw.name} ({hw.id}): {format_si(best.flops_per_s, 'FLOP/s')} {best.label}, "
                           f"{format_si(hw.bandwidth_bytes_per_s, 'B/s')}")
        self._items[hw.id] = item
        return item

    def _rebuild(self) -> None:
        gpu = self._gpu
        self._build()
        if gpu is not None:
            self._on_gpu_found(gpu)
        self._filter(self.search.text())
        self._sync_checks()

    def item(self, ident: str) -> QtWidgets.QTreeWidgetItem:
        """The list entry of catalogue device ``ident`` (tick it to overlay the device)."""
        return self._items[ident]

    def probe_gpu(self) -> None:
        """Look for a GPU off the GUI thread (importing CuPy takes seconds)."""
        if self.runs is not None:
            self.runs.detect_gpu(0)

    def _on_job_finished(self, job: str, result) -> None:
        if job == gpu_job(0):
            self._on_gpu_found(result)

    def _on_gpu_found(self, info) -> None:
        self._gpu = info
        if _unavailable(info):
            self._gpu_item.setText(0, "GPU: none usable")
            self._gpu_item.setToolTip(0, info.reason)
        else:
            from explorer.kernels.reference import match_device

            match = match_device(info.name, self.state.catalog)
            self._gpu_item.setText(0, f"GPU: {info.name}" + (f" (= {match.id})" if match else ""))

    def _sync_checks(self) -> None:
        shown = self.state.session.hardware
        self.tree.blockSignals(True)
        for ident, item in self._items.items():
            item.setCheckState(0, QtCore.Qt.CheckState.Checked if ident in shown
                               else QtCore.Qt.CheckState.Unchecked)
            font = item.font(0)
            font.setBold(ident == shown[0])
            item.setFont(0, font)
        if shown[0] != self._primary:  # a scene or a session changed the chart: the card follows
            self._primary = shown[0]
            if shown[0] in self._items:
                self.tree.setCurrentItem(self._items[shown[0]])
        self.tree.blockSignals(False)
        if not self.state.in_gesture:  # re-rendering the card on every drag step costs frames
            self._show_card(self.tree.currentItem())

    def _filter(self, text: str) -> None:
        found = search(self.state.catalog.values(), text)
        for ident, item in self._items.items():
            item.setHidden(ident not in found)
        # vendors before their class and kind: a group with nothing shown hides
        for group in reversed(self._groups):
            children = (group.child(i) for i in range(group.childCount()))
            group.setHidden(all(child is None or child.isHidden() for child in children))

    # -- reacting --------------------------------------------------------------------------------
    def _on_tree_item_changed(self, item: QtWidgets.QTreeWidgetItem, _column: int) -> None:
        ident = item.data(0, ID_ROLE)
        if ident in self._items:
            self.state.toggle_device(ident, item.checkState(0) == QtCore.Qt.CheckState.Checked)
            self._sync_checks()  # a refused change (a fifth device) unticks again

    def _selected_id(self) -> str | None:
        item = self.tree.currentItem()
        ident = item.data(0, ID_ROLE) if item else None
        return ident if ident in self._items else None

    def _on_primary_clicked(self) -> None:
        ident = self._selected_id()
        if ident:
            self.state.set_primary(ident)

    def changeEvent(self, event: QtCore.QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QtCore.QEvent.Type.PaletteChange and "tree" in vars(self):  # links follow a theme
            self._show_card(self.tree.currentItem())

    def _show_card(self, item) -> None:
        ident = item.data(0, ID_ROLE) if item else None
        if ident in self._items:
            session = self.state.session
            shown = ident in session.hardware
            hw = self.state.device(ident) if shown else self.state.catalog[ident]
            self.card.setHtml(device_card(hw, primary=ident == session.primary,
                                          what_if=shown and session.what_if(ident).active,
                                          replaces_bundled=ident in self.state.catalog.overrides))
        elif ident == "local:cpu":
            self.card.setHtml(self._cpu_card())
        elif ident == "local:gpu":
            info = self._gpu
            if info is None:
                self.card.setHtml("<p>Looking for a GPU…</p>")
            elif _unavailable(info):
                self.card.setHtml(f"<h3>No usable GPU</h3><p>{info.reason}</p>")
            else:
                self.card.setHtml(f"<h3>{info.name}</h3><p>{info.sm_count} SMs, compute capability "
                                  f"{info.compute_capability}, {format_si(info.memory_bytes, 'B')}, "
                                  f"L2 {info.l2_bytes / 2**20:.0f} MiB; driver {info.driver_version}, "
                                  f"CUDA {info.runtime_version}, CuPy {info.cupy_version}.</p>"
                                  "<p>Measure it in the Kernel lab (backend: cupy).</p>")
        self.primary_button.setEnabled(ident in self._items)
        self.duplicate_button.setEnabled(ident in self._items)

    @functools.cached_property
    def _cpu(self):
        """This machine's CPU, described when its card is first shown (not at start-up)."""
        return describe_cpu()

    def _cpu_card(self) -> str:
        cpu = self._cpu
        peaks = "".join(f"<li>{p.precision} {p.unit}: {format_si(p.flops_per_s, rate_unit(p.precision))} "
                        f"<i>(derived: {p.formula})</i></li>" for p in cpu.peaks)
        caches = ", ".join(f"L{c.level} {c.kind.lower()} {c.size_bytes >> 10} KiB" for c in cpu.caches)
        return (f"<h3>{cpu.model}</h3><p>{cpu.physical_cores} cores ({cpu.logical_cpus} logical), "
                f"SIMD: {', '.join(cpu.simd) or 'unknown'}; caches: {caches or 'unknown'}; "
                f"BLAS: {cpu.blas}, {cpu.threads} threads.</p><ul>{peaks}</ul>"
                "<p>Its memory bandwidth is not published: measure it in the Kernel lab "
                "(the stream suite).</p>")

    def _on_duplicate_clicked(self) -> None:
        ident = self._selected_id()
        if ident is None:
            return
        dialog = DeviceEditor(self.state.catalog[ident], set(self.state.catalog), self)
        if dialog.exec() == QtWidgets.QDialog.DialogCode.Accepted:
            try:
                self.state.set_catalog(open_catalogue())
            except DataFileError as exc:  # should not happen: the dialog validated it
                QtWidgets.QMessageBox.warning(self, "Custom device", str(exc))
                return
            assert dialog.saved_path is not None  # (accepted once it has saved)
            self.state.sig_message.emit(f"Saved {dialog.saved_path.name} in your data folder")


class DeviceEditor(QtWidgets.QDialog):
    """Edit a device as catalogue YAML; Save validates it like the catalogue does."""

    def __init__(self, source, known_ids: set[str], parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"New device from {source.name}")
        self.resize(720, 640)
        self.known_ids = known_ids
        entry = hardware_to_dict(source)
        entry["id"] = self._free_id(f"{source.id}-custom")
        entry["name"] = f"{source.name} (custom)"
        self.editor = QtWidgets.QPlainTextEdit()
        self.editor.setFont(QtGui.QFontDatabase.systemFont(QtGui.QFontDatabase.SystemFont.FixedFont))
        self.editor.setPlainText(dump_yaml({"schema": 1, "devices": [entry]}, sort_keys=False,
                                                allow_unicode=True, width=100))
        self.error = QtWidgets.QLabel(wordWrap=True)
        self.error.setStyleSheet("color: #D55E00")
        hint = QtWidgets.QLabel("Change the numbers you want to explore. Every number needs a "
                                "source; mark computed ones <i>derived: true</i> with their formula.")
        hint.setWordWrap(True)
        buttons = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Save
                                             | QtWidgets.QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._save)
        buttons.rejected.connect(self.reject)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addWidget(hint)
        layout.addWidget(self.editor, 1)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        self.saved_path: Path | None = None

    def _free_id(self, base: str) -> str:
        candidate, n = base, 2
        while candidate in self.known_ids:
            candidate, n = f"{base}-{n}", n + 1
        return candidate

    def _save(self) -> None:
        text = self.editor.toPlainText()
        try:
            devices = load_hardware_file("the edited device", text=text)
        except DataFileError as exc:
            self.error.setText(str(exc))
            return
        clash = [d.id for d in devices if d.id in self.known_ids]
        if clash:
            self.error.setText(f"the id '{clash[0]}' is already in the catalogue: choose another")
            return
        path = user_path("hardware", f"{devices[0].id}.yaml")
        try:  # the text just passed the catalogue's own loader: the file will load
            write_text_atomic(path, text)  # a full disk leaves no empty file behind
        except OSError as exc:
            self.error.setText(f"cannot write {path}: {exc.strerror or exc}")
            return
        self.saved_path = path
        self.accept()
