"""The window: the chart shows the analysis it is given, and renders offscreen."""

import argparse

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6 import QtGui

from explorer import app, cli
from explorer.core.analysis import analyze
from explorer.core.workload import WorkloadParams
from explorer.ui.application import build_window, run_window, save_screenshot
from explorer.ui.chart import coords
from explorer.ui.chart.axes import SiLogAxis, tick_label
from explorer.ui.chart.roofline_plot import RooflinePlot


def args(**overrides):
    defaults = vars(cli.parse_args([]))
    return argparse.Namespace(**{**defaults, **overrides})


@pytest.fixture
def window(qtbot):
    w = build_window(args(size=(1366, 768)))
    qtbot.addWidget(w)
    with qtbot.waitExposed(w):
        w.show()
    return w


def test_chart_plots_every_op_with_arithmetic_at_its_predicted_performance(window):
    analysis = window.chart.analysis
    drawn = [item for item in window.chart.point_items if item.name() != "whole step"]
    spots = [spot for item in drawn for spot in item.points()]
    with_flops = int(np.sum(analysis.flops > 0))
    assert len(spots) == with_flops == len(analysis.ops) - 1  # the embedding lookup has no FLOPs
    for spot in spots:
        info = spot.data()
        # Points live in log10 view coordinates.
        assert spot.pos().x() == pytest.approx(np.log10(info.intensity))
        assert spot.pos().y() == pytest.approx(np.log10(info.performance))
    q = next(s.data() for s in spots if s.data().name == "q_proj")
    assert q.count == 32 and q.bound == "memory"
    assert q.performance == pytest.approx(q.intensity * 3.35e12)


def test_tooltip_names_the_op_and_its_numbers(window):
    spot = next(s for item in window.chart.point_items for s in item.points()
                if getattr(s.data(), "name", "") == "down_proj")
    text = spot.data().tooltip()
    assert "down_proj (×32 layers)" in text
    assert "FLOP/byte" in text and "memory-bound" in text


def test_roofs_and_labels(window):
    plot = window.chart.getPlotItem()
    curves = [item for item in plot.listDataItems() if isinstance(item, pg.PlotDataItem)]
    names = sorted(c.name() for c in curves)
    assert names == ["HBM3: 3.35 TB/s", "bf16 matrix: 989 TFLOP/s", "fp32 vector: 66.9 TFLOP/s"]
    texts = [i.toPlainText() for i in plot.items if isinstance(i, pg.TextItem)]
    assert "ridge 295 FLOP/B" in texts


def test_status_bar_summarises_the_prediction(window):
    text = window.statusBar().currentMessage()
    assert "tokens/s" in text and "memory-bound" in text and "fits in" in text


def test_derived_roofs_are_dashed(qtbot, catalog, models):
    plot = RooflinePlot()
    qtbot.addWidget(plot)
    plot.show_analysis(analyze(models["gpt2"], WorkloadParams(), catalog["epyc-9654"]))
    curves = plot.getPlotItem().listDataItems()
    compute = [c for c in curves if "FLOP/s" in (c.name() or "")]
    assert compute and all("(derived)" in c.name() for c in compute)
    from PySide6.QtCore import Qt
    assert all(c.opts["pen"].style() == Qt.PenStyle.DashLine for c in compute)


def test_log_axis_ticks_read_as_numbers():
    assert tick_label(1e12) == "1 T"
    assert tick_label(1e3) == "1 k"
    assert tick_label(0.01) == "0.01"
    axis = SiLogAxis("left")
    assert axis.logTickStrings([15.0, 0.0, -1.0], 1.0, 1.0) == ["1 P", "1", "0.1"]
    assert coords.to_data(coords.to_view(123.0)) == pytest.approx(123.0)


def test_screenshot_writes_a_non_blank_png(window, tmp_path):
    path = tmp_path / "window.png"
    assert save_screenshot(window, str(path)) == 0
    image = QtGui.QImage(str(path))
    assert (image.width(), image.height()) == (1366, 768)
    colours = {image.pixel(x, y) for x in range(0, 1366, 7) for y in range(0, 768, 7)}
    assert len(colours) > 20  # text, roofs and points, not an empty frame


def test_unknown_ids_fail_with_a_message_not_a_crash(qtbot, capsys):
    code = run_window(args(screenshot="unused.png", hardware="h100"))
    assert code == 2
    assert "did you mean h100-sxm" in capsys.readouterr().err


def test_display_problem_explains_what_to_do(monkeypatch):
    monkeypatch.setattr(app.sys, "platform", "linux")
    assert "no display found" in app.display_problem({})
    assert app.display_problem({"QT_QPA_PLATFORM": "offscreen"}) is None
    import ctypes.util

    monkeypatch.setattr(ctypes.util, "find_library",
                        lambda name: None if name == "xcb-icccm" else f"lib{name}.so")
    message = app.display_problem({"DISPLAY": ":0"})
    assert "libxcb-icccm4" in message and "apt install" in message
    assert "libxcb-cursor0" not in message


def test_cnn_summary_speaks_of_images_and_weights(catalog, models):
    from explorer.ui.main_window import summary_line

    text = summary_line(analyze(models["resnet-50"], WorkloadParams(batch=32), catalog["l4"]))
    assert "forward pass, batch 32" in text and "images/s" in text
    assert "weights, activations" in text and "fits in 24 GiB" in text and "KV" not in text
