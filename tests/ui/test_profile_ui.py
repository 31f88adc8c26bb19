"""A profile of a real run in the window: File › Import profile…, or an Nsight Compute CSV
dropped on the window: its kernels on the chart, a broken export refused by name."""

from PySide6 import QtWidgets

from tests.profiles.test_ncu import raw_page
from tests.ui.drops import drop_file


def test_a_dropped_profile_puts_its_kernels_on_the_chart(window, qtbot, tmp_path):
    path = tmp_path / "run.csv"
    path.write_text(raw_page())
    messages = []
    window.state.sig_message.connect(messages.append)
    drop_file(window, path)
    qtbot.waitUntil(lambda: bool(window.state.profiles), timeout=2000)
    squares = [m for m in window.chart.chart.markers if m.kind == "profile" and m.symbol == "square"]
    assert {m.name for m in squares} == {"hgemm_kernel", "other"}
    # the triads ("other") are counted at the L2 too: a plus there (the saved session keeps it)
    assert [m.name for m in window.chart.chart.markers if m.kind == "profile" and m.symbol == "plus"] == \
        ["other at L2"]
    assert any(m.startswith("Profile run.csv: 2 kernels on the chart") for m in messages)
    # the workload panel puts each class's measured time beside its predicted one
    from explorer.core.analysis.profile_match import compare

    comparison = compare(window.state.profiles[0], window.state.analysis(), window.state.expected())
    products = next(r for r in comparison.rows if r.op_class == "matrix products")
    totals = window.workload_panel.totals.text()
    assert f"matrix products 2.5 ms ({products.measured_s / products.expected_s:.2f}× expected)" in totals
    assert window.act_import_profile.text() == "&Import profile…"


def test_a_broken_profile_is_refused_by_name_and_the_chart_stays(window, tmp_path, monkeypatch):
    shown = []
    monkeypatch.setattr(QtWidgets.QMessageBox, "critical", lambda *args: shown.append(args[2]))
    path = tmp_path / "run.csv"
    path.write_text(raw_page().replace('"10.00"', '"ten"'))
    assert not window.import_profile(path)
    assert window.state.profiles == ()
    assert shown and f"{path}: entry 'kernel ID 0': field 'gpu__time_duration.sum': 'ten' is not a number" \
        in shown[0]


def test_a_dropped_pytorch_trace_is_a_profile_not_a_model_config(window, qtbot, tmp_path):
    import json

    from tests.profiles.test_kineto import trace

    path = tmp_path / "trace.json"
    path.write_text(json.dumps(trace()))
    model = window.state.session.model
    drop_file(window, path)
    qtbot.waitUntil(lambda: bool(window.state.profiles), timeout=2000)
    assert window.state.profiles[0].tool.startswith("PyTorch profiler")
    assert window.state.session.model == model


def test_a_session_keeps_its_profile_and_hide_and_undo_take_it_off(window, qtbot, tmp_path):
    path = tmp_path / "run.csv"
    path.write_text(raw_page())
    assert not window.act_hide_profile.isEnabled()
    assert window.import_profile(path)
    assert window.act_hide_profile.isEnabled()
    window.state.undo()  # an import is one undo step
    assert window.state.profiles == () and not window.act_hide_profile.isEnabled()
    window.state.redo()
    session_path = tmp_path / "measured.yaml"
    assert window.save_session_to(session_path)
    window.new_session()
    assert window.state.profiles == () and not window.act_hide_profile.isEnabled()
    assert window.open_session(session_path)  # the kernels come back, not the CSV: it may be gone
    path.unlink()
    names = {m.name for m in window.chart.chart.markers if m.kind == "profile"}
    assert names == {"hgemm_kernel", "other", "other at L2"}
    window.act_hide_profile.trigger()
    assert window.state.profiles == () and not any(m.kind == "profile" for m in window.chart.chart.markers)
    window.state.undo()
    assert window.state.profiles[0].source == "run.csv" and window.act_hide_profile.isEnabled()


def test_the_details_of_an_op_show_the_profile_s_kernels_of_its_class(window, tmp_path):
    path = tmp_path / "run.csv"
    path.write_text(raw_page())
    window.state.select_op("gate_proj")  # a matrix product, selected before the import
    assert window.import_profile(path)
    html = window.details_panel.toHtml()  # it follows the import
    assert "Measured: matrix products" in html and "hgemm_kernel" in html
    assert "not matched to one op" in html
    window.state.select_op("attn_score")  # the profile has no attention kernel
    assert "has no kernel of this op" in window.details_panel.toHtml()


def test_the_details_of_a_product_show_the_kernels_of_its_own_shape(window):
    from tests.profiles.test_cpu_ops import GPT2_TRACE

    window.state.set_model("gpt2")
    window.state.set_params(phase="decode", batch=1, context=512, dtype="fp32")
    window.state.select_op("fc1")
    assert window.import_profile(GPT2_TRACE)
    html = window.details_panel.toHtml()
    assert "Measured: fc1, the products of shape 768 × 3,072" in html and "aten::addmm" in html
    assert "matched to this op by the shape" in html
    assert "48×" in html and "192×" not in html  # fc1's own 48 launches, not every addmm's 192
    window.state.select_op("attn_score")  # attention has no weights: its class's kernels
    assert "Measured: attention (the profile's kernels of this class)" in window.details_panel.toHtml()


def test_a_profile_of_another_device_is_noted_in_the_workload_panel(window):
    """TraceLens's MI300X trace beside the window's first device, an H100."""
    from pathlib import Path

    traces = Path(__file__).resolve().parents[1] / "data" / "tracelens"
    assert window.import_profile(traces / "qwen1.5-0.5b-chat-mi300x.pt.trace.json.gz")
    hardware = window.state.analysis().hardware.name
    assert "H100" in hardware
    totals = window.workload_panel.totals.text()
    assert f"the profile ran on AMD Instinct MI300X VF, not on {hardware}" in totals
