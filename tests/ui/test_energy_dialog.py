"""The Energy roofline window: opened from the View menu (Ctrl+Shift+E), it follows the
workload, the devices and the measurement files, says what it draws, and exports as
``export --view energy`` does."""

from PySide6 import QtCore, QtGui

from explorer.core.words.energy_words import energy_sentences
from tests.test_energy_chart import metered_run


def test_the_window_opens_follows_the_workload_and_exports(window, qtbot, tmp_path):
    action = window.act_energy
    assert action.shortcut() == QtGui.QKeySequence("Ctrl+Shift+E") and action.text() == "&Energy roofline…"
    action.trigger()
    dialog = window.energy_dialog
    qtbot.waitExposed(dialog)
    view = dialog.picture.view
    assert dialog.summary.text() == " ".join(energy_sentences(view))
    assert "moving its data costs 211 times the computing" in dialog.summary.text()  # Llama 3 8B decode, bf16
    window.state.set_params(batch=64)
    assert dialog.picture.view.step.intensity > 30 * view.step.intensity
    assert "5.3 times the computing" in dialog.summary.text()
    image = dialog.picture.grab().toImage()
    assert image.pixelColor(image.width() // 2, image.height() // 2).isValid()
    for suffix in ("png", "svg"):
        path = tmp_path / f"energy.{suffix}"
        assert dialog.export(str(path)) and path.stat().st_size > 1000
    assert "energy balance 217 FLOP/byte" in (tmp_path / "energy.svg").read_text()
    window.act_energy.trigger()  # again: the same window, brought to the front
    assert window.energy_dialog is dialog


def test_a_measurement_file_with_power_adds_its_roof_and_the_theme_follows(window, qtbot, tmp_path):
    window.act_energy.trigger()
    dialog = window.energy_dialog
    path = tmp_path / "run.json"
    metered_run(path)
    window.state.add_results(str(path))
    assert [r.measured for r in dialog.picture.view.roofs] == [False, True]
    assert "run.json: fitted, fp32: ε_flop 0.6 ± " in dialog.summary.text()
    window.set_theme("contrast")
    assert dialog.picture.theme == "contrast"
    dialog.picture.resize(800, 500)
    image = dialog.picture.grab().toImage()
    assert image.pixelColor(3, 3) == QtGui.QColor("#000000")  # drawn in the theme's background
    window.set_theme("light")


def test_an_fp8_workload_says_why_nothing_is_placed(window):
    window.act_energy.trigger()
    window.state.set_params(dtype="fp8")
    text = window.energy_dialog.summary.text()
    assert "No circuit energy for fp8 arithmetic" in text and "choose one of those" in text
    assert window.energy_dialog.picture.view.roofs == ()
    QtCore.QCoreApplication.processEvents()
