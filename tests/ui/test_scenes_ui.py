"""Scenes in the window: stepping, the caption, leaving; presentation mode and its keys;
themes."""

import pytest
from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtTest import QTest

Key = QtCore.Qt.Key


def test_a_scene_steps_with_its_caption_and_leaves_things_as_they_were(window):
    state, player = window.state, window.player
    before = state.session
    player.start("decode-batching")
    assert state.session.hardware == ("h100-sxm",) and state.params.batch == 1
    assert window.caption_bar.isVisible() and window.caption_bar.counter.text() == "1 / 4"
    assert "down_proj runs at 1 FLOP/byte" in window.caption_bar.caption.text()
    assert window.explain_panel.topic.currentData() == "batching"
    window.act_next.trigger()
    assert state.params.batch == 8 and window.caption_bar.counter.text() == "2 / 4"
    window.act_previous.trigger()
    assert state.params.batch == 1
    assert not window.caption_bar.buttons[0].isEnabled()  # no step before the first
    player.go(3)
    assert state.params.batch == 512 and not player.next()
    state.undo_stack.undo()  # every step is one undo step
    assert state.params.batch == 1
    window.act_stop_scene.trigger()
    assert state.session == before and not window.caption_bar.isVisible()
    assert not window.act_next.isEnabled()


def test_undo_and_redo_inside_a_scene_keep_caption_and_chart_together(window):
    state, player, bar = window.state, window.player, window.caption_bar
    player.start("decode-batching")
    window.act_next.trigger()
    window.act_next.trigger()
    step3 = bar.caption.text()
    assert bar.counter.text() == "3 / 4"
    state.undo()  # back to step 2's chart: the caption follows
    assert state.params.batch == 8 and bar.counter.text() == "2 / 4" and player.step == 1
    state.redo()
    assert bar.counter.text() == "3 / 4" and bar.caption.text() == step3
    state.set_params(batch=3)  # an edit no step shows: the caption says so instead of lying
    assert player.changed and "has changed since step 3" in bar.caption.text()
    state.undo()
    assert not player.changed and bar.caption.text() == step3
    for _ in range(3):
        state.undo()  # past the first step: out of the scene, the caption cleared
    assert not player.active and not bar.isVisible() and not window.act_next.isEnabled()


def test_scene_steps_keep_the_users_measurements(window, tmp_path):
    from tests.kernels.test_results import point, results

    path = tmp_path / "r.json"
    results(point()).save(path)
    window.state.add_results(str(path))
    window.player.start("tensor-cores")
    window.player.next()
    assert window.state.session.results == (str(path),)
    window.player.stop()
    assert window.state.session.results == (str(path),)


def test_presentation_mode_hides_the_panels_and_the_clicker_steps(window, qtbot):
    window.resize(1366, 768)
    qtbot.wait(10)
    before = window.geometry()
    window.player.start("bandwidth-parallelism")
    window.act_present.trigger()
    assert window.presentation.active and window.isFullScreen()
    assert not window.menuBar().isVisible() and not window.statusBar().isVisible()
    assert not any(d.isVisible() for d in window.findChildren(QtWidgets.QDockWidget))
    assert window.chart.scale == 1.6 and window.chart.chart.page.text >= 1.6 * 13
    assert window.caption_bar.caption.font().pointSizeF() > 20
    for key, step in ((Key.Key_Right, 1), (Key.Key_Space, 2), (Key.Key_PageDown, 3), (Key.Key_PageDown, 3),
                      (Key.Key_Left, 2), (Key.Key_PageUp, 1)):
        QTest.keyClick(window, key)
        assert window.player.step == step, QtCore.Qt.Key(key).name
    QTest.keyClick(window, Key.Key_Escape)
    assert not window.presentation.active and not window.isFullScreen()
    assert window.menuBar().isVisible() and window.docks["hardware"].isVisible()
    assert window.chart.scale == 1.0
    qtbot.wait(10)
    assert window.geometry() == before  # the exact size and place it had
    # Outside presentation mode the arrow keys belong to the panels, not to the scene.
    QTest.keyClick(window, Key.Key_Right)
    assert window.player.step == 1


def test_presentation_without_a_scene_shows_the_bare_chart(window):
    window.presentation.enter()
    assert not window.caption_bar.isVisible() and window.presentation.active
    QTest.keyClick(window, Key.Key_Right)  # nothing to step: nothing happens
    window.presentation.leave()
    assert window.docks["hardware"].isVisible()
    assert all(bar.isVisible() for bar in window.findChildren(QtWidgets.QToolBar))


def test_the_theme_applies_to_chart_and_caption_and_is_remembered(window, settings):
    action = next(a for a in window.theme_group.actions() if a.data() == "contrast")
    action.trigger()
    assert window.chart.theme.name == "contrast" and settings.value("theme") == "contrast"
    assert "#000000" in window.caption_bar.styleSheet()
    assert window.chart.chart.background == "#000000"
    image = window.chart.grab().toImage()
    assert image.pixelColor(3, 3).name() == "#000000"  # painted, not only described
    palette = QtWidgets.QApplication.palette()  # the docks, tables and toolbar follow
    assert palette.color(QtGui.QPalette.ColorRole.Window).name() == "#000000"
    assert palette.color(QtGui.QPalette.ColorRole.Text).name() == "#ffffff"
    QtWidgets.QApplication.processEvents()  # the palette reaches each widget by an event
    assert window.workload_panel.table.palette().color(QtGui.QPalette.ColorRole.Base).name() == "#000000"
    window.set_theme("light")
    assert QtWidgets.QApplication.palette().color(QtGui.QPalette.ColorRole.Window).name() != "#000000"


def test_setting_the_theme_already_shown_restyles_and_redraws_nothing(window, monkeypatch):
    """(Setting a style, even the same one, polishes every widget again: tens of
    milliseconds at start-up, where the window sets the theme it was drawn in.)"""
    app = QtWidgets.QApplication.instance()
    styled, drawn = [], []
    monkeypatch.setattr(type(app), "setStyle", lambda self, name: styled.append(name), raising=False)
    monkeypatch.setattr(window.chart, "redraw", lambda *a, **k: drawn.append(1))
    window.set_theme("light")
    assert styled == [] and drawn == []
    window.set_theme("dark")
    window.set_theme("dark")
    assert styled == ["Fusion"] and drawn == [1]
    window.set_theme("light")
    assert len(styled) == 2 and drawn == [1, 1]


def test_the_explain_panel_follows_the_selected_op(window, qtbot):
    window.docks["explain"].raise_()
    qtbot.waitUntil(lambda: window.explain_panel.text.toPlainText() != "")
    window.state.select_op("down_proj")
    html = window.explain_panel.text.toPlainText()
    assert html.startswith("Selected: down_proj") and "memory-bound" in html
    window.state.select_op(None)
    assert not window.explain_panel.text.toPlainText().startswith("Selected")


def test_a_step_that_shows_the_scaling_laws_brings_their_panel_forward_at_its_budget(window, qtbot):
    window.resize(1366, 768)
    window.show()
    window.player.start("compute-optimal-training")
    assert window.player.scaling_budget() is None
    window.player.next()
    assert window.player.scaling_budget() == 5.76e23
    panel = window.scaling_panel.panel
    qtbot.waitUntil(lambda: window.docks["scaling"].isVisible() and panel.isVisible(), timeout=2000)
    assert panel.budget_flops() == pytest.approx(5.76e23)
    assert "72.2 B" in panel.text.toPlainText()  # Besiroglu et al.'s optimum, as the caption says


def test_presenting_at_1024x768_keeps_the_caption_under_a_fifth_of_the_height(window, qtbot):
    """The longest title and a five-line caption: the strip's text shrinks (never below the
    window's own size) until the strip takes at most a fifth of the screen."""
    window.resize(1024, 768)
    window.player.start("mixture-of-experts")
    window.presentation.enter(full_screen=False)
    window.resize(1024, 768)
    qtbot.wait(20)
    bar = window.caption_bar
    assert bar.isVisible() and bar.caption.text().startswith("Mixtral 8×7B keeps all")
    assert bar.height() <= 0.2 * window.height() + 1, (bar.height(), window.height())
    assert bar.caption.font().pointSizeF() >= 13  # still at least the window's own size
    window.presentation.leave()
    qtbot.wait(10)
    assert bar.caption.font().pointSizeF() == 13


def test_a_scene_whose_caption_cannot_be_filled_in_is_not_started_and_says_why(window, tmp_path):
    """The window reads the shipped scenes without filling their captions in (start-up
    time); a scene is filled in when it starts, and one that cannot be is refused with a
    message naming the step, leaving what is shown as it was."""
    from explorer.core.words.scenes import load_scenes
    from explorer.core.words.why import load_topics

    (tmp_path / "s.yaml").write_text(
        "schema: 1\nscenes:\n- id: s\n  title: Latency\n  start: {hardware: [t4], workload: {model: gpt2}}\n"
        "  steps:\n  - {caption: 'T4 memory latency {t4/latency}'}\n")
    state, player = window.state, window.player
    topics = {t.id for t in load_topics(state.catalog)}
    player.scenes = load_scenes(state.catalog, state.models, topics, tmp_path, fill=False)
    messages, before = [], state.session
    state.sig_message.connect(messages.append)
    assert player.start("s") is False
    assert not player.active and state.session == before and not window.caption_bar.isVisible()
    (message,) = messages
    assert message.startswith("The scene cannot be played: Latency, steps[0].caption: cannot fill in: ")
    assert "no measured memory latency" in message


def test_a_broken_shipped_scenes_file_is_named_in_the_menu_and_the_window_stays(window, monkeypatch):
    """The shipped scenes are read when the Scenes menu first opens: one that cannot be
    read is named there (disabled, with why), and the menu keeps the rest."""
    import explorer.ui.scene_player as scene_player
    from explorer.core.files.datafile import DataFileError

    def broken(*_args, **_kwargs):
        raise DataFileError("resources/scenes/01-cpu-vs-gpu.yaml", "is not valid YAML")

    monkeypatch.setattr(scene_player, "load_scenes", broken)
    window.player.scenes = None  # (as at start-up: not read yet)
    window.scenes_menu.aboutToShow.emit()
    [named] = [a for a in window.scenes_menu.actions() if a.text().startswith("Scenes could not be loaded")]
    assert not named.isEnabled() and "01-cpu-vs-gpu.yaml: is not valid YAML" in named.toolTip()
    assert window.act_lab in window.scenes_menu.actions() and window.player.scenes == {}


def test_a_step_brings_forward_the_window_s_view_it_names(window, qtbot):
    window.resize(1366, 768)
    window.show()
    window.docks["kernels"].raise_()  # the workload panel (and its memory bar) behind the kernel lab
    window.player.start("kv-cache-limit")
    assert window.player.view() == "memory"
    qtbot.waitUntil(lambda: window.workload_panel.isVisible(), timeout=2000)
    assert window.energy_dialog is None
    window.player.start("moving-data")  # the energy roofline, beside the window, following it
    assert window.player.view() == "energy"
    qtbot.waitUntil(lambda: window.energy_dialog is not None and window.energy_dialog.isVisible(),
                    timeout=2000)
    window.energy_dialog.close()
    window.player.start("decode-batching")
    assert window.player.view() == "roofline" and not window.energy_dialog.isVisible()
