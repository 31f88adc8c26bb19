"""The window's tool windows: the design lab, parallel layouts, serving and the energy
roofline, each opened from the menus with its own shortcut (a mixin of ``MainWindow``, which
provides ``state``, ``chart`` and ``_action``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6 import QtCore, QtWidgets

from explorer.ui.window_host import WindowHost

if TYPE_CHECKING:
    from explorer.ui.design_lab_window import DesignLabWindow
    from explorer.ui.energy_dialog import EnergyDialog


class WindowTools(WindowHost):
    def _build_tool_actions(self) -> None:
        self.act_lab = self._action("From CPU to GPU (&design lab)…", self.open_design_lab, "Ctrl+L",
                                    "Turn a CPU into a GPU one design choice at a time")
        self.design_lab: DesignLabWindow | None = None
        self.act_layouts = self._action("Parallel &layouts…", self.open_layouts, "Ctrl+Shift+L",
                                        "Every way of spreading the step over N devices, ranked")
        self.act_serving = self._action("&Serving…", self.open_serving, "Ctrl+Shift+T", (
            "How many requests the device serves at what latency and price, batch 1 to the KV-cache wall"))
        self.act_energy = self._action("&Energy roofline…", self.open_energy, "Ctrl+Shift+E", (
            "The workload in energy: FLOP/J against intensity, where moving data costs more than computing"))
        self.energy_dialog: EnergyDialog | None = None

    def open_design_lab(self) -> None:
        """The design lab in its own window (one at a time; the session is not touched)."""
        from explorer.ui.design_lab_window import DesignLabWindow

        if self.design_lab is None:
            try:
                self.design_lab = DesignLabWindow(self.state, self.chart.theme.name, self)
            except ValueError as exc:
                QtWidgets.QMessageBox.warning(self, "Design lab", str(exc))
                return
            self.design_lab.destroyed.connect(lambda: setattr(self, "design_lab", None))
            self.design_lab.setAttribute(QtCore.Qt.WidgetAttribute.WA_DeleteOnClose, True)
        self.design_lab.show()
        self.design_lab.raise_()
        self.design_lab.activateWindow()

    def open_layouts(self) -> None:
        from explorer.ui.layouts_dialog import LayoutsDialog

        dialog = LayoutsDialog(self.state, self, self.runs)
        dialog.exec()
        dialog.deleteLater()

    def open_serving(self) -> None:
        from explorer.ui.serving_dialog import ServingDialog

        ServingDialog(self.state, self.chart.theme.name, self, self.settings).exec()

    def open_energy(self) -> None:
        """The energy roofline beside the window (it follows what the window shows)."""
        from explorer.ui.energy_dialog import EnergyDialog

        if self.energy_dialog is None:
            self.energy_dialog = EnergyDialog(self.state, self.chart.theme.name, self)
        self.energy_dialog.show()
        self.energy_dialog.raise_()
        self.energy_dialog.activateWindow()

    def export_dialog(self) -> None:
        start = (self.session_path.with_suffix(".png") if self.session_path
                 else Path.home() / "roofline.png")
        from explorer.ui.export_dialog import ExportDialog  # (not at start-up)

        dialog = ExportDialog(self.state, start, self, theme=self.chart.theme.name,
                              subtitle=self.player.caption(), runs=self.runs)
        if dialog.exec() == QtWidgets.QDialog.DialogCode.Accepted and dialog.written:
            self.statusBar().showMessage(f"Exported {dialog.written}", 6000)
        dialog.deleteLater()

    def copy_chart(self) -> None:
        from explorer.ui.export_dialog import copy_to_clipboard

        copy_to_clipboard(self.state, theme=self.chart.theme.name)
        self.statusBar().showMessage("Copied the chart to the clipboard", 6000)
