"""The window: the chart shows the state's analysis, the status bar sums it up, and it
renders offscreen."""

import itertools

import numpy as np
import pytest
from PySide6 import QtGui

from explorer import app
from explorer.chart import hits
from explorer.chart.axes_frame import tick_label
from explorer.chart.geometry import overlap
from explorer.chart.model import build_chart
from explorer.chart.points import op_infos
from explorer.core.analysis.analysis import analyze
from explorer.core.analysis.report_words import step_summary
from explorer.core.model.workload import WorkloadParams
from explorer.ui.application import run_window, save_screenshot
from explorer.ui.chart import coords
from explorer.ui.chart.axes import SiLogAxis

from .conftest import window_args


def test_chart_plots_every_op_with_arithmetic_at_its_predicted_performance(window):
    analysis = window.state.analysis()
    chart = window.chart.chart
    spots = {m.name: m.center for m in chart.markers if m.kind == "op"}
    assert len(spots) == int(np.sum(analysis.flops > 0)) == len(analysis.ops) - 1  # no lookup
    infos = {info.name: info for info in op_infos(analysis)}
    for name, (x, y) in spots.items():
        assert x == pytest.approx(chart.x_px(infos[name].intensity))
        assert y == pytest.approx(chart.y_px(infos[name].performance))
    q = infos["q_proj"]
    assert q.count == 32 and q.bound == "memory"
    assert q.performance == pytest.approx(q.intensity * 3.35e12)
    [star] = [m for m in chart.markers if m.kind == "step"]
    t = analysis.totals
    assert star.center == pytest.approx((chart.x_px(t.intensity), chart.y_px(t.flops / t.time_s)))


def test_the_window_draws_the_same_chart_as_an_export_of_its_size(window):
    plot = window.chart
    assert plot.chart == build_chart(window.state, plot.page(), plot.options(plot._ranges))


def test_tooltips_list_every_op_at_a_spot(window):
    chart = window.chart.chart
    [star] = [m for m in chart.markers if m.kind == "step"]
    text = hits.tooltip_at(chart, star.center)
    # Decode at batch 1: the projections and the MLP sit at one intensity, under the star.
    assert text.startswith("whole step, batch 1") and "q_proj (×32 layers)" in text
    assert "Also here (8):" in text and "down_proj (×32 layers), mlp: 24.8% of the step" in text
    [down] = [m for m in chart.markers if m.name == "down_proj"]
    assert "memory-bound" in down.tooltip and "FLOP/byte" in down.tooltip


def test_roofs_and_labels(window):
    chart = window.chart.chart
    labels = sorted(t.text for t in chart.texts_of("roof"))
    assert labels == ["HBM3 3.35 TB/s", "bf16 matrix 989 TFLOP/s", "fp32 vector 66.9 TFLOP/s"]
    assert [t.text for t in chart.texts_of("ridge")] == ["ridge 295 FLOP/byte"]
    assert "H100 SXM" in window.chart.title()  # one device: named in the title
    roof = next(line for line in chart.lines if line.kind == "roof" and line.ref.label == "HBM3")
    assert "source: https://www.nvidia.com/en-us/data-center/h100/" in roof.tooltip


def test_status_bar_summarises_the_prediction(window):
    text = window.summary_label.text()
    assert "tokens/s" in text and "memory-bound" in text
    assert "fits in the 71.7 GiB budget (90% of 79.6 GiB usable)" in text
    assert "a token (power model), at least " in text  # the estimate and the lower bound, each named
    assert window.summary_label.toolTip().endswith(text)


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


@pytest.mark.parametrize("size", [(1024, 768), (1366, 768), (2400, 900)])
def test_no_label_collides_in_the_window(window, size):
    window.resize(*size)
    window.state.set_devices(("h100-sxm", "mi300x", "epyc-9654", "rtx-4090"))
    chart = window.chart.chart
    assert (chart.page.width, chart.page.height) == (window.chart.width(), window.chart.height())
    for a, b in itertools.combinations(chart.texts, 2):
        assert not overlap(a.corners, b.corners), (a.text, b.text)


def test_toolbar_undo_keeps_its_label_and_help_lists_every_shortcut(window):
    from PySide6 import QtWidgets

    from explorer.core.model.session import WhatIf
    from explorer.ui.shortcuts_dialog import menu_shortcuts, shortcuts_html

    bar = window.findChild(QtWidgets.QToolBar, "toolbar-main")
    undo = next(a for a in bar.actions() if a.text() == "Undo")
    assert not undo.isEnabled()
    window.state.set_what_if("h100-sxm", WhatIf(bandwidth_scale=2.0))
    assert undo.isEnabled() and undo.text() == "Undo" and "Undo" in undo.toolTip()
    assert len(undo.toolTip()) > len("Undo (Ctrl+Z)")  # says what it undoes
    undo.trigger()
    assert not window.state.session.what_if("h100-sxm").active
    found = {(item, keys) for _menu, item, keys in menu_shortcuts(window.menuBar())}
    assert ("Find device", "Ctrl+F") in found and ("Presentation mode", "F5") in found
    assert "Drag the star sideways" in shortcuts_html(window.menuBar())
    by_keys: dict[str, list[str]] = {}
    for _menu, item, keys in menu_shortcuts(window.menuBar()):
        by_keys.setdefault(keys, []).append(item)
    assert {k: v for k, v in by_keys.items() if len(set(v)) > 1} == {}  # no key does two things


def test_the_hardware_card_follows_the_chart(window):
    window.state.set_devices(("mi300x", "h100-sxm"))
    assert window.hardware_panel.tree.currentItem().text(0) == "Instinct MI300X"  # under "AMD"
    assert "MI300X" in window.hardware_panel.card.toPlainText()


def test_this_machines_cpu_is_described_when_its_card_is_first_shown(window):
    """The list names the CPU from the start; its caches, clock and peaks are read for its card."""
    from explorer.kernels.cpuinfo import cpu_model, describe_cpu

    panel = window.hardware_panel
    assert "_cpu" not in vars(panel)
    row = panel._local.child(0)
    assert row.text(0) == f"CPU: {cpu_model()}"
    panel.tree.setCurrentItem(row)
    assert panel.card.toPlainText().startswith(describe_cpu().model)
    assert "_cpu" in vars(panel)


def test_a_status_message_takes_the_summary_s_place_even_before_the_window_shows(window):
    """Qt hides the status bar's summary under a message only if it was visible then: one
    said while the window was being built (a scene's first step) was drawn over it."""
    window.statusBar().showMessage("scene step 1/3", 6000)
    assert window.summary_label.isHidden()
    window.statusBar().clearMessage()
    assert not window.summary_label.isHidden()


def test_an_undo_says_what_it_undid_in_place_of_the_step_s_message(window):
    """Issue 58: "scene step 3/4" stayed in the status bar after an undo back to step 2."""
    ident = next(i for i, scene in window.player.scenes.items() if len(scene.steps) >= 3)
    assert window.player.start(ident)
    scene = window.player.scene
    window.player.go(1)
    assert window.statusBar().currentMessage() == f"scene step 2/{len(scene.steps)}"
    window.act_undo.trigger()
    assert window.player.step == 0
    assert window.statusBar().currentMessage() == f"Undone: scene step 2/{len(scene.steps)}"
    window.act_redo.trigger()
    assert window.player.step == 1
    assert window.statusBar().currentMessage() == f"Redone: scene step 2/{len(scene.steps)}"


def test_the_status_bar_summary_ends_in_an_ellipsis_where_it_has_no_room(window):
    """At 1366 px it was cut mid-word ("1.59× th"); now it ends at a word with "…", whole
    in its tooltip, and the primary device takes its short name."""
    window.statusBar().clearMessage()
    label = window.summary_label
    whole = label.text()
    shown = label.shown_text()
    assert label.width() < label.fontMetrics().horizontalAdvance(whole)  # it has too little room
    assert shown.endswith("…") and whole.startswith(shown[:-1]) and label.toolTip().endswith(whole)
    assert window.backend_label.text() == f"Primary: {window.state.primary.label}"
    assert window.state.primary.name in window.backend_label.toolTip()


def test_the_chart_is_built_once_at_start_up_at_its_shown_size(qtbot, settings, tmp_path, monkeypatch):
    """A chart built before the window is laid out (at the widget's first size) would be
    thrown away at once: the chart is built when first shown, or when first asked for."""
    import explorer.ui.chart.roofline_plot as roofline_plot
    from explorer.ui.application import build_window

    built = []
    build = roofline_plot.build_chart
    monkeypatch.setattr(roofline_plot, "build_chart", lambda state, page, options: built.append(page)
                        or build(state, page, options))
    monkeypatch.setenv("ROOFLINE_EXPLORER_DATA", str(tmp_path / "data"))
    window = build_window(window_args(size=(1366, 768)), settings)
    qtbot.addWidget(window)
    assert built == []  # nothing shown yet
    with qtbot.waitExposed(window):
        window.show()
    window.chart.grab()
    plot = window.chart
    assert len(built) == 1 and (built[0].width, built[0].height) == (plot.width(), plot.height())
    window.state.set_params(batch=8)  # shown: a change redraws at once
    assert len(built) == 2 and plot.chart.texts_of("title")
    window.runs.shutdown()

    hidden = build_window(window_args(size=(1366, 768)), settings)  # never shown: built when asked for
    qtbot.addWidget(hidden)
    assert len(built) == 2 and hidden.chart.chart.markers and len(built) == 3
    hidden.runs.shutdown()
