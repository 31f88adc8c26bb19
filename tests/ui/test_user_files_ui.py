"""No file in the user's data folder can stop the window: a broken device, autosave, results
file or scene is named in a notice above the chart, and the rest works."""

import pytest
from PySide6 import QtCore, QtWidgets

from explorer.ui.application import build_window, run_window
from tests.core.test_userfiles import write_broken_device, write_device

from .conftest import window_args


@pytest.fixture
def data(tmp_path, monkeypatch, catalog):
    monkeypatch.setenv("ROOFLINE_EXPLORER_DATA", str(tmp_path))
    write_broken_device(tmp_path / "hardware", catalog)
    (tmp_path / "scenes").mkdir()
    (tmp_path / "scenes" / "lecture.yaml").write_text("schema: 1\nscenes: [{id: lecture}]\n")
    return tmp_path


def open_window(qtbot, settings, **args):
    window = build_window(window_args(size=(1366, 768), **args), settings)
    qtbot.addWidget(window)
    with qtbot.waitExposed(window):
        window.show()
    return window


def test_the_window_starts_and_names_the_broken_files(qtbot, settings, data):
    window = open_window(qtbot, settings)
    try:
        assert window.notice.isVisible()
        text = window.notice.text
        assert "1 of your devices could not be loaded: my-gpu.yaml, field compute[" in text
        assert "unknown unit 'QFLOP/s'" in text
        assert "1 of your scenes could not be loaded: lecture.yaml, field title: is missing" in text
        assert window.state.analysis().totals.time_s > 0  # the bundled catalogue works
        menu = window.menuBar().actions()[3].menu()
        assert window.player._scenes is None  # the shipped scenes are read when first wanted
        menu.aboutToShow.emit()  # the menu opens
        assert "CPU vs GPU" in [a.text() for a in menu.actions()]
        menu.aboutToShow.emit()  # (filled once)
        assert [a.text() for a in menu.actions()].count("CPU vs GPU") == 1
    finally:
        window.runs.shutdown()


def test_a_broken_autosave_and_results_file_are_reported_not_opened(qtbot, settings, data, tmp_path):
    # An instance that crashed (no lock of a running process) left a broken autosave.
    (data / "autosave").mkdir()
    (data / "autosave" / "1-dead.yaml").write_text("schema: 1\nhardware: [t4]\nworkload: {model: gpt9}\n")
    results = tmp_path / "broken-run.json"
    results.write_text("{not json")
    session = tmp_path / "s.yaml"
    session.write_text("schema: 1\nhardware: [h100-sxm]\nworkload: {model: gpt2}\n"
                       f"results: ['{results}']\n")
    window = open_window(qtbot, settings, session=str(session))
    try:
        window.offer_restore()  # no dialog: the autosave cannot be restored
        text = window.notice.text
        assert "1 of your autosaved sessions could not be loaded: 1-dead.yaml, field workload.model: " \
               "unknown model 'gpt9'" in text
        assert "1 of your results files could not be loaded: broken-run.json: is not valid JSON" in text
        assert window.state.session.model == "gpt2"
    finally:
        window.runs.shutdown()


def test_moving_a_broken_file_aside_keeps_it_and_clears_the_row(qtbot, settings, data):
    window = open_window(qtbot, settings)
    try:
        device = next(s for s in window.notice.skipped if s.what == "device")
        buttons = [b for b in window.notice.findChildren(QtWidgets.QPushButton) if b.text() == "Move aside"]
        buttons[0].click()  # the device's row comes first
        assert not device.path.exists()
        assert [p.name.startswith("my-gpu.yaml.broken-") for p in (data / "hardware").iterdir()] == [True]
        assert "devices" not in window.notice.text and "scenes" in window.notice.text
        window.notice.dismiss()
        assert not window.notice.isVisible()
    finally:
        window.runs.shutdown()


def test_the_notice_never_reaches_the_projector(qtbot, settings, data):
    window = open_window(qtbot, settings)
    try:
        window.presentation.enter()
        assert not window.notice.isVisible()
        window.presentation.leave()
        assert window.notice.isVisible()
    finally:
        window.runs.shutdown()


def test_only_asking_for_the_broken_device_stops_the_window(data, capsys):
    code = run_window(window_args(screenshot=str(data / "shot.png"), hardware="my-gpu"))
    assert code == 1 and "your device 'my-gpu' could not be loaded" in capsys.readouterr().err
    assert run_window(window_args(screenshot=str(data / "shot.png"), size=(800, 600))) == 0


def test_a_user_version_of_a_bundled_device_says_so_on_its_card(qtbot, settings, tmp_path, monkeypatch,
                                                                  catalog):
    monkeypatch.setenv("ROOFLINE_EXPLORER_DATA", str(tmp_path))
    write_device(tmp_path / "hardware", catalog, "h100-sxm", notes="ours")
    window = open_window(qtbot, settings)
    try:
        assert window.state.catalog["h100-sxm"].notes == "ours"
        card = window.hardware_panel.card.toPlainText()
        assert "Your own version" in card and "replaces the bundled entry" in card
    finally:
        window.runs.shutdown()


def test_export_of_an_unrelated_device_works(data, tmp_path):
    from tests.cli.test_cli import run

    code, out, err = run("export", "--hardware", "h100-sxm", "--model", "gpt2",
                         "--out", str(tmp_path / "c.svg"))
    assert code == 0 and "wrote" in out and "1 of your devices could not be loaded" in err


def test_opening_a_session_with_a_broken_results_file_names_it(window, tmp_path):
    broken = tmp_path / "run.json"
    broken.write_text("{")
    path = tmp_path / "s.yaml"
    path.write_text(f"schema: 1\nhardware: [t4]\nworkload: {{model: gpt2}}\nresults: ['{broken}']\n")
    assert window.open_session(path)
    assert window.state.session.model == "gpt2" and window.state.session.results == ()
    assert "1 of your results files could not be loaded: run.json: is not valid JSON" in window.notice.text


def test_restoring_a_crashed_session_keeps_it_and_touches_nothing_before_the_answer(
        window, qtbot, monkeypatch):
    """The crashed instance's autosave is offered; while the question is open, this window's
    own autosave may run without touching it; Yes restores it and keeps it out of the recent
    files."""
    from explorer.core.model.session import Session
    from explorer.document.files import Recovery

    crashed = Recovery()
    crashed.claim()
    crashed.save(Session(model="gpt2"))
    crashed.lock_path.write_text('{"pid": 999999999, "start": null}')  # no such process
    before = crashed.autosave_path.read_bytes()

    def answer(*_args):
        window.state.set_params(batch=7)  # the user edits nothing yet, but an autosave runs
        window.autosaver.flush()
        assert crashed.autosave_path.read_bytes() == before
        return QtWidgets.QMessageBox.StandardButton.Yes

    monkeypatch.setattr(QtWidgets.QMessageBox, "question", answer)
    window.offer_restore()
    assert window.state.session.model == "gpt2" and not crashed.autosave_path.exists()
    assert window.recent_files() == [] and window.recovery.lock_path.exists()
    window.close()
    assert not window.recovery.lock_path.exists() and not window.recovery.autosave_path.exists()


def test_a_data_folder_that_cannot_be_written_shows_a_banner_until_solved(window, tmp_path):
    """Autosave cannot write: a banner says so and why (no dialog, no traceback); choosing
    another folder makes crash recovery work again there."""
    from explorer.document.files import Recovery

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    window.recovery = Recovery(blocker / "autosave")  # a folder that cannot be created
    window.offer_restore()
    assert window.save_banner.isVisibleTo(window) and "not being autosaved" in window.save_banner.label.text()
    assert "Not a directory" in window.save_banner.label.text()
    window.autosaver.debounce_s = 0.0  # every tick saves what changed
    window.state.set_params(batch=3)
    window._autosave_tick()  # a failing save keeps the banner, raises nothing
    assert window.save_banner.isVisibleTo(window)
    window.autosaver.flush = lambda: (_ for _ in ()).throw(OSError(28, "No space left on device"))
    window._autosave_tick()
    assert "No space left on device" in window.save_banner.label.text()
    del window.autosaver.flush
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    window.autosave_into(str(elsewhere))
    assert not window.save_banner.isVisibleTo(window)
    assert window.recovery.autosave_path.parent == elsewhere and window.recovery.autosave_path.exists()


def test_html_in_a_device_name_is_shown_as_text(window):
    from dataclasses import replace

    from explorer.core.hardware.catalog import Catalog

    catalog = window.state.catalog
    mine = replace(catalog["h100-sxm"], id="h100-mine", name='<img src="x.png"><a href="y">H100</a>')
    window.state.set_catalog(Catalog([*(catalog[i] for i in catalog), mine]))
    window.state.set_devices(("h100-mine",))
    assert "&lt;img" in window.workload_panel.totals.text()
    assert window.summary_label.textFormat() == QtCore.Qt.TextFormat.PlainText
    assert window.backend_label.textFormat() == QtCore.Qt.TextFormat.PlainText


def test_an_untouched_session_leaves_no_autosave_to_offer(window):
    """Only work a crash could lose is autosaved: the session as the window opened it is not
    (after a crash it would be offered in place of real work), an edit is, and undoing the
    edit takes the autosave away again."""
    window.offer_restore()  # as at start: this instance claims its files
    window.autosaver.debounce_s = 0.0
    window.autosaver.changed()
    window._autosave_tick()
    assert not window.recovery.autosave_path.exists()
    window.state.set_params(batch=window.state.session.params.batch + 3)
    window._autosave_tick()
    assert window.recovery.autosave_path.exists()
    window.state.undo_stack.undo()
    window._autosave_tick()
    assert not window.recovery.autosave_path.exists()
