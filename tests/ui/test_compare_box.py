"""The Workload panel's *Compare with* box lists the models read from files, the Hugging Face
cache's hf- ids and the GGUF files' gguf- ids, from the menu's background read; a session
comparing with a listed model shows it chosen before any read."""

import json

import pytest

from explorer.core.model.gguf_models import FOLDERS_VARIABLE
from explorer.core.model.session import Session
from explorer.state import AppState
from explorer.ui.cached_models_menu import read_listing
from explorer.ui.panels.workload_panel import WorkloadPanel
from tests.core.test_hf_config import MISTRAL_7B
from tests.test_listed_gguf import make_stores


@pytest.fixture(autouse=True)
def own_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "no-home"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.delenv("OLLAMA_MODELS", raising=False)
    monkeypatch.delenv(FOLDERS_VARIABLE, raising=False)


def _items(box):
    return [(box.itemText(i), box.itemData(i)) for i in range(box.count())]


def test_a_session_comparing_with_a_listed_model_shows_it_chosen(qtbot, catalog, models):
    """``compare: hf-mixtral-8x7b`` (a shipped config): chosen under the compared step's name,
    before any read of the cache."""
    state = AppState(catalog, models, Session(compare="hf-mixtral-8x7b"))
    panel = WorkloadPanel(state)
    qtbot.addWidget(panel)
    panel.refresh()
    box = panel.compare_box
    assert (box.currentText(), box.currentData()) == ("mixtral-8x7b", "hf-mixtral-8x7b")
    assert _items(box)[: 1 + len(models)] == [("none", ""), *((s.name, i) for i, s in models.items())]


def test_the_read_s_models_join_the_box_and_one_is_compared(qtbot, tmp_path, monkeypatch, catalog, models):
    stores = make_stores(tmp_path, monkeypatch)
    snapshot = tmp_path / "hub" / "models--x--a" / "snapshots" / "r1"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text(json.dumps(MISTRAL_7B))
    state = AppState(catalog, models, Session(hardware=("h100-sxm",)))
    panel = WorkloadPanel(state)
    qtbot.addWidget(panel)
    panel.refresh()
    box = panel.compare_box
    listing = read_listing(tmp_path / "hub", list(models))
    box.show_listed(listing)
    box.show_listed(listing)  # a second read adds nothing twice
    assert _items(box)[1 + len(models):] == [
        ("x/a", "hf-x-a"), ("TheBloke/Tiny-GGUF/tiny.Q8_0 (GGUF)", "gguf-tiny-q8-0"),
        ("tinyllama:1.1b (GGUF)", "gguf-tinyllama-1-1b")]
    assert state.session.compare == ""  # listing chooses nothing
    box.setCurrentIndex(box.findData("gguf-tinyllama-1-1b"))
    assert state.session.compare == "gguf-tinyllama-1-1b"
    compared = state.compared()
    assert compared is not None and compared.name == "LLaMA v2"
    assert compared.analysis is not None and compared.analysis.totals.weight_bytes == 1_026_144
    assert stores["studio"].is_dir()


def test_the_window_wires_the_box_to_the_menu_s_read(qtbot, window, tmp_path):
    """Opening the box starts the menu's read; its models fill the box."""
    snapshot = tmp_path / "hub" / "models--x--a" / "snapshots" / "r1"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text(json.dumps(MISTRAL_7B))
    box = window.workload_panel.compare_box
    assert box.findData("hf-x-a") < 0
    with qtbot.waitSignal(window.cached_models.sig_listed, timeout=60_000):  # (nothing else reads)
        box.sig_opening.emit()
    assert box.itemText(box.findData("hf-x-a")) == "x/a"


def test_a_gguf_file_dropped_on_the_window_opens(window, qtbot):
    """Dropped, a GGUF file is the window's model (held by reference), and the model box
    names it as a GGUF file's."""
    from explorer.core.model.hf_config import CONFIG_MODEL
    from tests.test_listed_gguf import TINY
    from tests.ui.drops import drop_file

    drop_file(window, TINY)
    qtbot.waitUntil(lambda: window.state.session.model == CONFIG_MODEL, timeout=30_000)
    assert json.loads(window.state.session.model_config)["gguf_file"] == str(TINY.resolve())
    assert window.workload_panel.model_box.currentText() == "LLaMA v2 (GGUF file)"
    assert window.state.analysis().totals.weight_bytes == 1_026_144
