"""The design lab window: stages step the chart, the sliders move the roofs, measurements
are overlaid, and the user's session is left alone."""

import pytest
from PySide6 import QtCore, QtWidgets
from PySide6.QtTest import QTest

from explorer.core.words.design_lab import LAB_ID
from explorer.ui.design_lab_window import bytes_slider, slider_bytes
from tests.kernels.test_results import point, results


@pytest.fixture
def lab(window, qtbot):
    window.act_lab.trigger()
    lab = window.design_lab
    assert lab is not None and lab.isVisible()
    return lab


def test_slider_scale_round_trips():
    assert slider_bytes(0) == 1024 and slider_bytes(40) == 1024 * 2**10
    assert all(bytes_slider(slider_bytes(v)) == v for v in range(49))


def test_stages_step_the_chart_and_leave_the_session_alone(window, lab):
    before = window.state.session
    assert lab.state.session.hardware == ("xeon-platinum-8480",)
    QTest.keyClick(lab, QtCore.Qt.Key.Key_PageDown)
    assert lab.lab.stage == 1 and lab.state.session.hardware == (LAB_ID, "xeon-platinum-8480")
    assert lab.state.device(LAB_ID).peak_flops("fp32") == 19.5e12
    assert lab.caption.counter.text() == "2 / 7" and "108 SMs × 64 fp32 lanes" in lab.caption.caption.text()
    assert not lab.in_flight.isEnabled()  # the cap belongs to the latency-hiding stage
    assert "Applies at stage 3" in lab.in_flight_label.text()
    lab.go(3)
    lab.in_flight.setValue(16)  # 16 KiB
    assert lab.state.device(LAB_ID).bandwidth_bytes_per_s == pytest.approx(16384 / 406e-9)
    assert "16 KiB in flight ÷ 406 ns latency" in lab.in_flight_label.text()
    assert "= 40.4 GB/s of 2.04 TB/s" in lab.in_flight_label.text()
    assert "40.4 GB/s" in lab.caption.caption.text()
    assert lab.why.toPlainText().startswith("Reading memory takes hundreds")
    QTest.keyClick(lab, QtCore.Qt.Key.Key_PageDown)
    # The next stage drops the cap: the catalogue GPU at its datasheet bandwidth.
    assert lab.lab.stage == 4 and not lab.in_flight.isEnabled()
    assert lab.state.session.what_ifs == ()
    assert lab.state.device("a100-80gb-sxm").bandwidth_bytes_per_s == 2039e9
    lab.go(6)
    assert lab.state.session.hardware == ("a100-80gb-sxm", "xeon-platinum-8480")
    lab.batch.setValue(8)
    assert lab.state.params.batch == 8 and lab.state.params.dtype == "bf16"
    assert window.state.session == before and window.state.undo_stack.count() == 0


def test_measurements_are_overlaid(window, lab, tmp_path):
    path = tmp_path / "gpu.json"
    results(point(suite="parallelism", kernel="copy", param={"blocks": 216}, flops=0, bytes=2_000_000,
                  time_median_s=1e-6, time_p20_s=0.9e-6, time_p80_s=1.1e-6),
            point(suite="decode-batch", kernel="b8", dtype="bf16", flops=10**9, bytes=10**8,
                  time_median_s=1e-4, time_p20_s=0.9e-4, time_p80_s=1.1e-4),
            machine={"backend": "cupy", "gpu": {"name": "Test GPU"}}).save(path)
    window.state.add_results(str(path))
    lab.go(3)
    xs, _ = lab.law.measured.getData()
    assert len(xs) == 1 and 10 ** xs[0] == pytest.approx(216 * 256 * 16)
    assert lab.law_note.text().startswith("Hexagons: 1 parallelism point measured")
    assert lab.state.session.results == ()
    lab.go(6)
    assert lab.state.session.results == (str(path),)
    drawn = [m.name for m in lab.chart.chart.markers if m.kind == "measured"]
    assert drawn == ["decode-batch/b8"]  # only the decode-batch points (the copy has no FLOPs)
    assert "decode-batch measured in" in lab.caption.caption.text()


def test_the_lab_closes_cleanly(window, lab, qtbot):
    lab.close()
    qtbot.waitUntil(lambda: window.design_lab is None)


def test_presenting_the_lab_scales_its_side_panel(lab):
    dock = lab.findChild(QtWidgets.QDockWidget, "dock-design-choices")
    before = lab.in_flight_label.font().pointSizeF()
    lab.presentation.enter()
    assert lab.in_flight_label.font().pointSizeF() == pytest.approx(before * 1.6)
    assert lab.chart.chart.page.text >= 1.6 * 13
    lab.presentation.leave()
    assert lab.in_flight_label.font().pointSizeF() == pytest.approx(before) and dock.isVisible()
