"""Calibrating in the kernel lab keeps what it measured: a run that cannot be fitted, or
whose profile the data folder refuses, is saved and shown, and the window says why; a
calibration file that cannot be read is listed with the user's other broken files."""

from dataclasses import replace

import pytest
from PySide6 import QtWidgets

from explorer.kernels.journal import SUFFIX
from explorer.kernels.results import load_results


@pytest.fixture
def warnings(monkeypatch) -> list[str]:
    shown: list[str] = []
    monkeypatch.setattr(QtWidgets.QMessageBox, "warning", lambda *args: shown.append(args[2]))
    return shown


def _small_run(monkeypatch, with_stream: bool, wide: bool = True) -> None:
    """The calibration's products at the smoke sizes (seconds); the triad at the quick size
    (from main memory, which a fit needs) unless ``with_stream`` is False."""
    from explorer import runs
    from explorer.kernels import calibrate, runner

    def small(backend, suites, preset, **options):
        products = yield from runner.run(backend, [calibrate.SUITE], "smoke", **options, load=None)
        if not with_stream:
            return replace(products, suites=tuple(suites))
        stream = yield from runner.run(backend, ["stream"], preset, **options, load=None)
        return replace(stream, suites=tuple(suites), points=products.points + stream.points)

    monkeypatch.setattr(calibrate, "_match_cpu", lambda name, catalog: catalog["epyc-9654"])
    monkeypatch.setattr(runs, "run", small)
    # Products at smoke sizes on a shared machine are no quiet calibration: the held-out check
    # (tests of its own) is opened wide, so that this tests the way a profile goes and is used.
    monkeypatch.setattr(calibrate, "HELD_OUT_MEDIAN", 10.0 if wide else 0.0)
    monkeypatch.setattr(calibrate, "HELD_OUT_EACH", 100.0 if wide else 0.0)



def _calibrate(window, qtbot):
    window.state.set_devices(["epyc-9654"])
    with qtbot.waitSignal(window.runs.sig_finished, timeout=60000,
                          check_params_cb=lambda job, _r: job == "kernels") as finished:
        window.kernel_panel.calibrate_button.click()
    return finished.args[1]


def test_a_run_that_cannot_be_fitted_is_kept_beside_where_the_profile_would_go(window, qtbot, monkeypatch,
                                                                                tmp_path, warnings):
    _small_run(monkeypatch, with_stream=False)
    done = _calibrate(window, qtbot)
    assert done.profile is None and "could not be fitted" in done.error and "stream" in done.error
    saved = done.kept.path
    assert saved.parent == tmp_path / "data" / "efficiency" and saved.name.startswith("calibrate-")
    assert load_results(saved).points == done.results.points and done.results.points
    status = window.kernel_panel.eta.text()
    assert "could not be fitted" in status and str(saved) in status
    assert warnings and "could not be fitted" in warnings[0]
    qtbot.waitUntil(lambda: len(window.state.session.results) == 1)
    assert not list(tmp_path.rglob(f"*{SUFFIX}"))  # journalled while it ran, gone once saved
    assert window.state.session.params.efficiency == "published"


def test_a_profile_the_data_folder_refuses_goes_to_the_temporary_folder_and_is_not_used(
        window, qtbot, monkeypatch, tmp_path, warnings):
    import tempfile

    (tmp_path / "data").mkdir(exist_ok=True)
    (tmp_path / "data" / "efficiency").write_text("")  # a file where the folder should be
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    _small_run(monkeypatch, with_stream=True)
    messages: list[str] = []
    window.state.sig_message.connect(messages.append)
    done = _calibrate(window, qtbot)
    assert done.profile is not None and done.path == tmp_path / "tmp" / f"roofline-{done.profile.id}.yaml"
    assert done.path.exists() and not done.in_data_folder
    assert done.kept.path.parent == tmp_path / "data" / "results"  # the run: the next place that takes it
    assert any("The data folder refused the profile" in m and str(done.path) in m for m in messages)
    assert window.state.session.params.efficiency == "published"  # Times: calibrated would not find it
    assert not warnings


def test_the_window_lists_a_broken_calibration_once_times_use_calibrations(window, tmp_path):
    folder = tmp_path / "data" / "efficiency"
    folder.mkdir(parents=True)
    from tests.cli.test_broken_calibrations import _broken

    name, _ = _broken(folder, "fifo")
    assert not any(s.path.name == name for s in window.notice.skipped)  # not read before it is asked for
    window.state.set_params(efficiency="calibrated")
    assert [s.path.name for s in window.notice.skipped if s.what == "calibration"] == [name]
    assert window.notice.isVisible()
    window.notice.dismiss()
    window.state.set_params(batch=4)  # every edit reads the folder again: a dismissal stays
    assert not window.notice.isVisible() and not window.notice.skipped


def test_the_notice_stays_off_the_projector_when_a_broken_file_turns_up(window, tmp_path):
    from tests.cli.test_broken_calibrations import _broken

    folder = tmp_path / "data" / "efficiency"
    folder.mkdir(parents=True)
    _broken(folder, "cut short")
    window.presentation.enter()
    try:
        window.state.set_params(efficiency="calibrated")
        assert window.notice.skipped and not window.notice.isVisible()
    finally:
        window.presentation.leave()
    assert window.notice.isVisible()


def test_a_calibration_that_fails_its_held_out_check_is_kept_aside_and_times_stay(window, qtbot, monkeypatch,
                                                                                  tmp_path, warnings):
    _small_run(monkeypatch, with_stream=True, wide=False)  # no fit is within 0 %: every one fails
    messages: list[str] = []
    window.state.sig_message.connect(messages.append)
    done = _calibrate(window, qtbot)
    aside = tmp_path / "data" / "efficiency" / "rejected" / f"{done.profile.id}.yaml"
    assert done.rejected and done.path == aside and aside.is_file()
    status = window.kernel_panel.eta.text()
    assert status.startswith("Calibration not used: it predicts the held-out products")
    assert any(f"kept aside in {done.path}, not used" in m for m in messages)
    assert window.state.session.params.efficiency == "published" and not warnings


@pytest.mark.parametrize("how", ["button", "Esc"])
def test_a_calibration_stopped_while_it_measures_writes_no_profile_and_times_stay(window, qtbot, monkeypatch,
                                                                                  tmp_path, how):
    """Calibrate runs as a job (the window free meanwhile); its Cancel button, or Esc once
    the click has put the focus in the panel, stops it: no profile is written or used."""
    import threading

    from PySide6 import QtCore

    from explorer import runs
    from explorer.kernels import calibrate, runner

    release, reached = threading.Event(), threading.Event()

    def held(backend, suites, preset, cancel=None, **options):
        reached.set()
        assert release.wait(10)
        products = yield from runner.run(backend, [calibrate.SUITE], "smoke", cancel=cancel, **options,
                                         load=None)
        return replace(products, suites=tuple(suites))

    monkeypatch.setattr(runs, "run", held)
    window.state.set_devices(["epyc-9654"])
    panel = window.kernel_panel
    window.docks["kernels"].raise_()  # (the Kernel lab's tab in front, as where Calibrate is clicked)
    qtbot.waitUntil(panel.isVisible, timeout=2000)
    window.activateWindow()
    panel.calibrate_button.setFocus()
    with qtbot.waitSignal(window.runs.sig_finished, timeout=60000,
                          check_params_cb=lambda job, _r: job == "kernels") as finished:
        panel.calibrate_button.click()
        assert reached.wait(10)
        fired: list[int] = []
        QtCore.QTimer.singleShot(10, lambda: fired.append(1))
        qtbot.waitUntil(lambda: bool(fired), timeout=2000)  # the window handles events meanwhile
        assert panel.cancel_button.isEnabled() and not panel.calibrate_button.isEnabled()
        if how == "button":
            panel.cancel_button.click()
        else:
            assert QtWidgets.QApplication.focusWidget() is panel.cancel_button  # (Calibrate is disabled)
            qtbot.keyClick(panel.cancel_button, QtCore.Qt.Key.Key_Escape)
        release.set()
    done = finished.args[1]
    assert done.results.cancelled and done.profile is None
    assert not list(tmp_path.rglob("roofline-*.yaml")) and not list(tmp_path.rglob("efficiency/*.yaml"))
    assert window.state.session.params.efficiency == "published"
    assert not panel.escape.isEnabled() and panel.calibrate_button.isEnabled()


def test_a_burst_of_measured_points_redraws_the_chart_once(window, qtbot, monkeypatch, warnings):
    """Points that reach the GUI thread together (a busy thread, cache-sized kernels) are
    put on the chart in one redraw, not one a point: each redraw would hold the window."""
    from explorer.kernels.results import Point
    from explorer.kernels.runner import Progress
    from explorer.runs import KERNELS
    from explorer.ui.panels.kernel_panel import LIVE_EVERY_MS

    panel = window.kernel_panel
    panel._starting()
    shown: list[int] = []
    real = window.state.set_live_points
    monkeypatch.setattr(window.state, "set_live_points", lambda points: (shown.append(len(points)),
                                                                         real(points)))
    for i in range(20):
        point = Point(suite="stream", kernel="triad", dtype="fp32", size={"n": 1000 + i}, param={},
                      flops=2000, bytes=24000, time_median_s=1e-6, time_p20_s=1e-6, time_p80_s=1e-6)
        panel._on_progress(KERNELS, Progress(i + 1, 20, "triad", 0.01 * i, point))
    assert panel.table.rowCount() == 20 and shown == []  # the table at once, the chart later
    qtbot.waitUntil(lambda: shown == [20], timeout=2000)
    assert len(window.state.live_points) == 20
    panel._on_progress(KERNELS, Progress(20, 20, "", 0.2, point))  # one more, then the run fails at once
    panel._on_failed(KERNELS, "It stopped")
    qtbot.wait(2 * LIVE_EVERY_MS)
    assert shown == [20, 0] and window.state.live_points == [] and warnings == ["It stopped"]
