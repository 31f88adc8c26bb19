"""The main window: the roofline chart of one device and one workload."""

from __future__ import annotations

from PySide6 import QtGui, QtWidgets

from explorer import __version__
from explorer.core.analysis import Analysis
from explorer.core.units import format_bytes, format_time
from explorer.ui.chart.roofline_plot import RooflinePlot


class MainWindow(QtWidgets.QMainWindow):
    def __init__(self, analysis: Analysis) -> None:
        super().__init__()
        self.setWindowTitle("Roofline Explorer")
        self.chart = RooflinePlot(self)
        self.setCentralWidget(self.chart)
        self._build_menus()
        self.show_analysis(analysis)

    def show_analysis(self, analysis: Analysis) -> None:
        self.chart.show_analysis(analysis)
        self.statusBar().showMessage(summary_line(analysis))

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        quit_action = file_menu.addAction("&Quit")
        quit_action.setShortcut(QtGui.QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.close)
        view_menu = self.menuBar().addMenu("&View")
        fit = view_menu.addAction("&Fit chart")
        fit.setShortcut(QtGui.QKeySequence("Ctrl+0"))
        fit.setToolTip("Show the roofs and every point again after zooming or panning")
        fit.triggered.connect(lambda: self.chart.show_analysis(self.chart.analysis))
        help_menu = self.menuBar().addMenu("&Help")
        about = help_menu.addAction("&About Roofline Explorer")
        about.triggered.connect(self._about)

    def _about(self) -> None:
        QtWidgets.QMessageBox.about(
            self, "About Roofline Explorer",
            f"<b>Roofline Explorer {__version__}</b><p>Why deep learning runs on GPUs: where a "
            "workload sits between a machine's two ceilings, peak arithmetic and memory "
            "bandwidth.</p><p>Points are predictions: FLOPs and bytes from the model's "
            "configuration, time = max(FLOPs / peak, bytes / bandwidth). Peaks are dense "
            "(no sparsity) datasheet figures; dashed roofs are derived, not published.</p>")


def summary_line(a: Analysis) -> str:
    t, p = a.totals, a.params
    fit = "fits in" if t.fits_in_memory else "does NOT fit in"
    step = f"{p.phase} batch {p.batch}" if t.kv_bytes_per_token else f"forward pass, batch {p.batch}"
    memory = "weights, KV cache, activations" if t.kv_bytes_per_token else "weights, activations"
    return (f"{a.model.name}, {step}, {p.dtype}: predicted "
            f"{format_time(t.time_s)} per step, {t.tokens_per_s:,.0f} {t.item_unit}/s, "
            f"{'memory' if t.memory_time_s > t.compute_time_s else 'compute'}-bound; "
            f"{memory} {format_bytes(t.memory_required_bytes)} {fit} "
            f"{format_bytes(t.memory_capacity_bytes)}")
