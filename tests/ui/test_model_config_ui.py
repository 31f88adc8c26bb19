"""A Hugging Face config.json in the window: File › Open model config…, or dropped on the
window; the model box names it, the expert-weights choice applies to mixtures of experts,
and one undo step takes it back."""

import json

import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from explorer.core.model.hf_config import CONFIG_MODEL
from tests.core.test_hf_config import MIXTRAL_8X7B
from tests.ui.drops import drop_file


def test_opening_a_config_shows_its_model_and_undo_takes_it_back(window, mixtral):
    panel, state = window.workload_panel, window.state
    before = state.session.model
    assert not panel.routing.isVisibleTo(panel)  # a dense preset: no expert choice shown
    assert window.open_model_config(mixtral)
    assert state.session.model == CONFIG_MODEL and state.model.name == "Mixtral-8x7B-v0.1"
    assert panel.model_box.currentText() == "Mixtral-8x7B-v0.1 (config.json)"
    assert panel.routing.isVisibleTo(panel)
    assert "46.7 B parameters, 12.9 B active per token" in panel.totals.text()
    panel.routing.setCurrentText("all")
    assert state.params.routing == "all"
    state.undo_stack.undo()
    state.undo_stack.undo()
    assert state.session.model == before
    assert panel.model_box.findData(CONFIG_MODEL) == -1  # gone with the config


def test_a_broken_config_says_why_and_changes_nothing(window, tmp_path, monkeypatch):
    shown = []
    monkeypatch.setattr(QtWidgets.QMessageBox, "critical", lambda *args: shown.append(args[2]))
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**MIXTRAL_8X7B, "architectures": ["BertModel"]}))
    session = window.state.session
    assert not window.open_model_config(path)
    assert window.state.session is session
    assert shown and f"{path}: field 'architectures': 'BertModel' is not a family this app reads" in shown[0]


def test_a_config_dropped_on_the_window_opens(window, mixtral, qtbot):
    drop_file(window, mixtral)
    point = QtCore.QPointF(window.width() / 2, window.height() / 2)
    actions = QtCore.Qt.DropAction.CopyAction
    qtbot.waitUntil(lambda: window.state.session.model == CONFIG_MODEL, timeout=2000)
    text = QtCore.QMimeData()
    text.setText("not a file")
    refused = QtGui.QDragEnterEvent(point.toPoint(), actions, text, QtCore.Qt.MouseButton.LeftButton,
                                    QtCore.Qt.KeyboardModifier.NoModifier)
    window.dragEnterEvent(refused)
    assert not refused.isAccepted()


def test_rows_that_do_not_apply_are_hidden(window):
    panel, state = window.workload_panel, window.state
    assert not panel.causal.isVisibleTo(panel) and not panel.weight_group.isVisibleTo(panel)
    state.set_params(phase="prefill")
    assert panel.causal.isVisibleTo(panel)
    panel.causal.setChecked(True)
    assert state.params.causal
    state.set_params(weight_dtype="int4")
    assert panel.weight_group.isVisibleTo(panel) and panel.weight_scale.isVisibleTo(panel)
    panel.weight_group.setValue(64)
    assert state.params.weight_group == 64 and state.params.weight_bytes == pytest.approx((4 + 16 / 64) / 8)
    state.set_params(weight_dtype="nvfp4")
    assert not panel.weight_group.isVisibleTo(panel)  # its blocks are fixed


def test_the_window_opens_on_a_config_from_the_command_line(mixtral, qtbot, settings):
    from explorer.ui.application import build_window
    from tests.ui.conftest import window_args

    window = build_window(window_args(model_config=str(mixtral), size=(1024, 768)), settings)
    qtbot.addWidget(window)
    assert window.state.session.model == CONFIG_MODEL and window.state.model.name == "Mixtral-8x7B-v0.1"
    window.runs.shutdown()


def test_models_on_this_machine_open_from_the_file_menu(window, tmp_path, qtbot, monkeypatch):
    import json

    from explorer.ui.cached_models_menu import JOB
    from tests.core.test_hf_config import QWEN3_8B

    snapshot = tmp_path / "models--Qwen--Qwen3-8B" / "snapshots" / "r1"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text(json.dumps(QWEN3_8B))
    broken = tmp_path / "models--x--broken" / "snapshots" / "r1"
    broken.mkdir(parents=True)
    (broken / "config.json").write_text("{")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    with qtbot.waitSignal(window.runs.sig_finished, check_params_cb=lambda job, _r: job == JOB):
        window.cached_menu.aboutToShow.emit()  # read in the background
    actions = {a.text(): a for a in window.cached_menu.actions()}
    assert not actions["x/broken (cannot be read)"].isEnabled()
    assert "not valid JSON" in actions["x/broken (cannot be read)"].toolTip()
    assert actions["Qwen/Qwen3-8B"].toolTip() == f"--model hf-qwen-qwen3-8b ({snapshot / 'config.json'})"
    actions["Qwen/Qwen3-8B"].trigger()
    assert window.state.model.name == "Qwen3-8B"
    assert window.state.model.parameter_count() == 8_190_735_360


def test_an_opened_config_s_weights_take_the_precision_its_file_stores(window, tmp_path):
    from tests.core.test_hf_config import GEMMA2_9B

    path = tmp_path / "gemma-2" / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps({**GEMMA2_9B, "torch_dtype": "float32"}))
    assert window.state.params.weight_dtype is None
    assert window.open_model_config(path)
    assert window.state.params.weight_dtype == "fp32"  # as the file stores them: one undo step
    window.state.undo()
    assert window.state.params.weight_dtype is None and window.state.session.model != CONFIG_MODEL


def test_the_file_s_precision_leaves_with_the_file_and_training_clears_it(window, tmp_path):
    from tests.core.test_hf_config import GEMMA2_9B

    path = tmp_path / "gemma-2" / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps({**GEMMA2_9B, "torch_dtype": "float32"}))
    state = window.state
    assert window.open_model_config(path) and state.params.weight_dtype == "fp32"
    state.set_model("llama-3-8b")  # a preset: its weights in the compute precision again
    assert state.params.weight_dtype is None
    state.set_model(CONFIG_MODEL)  # the file again: as it stores them
    assert state.params.weight_dtype == "fp32"
    state.set_params(phase="train")  # training keeps one precision: accepted, the file's set aside
    assert (state.params.phase, state.params.weight_dtype) == ("train", None)
