"""Panels and state in both directions; sessions, broken files and the kernel lab."""

import threading
from pathlib import Path

import pytest
from PySide6 import QtCore, QtWidgets

from explorer.core.model.session import Session
from explorer.kernels.journal import recover
from explorer.kernels.runner import Progress
from explorer.paths import user_file


def test_workload_panel_writes_the_state(window):
    panel, state = window.workload_panel, window.state
    panel.batch.setValue(16)
    assert state.params.batch == 16
    panel.phase.setCurrentText("prefill")
    assert state.params.phase == "prefill" and panel.seq.isEnabled() and not panel.context.isEnabled()
    panel.kv_dtype.setCurrentText("fp8")
    assert state.params.kv_dtype == "fp8"
    panel.kv_dtype.setCurrentText("same as dtype")
    assert state.params.kv_dtype is None
    panel.model_box.setCurrentIndex(panel.model_box.findData("resnet-50"))
    assert state.model.id == "resnet-50"
    assert not panel.phase.isEnabled() and not panel.attention.isEnabled()  # a CNN has neither


def test_each_row_is_shown_and_enabled_where_its_parameter_applies(window):
    """The panel reads ``Parameter.applies``: in training the weights' and the cache's
    precisions are greyed out (choosing one was refused with an error in the status bar),
    the training rows appear, the inference-only ones go; leaving training resets what
    only training uses (one step)."""
    panel, state = window.workload_panel, window.state
    form = panel._form
    state.set_params(weight_dtype="int4", kv_dtype="fp8")
    assert panel.weight_dtype.isEnabled() and panel.kv_dtype.isEnabled()
    assert form.isRowVisible(panel.editors["memory_fraction"]) and not form.isRowVisible(panel.editors["sp"])
    assert form.isRowVisible(panel._rows["Weight scales"])  # int4 carries group scales
    state.set_params(phase="train")
    assert state.params.weight_dtype is None and state.params.kv_dtype is None  # held outside inference
    assert not panel.weight_dtype.isEnabled() and not panel.kv_dtype.isEnabled()
    assert not form.isRowVisible(panel._rows["Weight scales"])
    assert form.isRowVisible(panel.editors["sp"]) and form.isRowVisible(panel._rows["Sharding"])
    assert not form.isRowVisible(panel.editors["memory_fraction"]) and not panel.context.isEnabled()
    state.set_params(recompute="full", zero=1)
    state.set_params(phase="decode")
    assert state.params.recompute == "none" and state.params.zero == 0
    assert not form.isRowVisible(panel.editors["recompute"])
    assert not form.isRowVisible(panel.editors["allreduce"])
    state.set_params(tp=2)
    assert form.isRowVisible(panel.editors["allreduce"])


def test_compare_with_draws_another_model_s_step_and_undo_takes_it_away(window):
    panel, state = window.workload_panel, window.state
    panel.compare_box.setCurrentIndex(panel.compare_box.findData("llama-2-13b"))
    assert state.session.compare == "llama-2-13b"
    assert [m.name for m in window.chart.chart.markers if m.kind == "compared"] == ["Llama 2 13B"]
    state.set_params(tp=8)  # Llama 3 8B's heads split over 8; Llama 2 13B's 40 do too
    panel.compare_box.setCurrentIndex(panel.compare_box.findData("gpt2"))  # 12 heads: they do not
    assert not [m for m in window.chart.chart.markers if m.kind == "compared"]
    assert "GPT-2 (124M) is not drawn beside it: GPT-2 (124M) has 12 attention heads" in panel.notes.text()
    state.undo()
    assert panel.compare_box.currentData() == "llama-2-13b"
    state.undo()
    state.undo()
    assert state.session.compare == "" and panel.compare_box.currentText() == "none"
    assert not [m for m in window.chart.chart.markers if m.kind == "compared"]


def test_workload_panel_follows_the_state(window):
    panel, state = window.workload_panel, window.state
    state.set_params(batch=32, context=4096)
    assert panel.batch.value() == 32 and panel.context.value() == 4096
    assert "tokens/s" in panel.totals.text()
    assert panel.table_model.rowCount() == len(state.analysis().ops)
    state.undo_stack.undo()
    assert panel.batch.value() == 1


def test_memory_bar_turns_red_when_it_does_not_fit(window):
    window.state.set_model("llama-3-70b")
    assert not window.workload_panel.memory._fits
    assert "does NOT fit" in window.workload_panel.memory.text
    assert "of 71.7 GiB (90% of 79.6 GiB usable)" in window.workload_panel.memory.text
    assert "has 71.7 GiB to give (90% of 79.6 GiB usable)" in window.workload_panel.notes.text()


def test_memory_share_sets_the_budget_and_undoes(window):
    panel, state = window.workload_panel, window.state
    state.set_params(batch=1800, context=256)
    assert panel.memory._fits and panel.memory_share.value() == 90
    panel.memory_share.setValue(50)  # half of the usable memory: 1,800 sequences no longer fit
    assert state.params.memory_fraction == 0.5 and not panel.memory._fits
    assert "(50% of 79.6 GiB usable)" in panel.memory.text
    state.undo_stack.undo()
    assert panel.memory_share.value() == 90 and panel.memory._fits


def test_table_and_chart_selection_follow_each_other(window):
    state, panel = window.state, window.workload_panel
    row = panel.table_model.row_of("o_proj")
    panel.table.selectRow(panel.proxy.mapFromSource(panel.table_model.index(row, 0)).row())
    assert state.session.selected_op == "o_proj"
    [ring] = [m for m in window.chart.chart.markers if m.kind == "selection"]
    [op] = [m for m in window.chart.chart.markers if m.kind == "op" and m.name == "o_proj"]
    assert ring.name == "o_proj" and ring.center == op.center
    state.select_op("down_proj")
    current = panel.table.selectionModel().selectedRows()[0]
    assert panel.proxy.data(current) == "down_proj"
    assert "down_proj" in window.details_panel.toPlainText()


def test_hardware_panel_overlays_devices(window):
    panel, state = window.hardware_panel, window.state
    panel.item("xeon-platinum-8480").setCheckState(0, QtCore.Qt.CheckState.Checked)
    assert state.session.hardware == ("h100-sxm", "xeon-platinum-8480")
    labels = [t.text for t in window.chart.chart.texts_of("roof")]
    # the Xeon's roof is drawn: 56 × 2 × 16 × 2 FLOP × 3.8 GHz = 13.6 TFLOP/s
    assert any("fp32 vector 13.6 TFLOP/s" in text for text in labels)
    assert len({text.startswith(("H100 SXM: ", "Xeon 8480+: ")) for text in labels}) == 1  # named alike
    for ident in ("l4", "t4", "b200"):
        panel.item(ident).setCheckState(0, QtCore.Qt.CheckState.Checked)
    assert len(state.session.hardware) == 4  # the fifth was refused ...
    assert panel.item("b200").checkState(0) == QtCore.Qt.CheckState.Unchecked  # ... and unticked
    state.set_devices(["t4"])
    assert panel.item("h100-sxm").checkState(0) == QtCore.Qt.CheckState.Unchecked
    panel.tree.setCurrentItem(panel.item("t4"))
    assert "320 GB/s" in panel.card.toPlainText() and "derived" in panel.card.toPlainText()


def test_search_filters_devices(window):
    panel = window.hardware_panel
    panel.search.setText("epyc")
    visible = [i for i in window.state.catalog if not panel.item(i).isHidden()]
    assert visible == ["epyc-9654", "epyc-9755"]
    panel.search.setText("orin")
    visible = [i for i in window.state.catalog if not panel.item(i).isHidden()]
    assert len(visible) == 7 and all(i.startswith("jetson-") for i in visible)
    panel.search.setText("4090")
    assert [i for i in window.state.catalog if not panel.item(i).isHidden()] == ["rtx-4090"]
    # one vendor in a class: named on the class's row, the rows without the vendor's name
    desktop_gpus = panel.item("rtx-4090").parent()
    assert desktop_gpus.text(0) == "Desktop · NVIDIA (3)"
    assert desktop_gpus.parent().text(0).startswith("GPUs (")
    assert panel.item("rtx-4090").text(0) == "GeForce RTX 4090"
    amd_cpus = panel.item("epyc-9654").parent()  # kind, class, vendor
    assert amd_cpus.text(0) == "AMD (2)" and amd_cpus.parent().text(0) == "Data centre (6)"
    assert not desktop_gpus.isHidden() and amd_cpus.isHidden()  # AMD data-centre CPUs: none shown
    assert amd_cpus.parent().parent().isHidden()  # CPUs: none shown
    panel.search.setText("edge")
    visible = {i for i in window.state.catalog if not panel.item(i).isHidden()}
    assert visible == {hw.id for hw in window.state.catalog.values() if hw.device_class == "edge"}
    assert not panel.item("raspberry-pi-5").parent().isHidden() and amd_cpus.parent().isHidden()
    panel.search.setText("")
    assert not any(panel.item(i).isHidden() for i in window.state.catalog)
    assert not amd_cpus.parent().parent().isHidden()


def test_sessions_round_trip_through_the_window(window, tmp_path):
    state = window.state
    state.set_devices(["h200-sxm", "l4"])
    state.set_params(batch=12)
    path = tmp_path / "lecture.yaml"
    assert window.save_session_to(path)
    assert state.undo_stack.isClean() and "lecture.yaml" in window.windowTitle()
    window.new_session()
    assert state.session == Session()
    assert window.open_session(path)
    assert state.session.hardware == ("h200-sxm", "l4") and state.params.batch == 12
    assert window.recent_files()[0] == str(path)


def test_a_broken_session_gets_a_dialog_and_changes_nothing(window, tmp_path, monkeypatch):
    shown = []
    monkeypatch.setattr(QtWidgets.QMessageBox, "critical", lambda *args: shown.append(args[2]))
    window.state.set_params(batch=7)
    path = tmp_path / "broken.yaml"
    path.write_text("schema: 1\nhardware: [h100-sxm]\nworkload: {model: gpt2, batch: -2}\n")
    assert not window.open_session(path)
    assert "field 'workload.batch': must be positive" in shown[0] and str(path) in shown[0]
    assert window.state.params.batch == 7  # the user's work stays
    path.write_text("{{{ not yaml")
    assert not window.open_session(path)
    assert "not valid YAML" in shown[1]


def test_a_broken_results_file_gets_a_dialog(window, tmp_path, monkeypatch):
    shown = []
    monkeypatch.setattr(QtWidgets.QMessageBox, "warning", lambda *args: shown.append(args[2]))
    path = tmp_path / "r.json"
    path.write_text('{"schema": 1, "points": 3}')
    assert not window.kernel_panel.load(str(path))
    assert str(path) in shown[0]
    assert window.state.session.results == ()


def test_kernel_lab_runs_a_suite_with_live_points(window, qtbot, tmp_path):
    panel = window.kernel_panel
    for name, box in panel.suites.items():
        box.setChecked(name == "stream")
    panel.preset.setCurrentText("smoke")
    reports = []
    window.runs.sig_progress.connect(lambda job, p: reports.append(p))
    with qtbot.waitSignal(window.runs.sig_finished, timeout=30000,
                          check_params_cb=lambda job, _r: job == "kernels") as finished:
        panel.start()
    results = finished.args[1]
    assert [p.kernel for p in results.points] == ["copy", "scale", "add", "triad"]
    assert all(isinstance(r, Progress) for r in reports)
    assert [r.done for r in reports] == sorted(r.done for r in reports)
    qtbot.waitUntil(lambda: len(window.state.session.results) == 1)
    assert not list(user_file("results").glob(".run-*"))  # saved: the run's journal is gone
    assert panel.table.rowCount() == 4
    measured = [m for m in window.chart.chart.markers if m.kind == "measured"]
    assert len(measured) == 3  # copy does no arithmetic: no place on the chart
    assert window.state.live_points == []
    copy = tmp_path / "copy.json"
    assert panel.save_button.isEnabled() and panel.save_results(results, str(copy))
    assert panel.load(str(copy)) and len(window.state.session.results) == 2


@pytest.mark.parametrize("elsewhere", [True, False])
def test_a_run_the_data_folder_cannot_take_is_kept(window, qtbot, tmp_path, monkeypatch, elsewhere):
    """A full or read-only data folder: the user is asked where to save the run; declined,
    the run stays in the session (and Save results as… writes it later)."""
    from explorer.kernels.results import Results
    from explorer.ui.panels import kernel_panel

    real_save = Results.save

    def save(self, path):
        if Path(path).parent.name == "results" and Path(path).name.startswith("run-"):  # the data folder
            raise OSError(30, "Read-only file system")
        real_save(self, path)

    monkeypatch.setattr(Results, "save", save)
    chosen = str(tmp_path / "mine.json") if elsewhere else ""
    monkeypatch.setattr(kernel_panel.QtWidgets.QFileDialog, "getSaveFileName",
                        staticmethod(lambda *args, **kwargs: (chosen, "")))
    panel = window.kernel_panel
    for name, box in panel.suites.items():
        box.setChecked(name == "stream")
    panel.preset.setCurrentText("smoke")
    with qtbot.waitSignal(window.runs.sig_finished, timeout=30000,
                          check_params_cb=lambda job, _r: job == "kernels"):
        panel.start()
    qtbot.waitUntil(lambda: len(window.state.session.results) == 1)
    [name] = window.state.session.results
    assert len(dict(window.state.results())[name].points) == 4  # nothing lost
    journals = list(user_file("results").glob(".run-*.journal.jsonl"))
    if elsewhere:
        assert name == chosen and Path(chosen).exists() and not journals
    else:
        assert name.endswith("(not saved)") and "Save results as" in panel.eta.text()
        assert panel.save_results(dict(window.state.results())[name], str(tmp_path / "later.json"))
        # Only in memory: the journal stays on disk, and a later start recovers it.
        [journal] = journals
        assert len(recover(journal).points) == 4
        journal.unlink()


def test_a_run_that_was_killed_comes_back_when_the_app_starts(window, tmp_path):
    """A kernel run's journal left by a process that is gone becomes a results file in the
    session at start, before any question about sessions is asked."""
    from explorer.kernels.journal import Journal
    from tests.kernels.test_journal import RUN, orphan, point

    journal = Journal(user_file("results"), RUN)
    for n in (1, 2, 3):
        journal.add(point(n))
    orphan(journal)
    window.offer_restore()
    [name] = window.state.session.results
    assert name.endswith("-recovered.json") and Path(name).exists() and not journal.path.exists()
    assert dict(window.state.results())[name].points == (point(1), point(2), point(3))
    assert "Recovered 3 points of an interrupted run" in window.kernel_panel.eta.text()


def test_cancel_stops_a_run(window, qtbot):
    """Cancel ends the run at the next timed region (tests/kernels/test_runner.py counts
    that mechanism); here: the button reaches the worker and the run ends cancelled, with
    the points measured so far. No wall-clock bound: CI machines may be busy."""
    panel = window.kernel_panel
    for name, box in panel.suites.items():
        box.setChecked(name in ("stream", "intensity"))
    panel.preset.setCurrentText("quick")
    with qtbot.waitSignal(window.runs.sig_progress, timeout=10000):
        panel.start()
    with qtbot.waitSignal(window.runs.sig_finished, timeout=30000,
                          check_params_cb=lambda job, _r: job == "kernels") as finished:
        panel.cancel_button.click()
    assert finished.args[1].cancelled
    assert panel.run_button.isEnabled()


def test_closing_mid_run_stops_the_worker(window, qtbot):
    panel = window.kernel_panel
    panel.preset.setCurrentText("quick")
    with qtbot.waitSignal(window.runs.sig_progress, timeout=10000):
        panel.start()
    assert window.runs.running("kernels")
    window.close()
    assert not window.runs.running("kernels")  # the conftest check also fails on a leftover thread


def test_a_replaced_run_s_reports_never_arrive(window, qtbot):
    """Starting a job again cancels the running one, whose late reports are dropped."""
    runs, arrived = window.runs, []
    runs.sig_progress.connect(lambda job, report: arrived.append(report))
    release = threading.Event()

    def slow(token, emit):
        release.wait(5)
        emit("progress", "old")
        return "old"

    runs.submit("test", slow)
    with qtbot.waitSignal(runs.sig_finished, timeout=5000,
                          check_params_cb=lambda job, result: result == "new"):
        runs.submit("test", lambda token, emit: (emit("progress", "new"), "new")[1])
    release.set()
    assert runs.shutdown() and "old" not in arrived and runs.results["test"] == "new"
    qtbot.wait(50)  # any queued late report would be delivered by now
    assert "old" not in arrived


def test_an_unavailable_gpu_says_why(window, qtbot):
    panel = window.kernel_panel
    panel.backend.setCurrentIndex(panel.backend.findData("cupy"))
    qtbot.waitUntil(lambda: "Looking" not in panel.availability.text(), timeout=10000)
    from explorer.kernels import gpuinfo

    if isinstance(gpuinfo.detect_gpu(0), gpuinfo.Unavailable):
        assert "Unavailable:" in panel.availability.text()
        assert not panel.run_button.isEnabled()


def test_workload_files_round_trip_and_broken_ones_are_refused(window, tmp_path, monkeypatch):
    from explorer.core.model.session import save_workload

    state = window.state
    state.set_workload("llama-2-13b", state.params.__class__(phase="prefill", batch=3, seq=256),
                       "test")
    path = tmp_path / "w.yaml"
    save_workload(path, state.session)
    state.set_model("gpt2")
    assert window.open_workload(path)
    assert state.model.id == "llama-2-13b" and state.params.seq == 256 and state.params.batch == 3
    shown = []
    monkeypatch.setattr(QtWidgets.QMessageBox, "critical", lambda *args: shown.append(args[2]))
    path.write_text("schema: 1\nworkload: {model: llama-2-13b, seq: 0}\n")
    assert not window.open_workload(path)
    assert "field 'workload.seq': must be positive" in shown[0]
    assert state.params.seq == 256


def test_roof_precision_menu(window):
    window.roofs_menu.aboutToShow.emit()  # what opening the menu does
    actions = {a.text(): a for a in window.roofs_menu.actions()}
    assert actions["Automatic: the workload's precision and fp32"].isChecked()
    actions["fp8"].setChecked(True)
    assert window.state.session.precisions == ("fp32", "bf16", "fp8")
    labels = sorted(t.text for t in window.chart.chart.texts_of("roof"))
    assert "fp8 matrix 1.98 PFLOP/s" in labels
    window.state.set_precisions(())
    assert "fp8 matrix 1.98 PFLOP/s" not in [t.text for t in window.chart.chart.texts_of("roof")]


def test_layer_editor_builds_a_custom_stack(window, qtbot, monkeypatch):
    from explorer.ui.panels.layer_editor import LayerStackEditor

    dialog = LayerStackEditor((), window)
    qtbot.addWidget(dialog)
    assert dialog.list.count() == 6  # a starter stack, not an empty page
    dialog.list.setCurrentRow(5)
    dialog.remove_layer()
    dialog.add_layer("conv2d")
    assert [layer.kind for layer in dialog.layers][-1] == "conv2d"
    dialog.list.setCurrentRow(dialog.list.count() - 1)
    dialog.move_layer(-1)
    assert dialog.layers[-2].kind == "conv2d"
    dialog.list.setCurrentRow(dialog.list.count() - 2)
    dialog.remove_layer()
    # Edit the attention layer through its form: 32 heads cannot be shared by 7 KV heads.
    dialog.list.setCurrentRow(2)
    role = QtWidgets.QFormLayout.ItemRole
    form = dialog.form
    fields = {form.itemAt(i, role.LabelRole).widget().text(): form.itemAt(i, role.FieldRole).widget()
              for i in range(form.rowCount())}
    fields["kv_heads"].setValue(7)
    assert "cannot be shared" in dialog.error.text() and dialog.layers[2].get("kv_heads") == 8
    fields["kv_heads"].setValue(4)
    assert dialog.layers[2].get("kv_heads") == 4 and not dialog.error.text()
    layers = tuple(dialog.layers)
    monkeypatch.setattr(LayerStackEditor, "exec", lambda self: QtWidgets.QDialog.DialogCode.Accepted)
    monkeypatch.setattr(LayerStackEditor, "result_layers", lambda self: layers)
    state = window.state
    steps = state.undo_stack.count()
    assert window.workload_panel.open_layer_editor()
    assert state.model.id == "custom" and state.undo_stack.count() == steps + 1
    assert window.workload_panel.model_box.currentData() == "custom"
    assert window.workload_panel.table_model.rowCount() == len(state.analysis().ops) > 5
    state.undo_stack.undo()
    assert state.model.id == "llama-3-8b"


def test_explain_panel_writes_its_words_when_its_tab_comes_to_the_front(window, qtbot):
    """Behind another tab (as at start-up) the panel works nothing out; brought to the front
    it shows the state as it is then, and follows it from there."""
    from explorer.core.words.explain import explain_state

    panel, state = window.explain_panel, window.state

    def words() -> str:  # what the panel says of the state as it is now
        return explain_state(state.model, state.params, state.devices(), None)[0].text

    assert panel.text.toPlainText() == ""  # the workload's tab is in front
    state.set_params(batch=64)
    assert panel.text.toPlainText() == ""
    window.docks["explain"].raise_()
    qtbot.waitUntil(lambda: panel.text.toPlainText() != "")
    at_64 = words()
    assert at_64 in panel.text.toPlainText()
    state.set_params(batch=1)
    assert words() != at_64 and words() in panel.text.toPlainText()
    window.docks["workload"].raise_()
    qtbot.waitUntil(lambda: panel.visibleRegion().isEmpty())
    state.set_params(batch=64)
    assert at_64 not in panel.text.toPlainText()  # behind again: due, not worked out
    window.docks["explain"].raise_()
    qtbot.waitUntil(lambda: at_64 in panel.text.toPlainText())


def test_explain_panel_fills_its_topic_in_when_seen_and_names_one_that_cannot_be(window, qtbot, monkeypatch):
    """The "why" topic is filled in with the words (not at start-up); a topic whose number
    cannot be filled in says which, and the panel stays."""
    from explorer.core.words.why import Topic

    panel = window.explain_panel
    assert panel.why.toPlainText() == ""  # behind the workload's tab
    window.docks["explain"].raise_()
    qtbot.waitUntil(lambda: panel.why.toPlainText() != "")
    assert "{" not in panel.why.toPlainText()  # every placeholder filled in
    broken = Topic("broken", "Broken", "{no-such-device/bandwidth}")
    monkeypatch.setattr(panel, "topics", [*panel.topics, broken])
    panel.topic.addItem("Broken", "broken")
    panel.show_topic("broken")
    assert panel.why.toPlainText().startswith("This topic cannot be filled in: {no-such-device/bandwidth}")


def test_explain_panel_keeps_the_reader_s_place_in_a_topic_as_the_state_changes(window, qtbot):
    panel, state = window.explain_panel, window.state
    window.docks["explain"].raise_()
    qtbot.waitUntil(lambda: panel.why.toPlainText() != "")
    longest = max(panel.topics, key=lambda t: len(t.text))
    panel.show_topic(longest.id)
    panel.why.setFixedHeight(120)  # shorter than the topic, however wide the docks' column is
    qtbot.waitUntil(lambda: panel.why.verticalScrollBar().maximum() > 0)
    bar = panel.why.verticalScrollBar()
    assert bar.maximum() > 0  # (the box is shorter than the topic)
    bar.setValue(bar.maximum())
    state.set_params(batch=64)  # the words above are worked out again
    qtbot.waitUntil(lambda: "64" in panel.text.toPlainText())
    assert bar.value() == bar.maximum() > 0


def test_explain_panel_torn_out_from_behind_another_tab_writes_its_words(window, qtbot):
    """(A tab torn out while behind another says nothing to visibilityChanged.)"""
    panel = window.explain_panel
    assert panel.text.toPlainText() == ""
    window.docks["explain"].setFloating(True)
    qtbot.waitUntil(lambda: panel.text.toPlainText() != "")
    assert "memory-bound" in panel.text.toPlainText()


def test_explain_panel_follows_the_state(window, qtbot):
    from explorer.core.words.explain import compare_devices

    panel, state = window.explain_panel, window.state
    window.docks["explain"].raise_()
    qtbot.waitUntil(lambda: "memory-bound" in panel.text.toPlainText())
    # The hint lives in the tooltip, not appended to every explanation.
    assert "Tick a CPU and a GPU" not in panel.text.toPlainText() and "tick a CPU" in panel.text.toolTip()
    state.set_devices(["h100-sxm", "xeon-platinum-8480"])
    e = compare_devices(state.model, state.params, state.device("xeon-platinum-8480"), state.primary)
    assert e.text in panel.text.toPlainText()
    panel.show_topic("hbm")
    assert "3.35 TB/s" in panel.why.toPlainText()


def test_op_table_leads_with_share_time_and_bound_and_names_groups(window):
    model = window.workload_panel.table_model
    headers = [model.headerData(i, QtCore.Qt.Orientation.Horizontal) for i in range(model.columnCount())]
    assert headers[:4] == ["op", "share", "time each", "bound"] and headers[-1] == "group"
    row = model.row_of("q_proj")
    assert model.data(model.index(row, headers.index("group"))) == "projection"  # not "q_proj" again
    assert model.data(model.index(row, headers.index("share"))) == "7.1%"


def test_the_op_table_is_fitted_to_its_texts_as_qt_fits_it(window):
    """The columns are sized from their texts (Qt's own fitting asks the model a dozen
    times a cell): the widths are Qt's, for every model, theme and in presentation mode."""
    from explorer.ui.panels.op_table import fit_columns

    panel = window.workload_panel
    table, model = panel.table, panel.table_model
    try:
        for theme, presenting, ident in (("light", False, "llama-3-8b"), ("dark", False, "resnet-50"),
                                         ("contrast", True, "gpt2"), ("light", True, "llama-3-70b")):
            window.set_theme(theme, remember=False)
            if presenting and not window.presentation.active:
                window.presentation.enter(full_screen=False)
            elif not presenting and window.presentation.active:
                window.presentation.leave()
            window.state.set_model(ident)
            fit_columns(table, model)
            ours = [table.columnWidth(c) for c in range(model.columnCount())]
            table.resizeColumnsToContents()
            qt = [table.columnWidth(c) for c in range(model.columnCount())]
            assert ours == qt, (theme, presenting, ident)
            assert min(ours) > 20
    finally:
        if window.presentation.active:
            window.presentation.leave()
        window.set_theme("light", remember=False)


def test_calibrate_in_the_kernel_lab_writes_a_profile_and_uses_it(window, qtbot, monkeypatch):
    """This CPU taken for the catalogue's EPYC 9654: the calibration applies to it, Times
    switch to calibrated (one undo step) and the status line names the calibration; its run
    is kept like any other."""
    from dataclasses import replace

    from explorer import runs
    from explorer.core.hardware.efficiency import calibrated
    from explorer.kernels import calibrate, runner

    def products_small(backend, suites, preset, **options):
        """The quick run, its products at the smoke sizes (seconds): the triad still
        streams from main memory, which a calibration needs."""
        products = yield from runner.run(backend, [calibrate.SUITE], "smoke", **options)
        stream = yield from runner.run(backend, ["stream"], preset, **options, load=None)
        return replace(stream, suites=tuple(suites), points=products.points + stream.points)

    monkeypatch.setattr(calibrate, "_match_cpu", lambda name, catalog: catalog["epyc-9654"])
    monkeypatch.setattr(runs, "run", products_small)
    # Products at smoke sizes on a shared machine are no quiet calibration: the held-out check
    # (tests of its own) is opened wide, so that this tests the way a profile goes and is used.
    monkeypatch.setattr(calibrate, "HELD_OUT_MEDIAN", 10.0)
    monkeypatch.setattr(calibrate, "HELD_OUT_EACH", 100.0)

    window.state.set_devices(["epyc-9654"])
    panel = window.kernel_panel
    panel.preset.setCurrentText("smoke")
    assert not panel.calibrate_button.isEnabled() and "smoke" in panel.calibrate_button.toolTip()
    panel.preset.setCurrentText("quick")
    assert panel.calibrate_button.isEnabled()
    with qtbot.waitSignal(window.runs.sig_finished, timeout=60000,
                          check_params_cb=lambda job, _r: job == "kernels") as finished:
        panel.calibrate_button.click()
    done = finished.args[1]
    assert done.profile is not None and done.path.exists()
    assert [p.id for p in calibrated()[0]] == [done.profile.id]
    assert window.state.session.params.efficiency == "calibrated"
    assert "Calibrated:" in panel.eta.text() and panel.run_button.isEnabled()
    assert "with calibrated efficiency" in window.summary_label.text()
    qtbot.waitUntil(lambda: len(window.state.session.results) == 1)
    window.state.undo()
    assert window.state.session.params.efficiency == "published"


def test_the_threads_row_is_there_for_a_cpu_and_changes_its_roofs(window):
    """Threads mean something on a CPU only: the row appears when a CPU is the primary
    device, and a count below its cores gives the chart's device (and the analysis) the
    roofs of those cores."""
    panel, state = window.workload_panel, window.state
    form = panel._form
    state.set_devices(["h100-sxm"])
    assert not form.isRowVisible(panel.editors["threads"])
    state.set_devices(["h100-sxm", "apple-m4-max-cpu"])  # a GPU primary beside a CPU: the CPU's threads
    assert form.isRowVisible(panel.editors["threads"])
    state.set_devices(["apple-m4-max-cpu"])
    assert form.isRowVisible(panel.editors["threads"])
    full = state.primary.peak_flops("fp32", "vector")
    panel.editors["threads"].setValue(8)
    assert state.params.threads == 8
    assert state.primary.specs.cores == 8 and state.analysis().hardware == state.primary
    assert state.primary.peak_flops("fp32", "vector") == pytest.approx(full * 8 * 4 * 4 * 2 * 4.51 / 1916.8)


def test_a_count_whose_zero_means_something_says_so(window):
    """Threads 0 is every core, a micro-batch of 0 is chosen for the step: the boxes show the
    words, not a bare 0, and still hold 0."""
    panel, state = window.workload_panel, window.state
    state.set_devices(["apple-m4-max-cpu"])
    box = panel.editors["threads"]
    assert state.params.threads == 0 and box.text() == "every core"
    assert panel.editors["micro_batch"].specialValueText() == "auto"
    assert panel.editors["batch"].specialValueText() == ""  # a batch of its minimum, 1, is a number


def test_the_notes_say_what_the_reader_said_of_the_profile_shown(window):
    """A profile's notes (its reader's: a counter missing, a time read another way) are in
    the workload panel's notes, as `profile` prints them."""
    from pathlib import Path

    path = (Path(__file__).resolve().parents[1] / "data" / "third_party" / "ncu" / "ml-operator-parameters"
            / "bert_flashattn_nsight.csv")
    assert window.import_profile(path)
    notes, whole = window.workload_panel.notes.text(), window.workload_panel.notes.toolTip()
    assert ("Profile: 10 kernel(s) timed as sm__cycles_elapsed.avg ÷ sm__cycles_elapsed.avg.per_second; "
            "6 kernel(s) ran tensor-core instructions with no tensor operation counter") in notes
    assert "NERSC" not in notes
    assert "roofline method): the export has no gpu__time_duration.sum" in whole
    assert "sm__ops_path_tensor_src_bf16_dst_fp32.sum" in whole
