"""The window: the chart shows the state's analysis, the status bar sums it up, and it
renders offscreen."""

import numpy as np
import pytest
from PySide6 import QtGui

from explorer import app
from explorer.core.analysis import analyze
from explorer.core.report import step_summary
from explorer.core.workload import WorkloadParams
from explorer.ui.application import run_window, save_screenshot
from explorer.ui.chart import coords
from explorer.ui.chart.axes import SiLogAxis, tick_label

from .conftest import window_args


def test_chart_plots_every_op_with_arithmetic_at_its_predicted_performance(window):
    analysis = window.state.analysis()
    spots = [s for item in window.chart.points.op_items for s in item.points()]
    assert len(spots) == int(np.sum(analysis.flops > 0)) == len(analysis.ops) - 1  # no lookup
    for spot in spots:
        info = spot.data()
        assert spot.pos().x() == pytest.approx(np.log10(info.intensity))  # view coordinates
        assert spot.pos().y() == pytest.approx(np.log10(info.performance))
    q = next(s.data() for s in spots if s.data().name == "q_proj")
    assert q.count == 32 and q.bound == "memory"
    assert q.performance == pytest.approx(q.intensity * 3.35e12)
    star = window.chart.points.star.position()
    t = analysis.totals
    assert (star.x(), star.y()) == pytest.approx(coords.view_point(t.intensity, t.flops / t.time_s))


def test_tooltip_names_the_op_and_its_numbers(window):
    info = window.chart.points.info("down_proj")
    text = info.tooltip()
    assert "down_proj (×32 layers)" in text and "FLOP/byte" in text and "memory-bound" in text


def test_roofs_and_labels(window):
    labels = sorted(label.toPlainText() for label in window.chart.roofs.labels.values())
    assert labels == ["HBM3 3.35 TB/s", "bf16 matrix 989 TFLOP/s", "fp32 vector 66.9 TFLOP/s"]
    _marker, text = window.chart.roofs.ridges["h100-sxm"]
    assert text.toPlainText() == "ridge 295 FLOP/B"
    roof = next(r for k, r in window.chart.roofs.roofs.items() if k.label == "HBM3")
    assert "source: https://www.nvidia.com/en-us/data-center/h100/" in roof.toolTip()


def test_status_bar_summarises_the_prediction(window):
    text = window.summary_label.text()
    assert "tokens/s" in text and "memory-bound" in text
    assert "fits in the 71.7 GiB budget (90% of 79.6 GiB usable)" in text


def test_cnn_summary_speaks_of_images_and_weights(catalog, models):
    text = step_summary(analyze(models["resnet-50"], WorkloadParams(batch=32), catalog["l4"]))
    assert "forward pass, batch 32" in text and "images/s" in text
    assert "weights, activations" in text and "fits in the 20.2 GiB budget" in text and "KV" not in text
    assert "forward pass, batch 32, 224×224 images" in text  # a CNN has no decode or prefill


def test_log_axis_ticks_read_as_numbers():
    assert tick_label(1e12) == "1 T"
    assert tick_label(1e3) == "1 k"
    assert tick_label(0.01) == "0.01"
    assert SiLogAxis("left").logTickStrings([15.0, 0.0, -1.0], 1.0, 1.0) == ["1 P", "1", "0.1"]
    assert coords.to_data(coords.to_view(123.0)) == pytest.approx(123.0)


@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080)])
def test_screenshot_writes_a_non_blank_png(window, tmp_path, size):
    window.resize(*size)
    path = tmp_path / "window.png"
    assert save_screenshot(window, str(path)) == 0
    image = QtGui.QImage(str(path))
    assert (image.width(), image.height()) == size
    colours = {image.pixel(x, y) for x in range(0, size[0], 7) for y in range(0, size[1], 7)}
    assert len(colours) > 20  # text, roofs and points, not an empty frame


def test_unknown_ids_fail_with_a_message_not_a_crash(qtbot, capsys):
    assert run_window(window_args(screenshot="unused.png", hardware="h100")) == 2
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


def test_the_ridge_label_stays_clear_of_the_roof_label(window, qtbot):
    """At 1366 px the top roof's label reaches back past the ridge: the ridge label moves
    below it; in a wide export it sits above and left of the ridge."""
    from explorer.core.roofline import COMPUTE
    from explorer.ui.chart.roof_layer import RoofKey

    def rects(chart):
        qtbot.wait(10)
        ident = chart.state.session.primary
        top = chart.state.analysis().roofs.matrix.label
        return (chart.roofs.ridges[ident][1].sceneBoundingRect(),
                chart.roofs.labels[RoofKey(ident, COMPUTE, top)].sceneBoundingRect())

    window.chart.redraw(fit=True)  # laid out at its final size
    ridge, roof = rects(window.chart)
    assert not ridge.intersects(roof)
    window.chart.resize(2400, 900)
    window.chart.redraw(fit=True)
    ridge, roof = rects(window.chart)
    assert not ridge.intersects(roof) and ridge.bottom() <= roof.bottom() + 1
