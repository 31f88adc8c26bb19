"""At 1024×768, the resolution of many lecture-hall projectors, the chart keeps at least
half the window's width and its whole title: the left docks join the right ones as tabs;
widened again, they go back."""

from PySide6 import QtCore

from explorer.chart.elements import ElementKind

AREA = QtCore.Qt.DockWidgetArea


def test_a_narrow_window_gives_the_chart_half_its_width(window, qtbot):
    window.state.set_devices(["h100-sxm", "mi300x", "a100-80gb-sxm", "xeon-platinum-8480"])
    window.resize(1024, 768)
    qtbot.waitUntil(lambda: window.narrow, timeout=2000)
    qtbot.wait(50)
    assert window.dockWidgetArea(window.docks["hardware"]) == AREA.RightDockWidgetArea
    assert window.chart.width() >= 0.5 * window.width()
    chart = window.chart.chart
    titles = [t.text for t in chart.texts if t.kind == ElementKind.TITLE]
    assert titles and not any(t.endswith("…") for t in titles)  # the whole title, on two lines
    # a tall chart takes its key under the plot, in columns, every row shown
    assert chart.key is not None and chart.key.top >= chart.plot.bottom
    key_texts = [t.text for t in chart.texts if t.kind in (ElementKind.KEY, ElementKind.KEY_LIVE)]
    assert "Devices" in key_texts and "…" not in key_texts
    window.resize(1400, 800)
    qtbot.waitUntil(lambda: not window.narrow, timeout=2000)
    assert window.dockWidgetArea(window.docks["hardware"]) == AREA.LeftDockWidgetArea
    assert window.dockWidgetArea(window.docks["details"]) == AREA.LeftDockWidgetArea


def test_a_scene_with_a_long_title_keeps_the_window_as_wide_as_the_screen_allows(window, qtbot):
    """The caption strip's title wraps: a long one never widens the window past 1024 px."""
    window.resize(1024, 768)
    window.player.start("mixture-of-experts")
    qtbot.wait(50)
    assert window.caption_bar.isVisible()
    assert window.minimumSizeHint().width() <= 1024
    window.resize(1024, 768)
    assert window.width() == 1024
    assert window.caption_bar.title.text().startswith("Mixture of experts: why a 47 B model")


def test_a_prompt_s_rows_keep_the_window_within_a_768_pixel_screen(window, qtbot):
    """A prompt shows two rows more (the causal mask, the attention kernel) than a token; at
    1024×768 and 1366×768 with four devices the window still fits the screen's height (the
    workload panel scrolls rather than growing the window)."""
    window.state.set_devices(["h100-sxm", "apple-m4-max-cpu", "xeon-6980p", "l4"])
    window.state.set_params(phase="prefill", seq=512)
    for size in ((1024, 768), (1366, 768)):
        window.resize(*size)
        qtbot.wait(50)
        assert window.minimumSizeHint().height() <= 768
        assert (window.width(), window.height()) == size
    panel = window.workload_panel
    assert panel.isVisible() and panel.causal.isVisible()
    area = window.docks["workload"].widget()
    assert area.verticalScrollBar().isVisible()  # the panel scrolls ...
    assert panel.height() == panel.minimumSizeHint().height() > area.height()  # ... by no more than it must
    assert panel.width() + area.verticalScrollBar().width() <= area.width()  # beside the bar, not under it
    window.state.set_params(phase="decode")
    window.state.set_devices(["h100-sxm"])
    qtbot.waitUntil(lambda: not area.verticalScrollBar().isVisible(), timeout=2000)
    assert panel.size() == area.size()  # a token's rows fit: the panel fills its room


def test_the_wheel_over_an_editor_scrolls_the_panel_and_keeps_the_workload(window, qtbot):
    """Where the workload panel scrolls, the wheel over its editors scrolls it: a pointer
    passing over the phase box does not change the phase. A box the user chose (focus)
    still takes the wheel."""
    from PySide6 import QtCore, QtGui, QtWidgets

    window.state.set_devices(["h100-sxm", "apple-m4-max-cpu", "xeon-6980p", "l4"])
    window.state.set_params(phase="prefill", seq=512)
    window.resize(1366, 768)
    area, panel = window.docks["workload"].widget(), window.workload_panel
    qtbot.waitUntil(lambda: area.verticalScrollBar().isVisible(), timeout=2000)
    box = panel.editors["phase"]

    def wheel(widget: QtWidgets.QWidget) -> None:
        centre = QtCore.QPointF(widget.rect().center())
        event = QtGui.QWheelEvent(centre, widget.mapToGlobal(centre), QtCore.QPoint(0, 0),
                                  QtCore.QPoint(0, -120), QtCore.Qt.MouseButton.NoButton,
                                  QtCore.Qt.KeyboardModifier.NoModifier,
                                  QtCore.Qt.ScrollPhase.NoScrollPhase, False)
        QtWidgets.QApplication.sendEvent(widget, event)

    assert area.verticalScrollBar().value() == 0 and not box.hasFocus()
    wheel(box)
    assert window.state.params.phase == "prefill" and area.verticalScrollBar().value() > 0
    box.setFocus()
    qtbot.waitUntil(box.hasFocus, timeout=2000)
    wheel(box)
    assert window.state.params.phase != "prefill"


def test_every_dialog_opens_within_a_1024x768_screen(window, qtbot, tmp_path):
    """A dialog opened on a lecture-hall projector fits its screen (the Serving and Energy
    dialogs once opened 1,040 px wide)."""
    from explorer.ui.energy_dialog import EnergyDialog
    from explorer.ui.export_dialog import ExportDialog
    from explorer.ui.layouts_dialog import LayoutsDialog
    from explorer.ui.panels.layer_editor import LayerStackEditor
    from explorer.ui.serving_dialog import ServingDialog
    from explorer.ui.shortcuts_dialog import ShortcutsDialog

    state = window.state
    for make in (lambda: ExportDialog(state, tmp_path, window), lambda: EnergyDialog(state, parent=window),
                 lambda: ServingDialog(state, parent=window), lambda: LayoutsDialog(state, window),
                 lambda: ShortcutsDialog(window), lambda: LayerStackEditor((), window)):
        dialog = make()
        qtbot.addWidget(dialog)
        dialog.show()  # (shown, a dialog is at least its least size)
        title_bar = 40
        assert dialog.width() <= 1024 and dialog.height() + title_bar <= 768, type(dialog).__name__
        dialog.close()
