"""File › Models on this machine reads the Hugging Face cache and the GGUF files of LM Studio
and Ollama in the background, once, and again only when one of their folders changes; it
says it is reading until then, and says when a cache too big to list whole was cut."""

import json
import os
import threading

import pytest
from PySide6 import QtWidgets

from explorer.core.model import hf_cache
from explorer.core.model.gguf_models import FOLDERS_VARIABLE
from explorer.runs import Jobs
from explorer.ui.cached_models_menu import JOB, READING, CachedModelsMenu
from tests.core.test_hf_config import MISTRAL_7B
from tests.test_listed_gguf import make_stores


def _repository(root, name, config=MISTRAL_7B):
    snapshot = root / f"models--x--{name}" / "snapshots" / "r1"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text(json.dumps(config))


class _Scanner:
    """``hf_cache.scan`` that counts its calls and waits until it is let go."""

    def __init__(self) -> None:
        self.calls = 0
        self.go = threading.Event()

    def __call__(self, folder):
        self.calls += 1
        assert self.go.wait(10)
        return hf_cache.scan(folder)


def _menu(qtbot, tmp_path, scanner, opened=None, catalog=None):
    holder = QtWidgets.QWidget()
    qtbot.addWidget(holder)
    runs = Jobs(lambda: catalog, holder)  # (the catalogue is a kernel run's: none here)
    menu = QtWidgets.QMenu(holder)
    listed = CachedModelsMenu(menu, runs, ([] if opened is None else opened).append, taken=("mistral-7b",),
                              scanner=scanner, folder=lambda: tmp_path)
    return runs, menu, (holder, listed)  # (held: the widget owns the runner and the menu)


def _texts(menu):
    return [a.text() for a in menu.actions() if not a.isSeparator()]


def test_opening_the_menu_does_not_wait_for_the_cache(qtbot, tmp_path):
    _repository(tmp_path, "a")
    scanner = _Scanner()
    opened: list[object] = []
    runs, menu, _ = _menu(qtbot, tmp_path, scanner, opened)
    menu.aboutToShow.emit()  # the scan waits on the event: were it read here, this would not return
    assert _texts(menu) == [READING] and not menu.actions()[0].isEnabled()
    menu.aboutToShow.emit()  # opened again while it reads: the same read
    with qtbot.waitSignal(runs.sig_finished, check_params_cb=lambda job, _r: job == JOB):
        scanner.go.set()
    assert _texts(menu) == ["x/a"] and scanner.calls == 1
    assert menu.actions()[0].toolTip().startswith("--model hf-x-a (")
    menu.actions()[0].trigger()
    assert opened == [tmp_path / "models--x--a" / "snapshots" / "r1" / "config.json"]
    menu.aboutToShow.emit()  # the cache as it was: nothing read again
    assert _texts(menu) == ["x/a"] and scanner.calls == 1
    runs.shutdown()


def test_a_changed_cache_is_read_again(qtbot, tmp_path):
    _repository(tmp_path, "a")
    scanner = _Scanner()
    scanner.go.set()
    runs, menu, _ = _menu(qtbot, tmp_path, scanner)
    with qtbot.waitSignal(runs.sig_finished):
        menu.aboutToShow.emit()
    _repository(tmp_path, "b")  # a download adds a repository folder
    stat = tmp_path.stat()
    os.utime(tmp_path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # (a coarse clock)
    with qtbot.waitSignal(runs.sig_finished):
        menu.aboutToShow.emit()
        assert _texts(menu) == [READING]
    assert _texts(menu) == ["x/a", "x/b"] and scanner.calls == 2
    runs.shutdown()


def test_a_cut_list_says_so(qtbot, tmp_path, monkeypatch):
    for name in ("a", "b", "c"):
        _repository(tmp_path, name)
    monkeypatch.setattr(hf_cache, "MAX_REPOSITORIES", 2)
    scanner = _Scanner()
    scanner.go.set()
    runs, menu, _ = _menu(qtbot, tmp_path, scanner)
    with qtbot.waitSignal(runs.sig_finished):
        menu.aboutToShow.emit()
    assert _texts(menu) == ["x/a", "x/b", "1 more not listed (only the first 2 are read)"]
    assert menu.actions()[-1].toolTip() == (f"1 of the 3 repositories in {tmp_path} is not listed: only the "
                                            "first 2 in name order are read, so that listing stays quick")
    runs.shutdown()


def test_an_empty_cache_says_where_it_looked(qtbot, tmp_path):
    scanner = _Scanner()
    scanner.go.set()
    runs, menu, _ = _menu(qtbot, tmp_path / "absent", scanner)
    with qtbot.waitSignal(runs.sig_finished):
        menu.aboutToShow.emit()
    assert _texts(menu) == [f"(none in {tmp_path / 'absent'})"]
    runs.shutdown()


def test_the_window_opens_on_a_listed_id(tmp_path, monkeypatch):
    """``roofline-explorer window --model hf-…``: the model that config.json describes (a
    session holds the file's content), its weights as the file stores them."""
    from explorer.core.model.hf_config import CONFIG_MODEL
    from explorer.ui.application import build_state
    from tests.ui.conftest import window_args

    _repository(tmp_path, "stored-fp32", {**MISTRAL_7B, "torch_dtype": "float32"})
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    state, _ = build_state(window_args(model="hf-x-stored-fp32"))
    assert state.session.model == CONFIG_MODEL and state.model.name == "stored-fp32"
    assert state.model.parameter_count() == 7_241_732_096 and state.params.weight_dtype == "fp32"
    state, _ = build_state(window_args(model="hf-mixtral-8x7b"))  # a shipped config
    assert state.model.name == "mixtral-8x7b" and state.model.parameter_count() == 46_702_792_704


@pytest.fixture(autouse=True)
def no_gguf_files_of_the_machine(tmp_path, monkeypatch):
    """The machine's own LM Studio and Ollama folders are not listed here: a home of the test's."""
    monkeypatch.setenv("HOME", str(tmp_path / "no-home"))
    monkeypatch.delenv("OLLAMA_MODELS", raising=False)
    monkeypatch.delenv(FOLDERS_VARIABLE, raising=False)


def test_the_same_read_lists_the_gguf_files(qtbot, tmp_path, monkeypatch):
    """LM Studio's and Ollama's GGUF files follow the cache's models, each under its name and
    store, with its id and file; a broken one is shown disabled with its reason; the read's
    models go to sig_listed; a new Ollama model (its manifests folder changes) is read again."""
    stores = make_stores(tmp_path, monkeypatch)
    _repository(tmp_path / "hub", "a")
    scanner = _Scanner()
    scanner.go.set()
    opened: list[object] = []
    holder = QtWidgets.QWidget()
    qtbot.addWidget(holder)
    runs = Jobs(lambda: None, holder)
    menu = QtWidgets.QMenu(holder)
    listed = CachedModelsMenu(menu, runs, opened.append, taken=("mistral-7b",), scanner=scanner,
                              folder=lambda: tmp_path / "hub")
    with qtbot.waitSignal(listed.sig_listed, timeout=60_000) as signal:  # (gguf reads seconds a file)
        menu.aboutToShow.emit()
    assert _texts(menu) == ["x/a", "TheBloke/Tiny-GGUF/tiny.Q8_0 (LM Studio, GGUF)",
                            "tinyllama:1.1b (Ollama, GGUF)"]
    blob = stores["ollama"] / "blobs" / f"sha256-{stores['digest']}"
    gguf = next(a for a in menu.actions() if a.text().startswith("tinyllama"))
    assert gguf.toolTip() == f"--model gguf-tinyllama-1-1b ({blob})"
    gguf.trigger()
    assert opened == [blob]
    listing = signal.args[0]
    assert [(e.id, e.spec.parameter_count(), e.weight_bytes) for e in listing.ggufs] == [
        ("gguf-tiny-q8-0", 513_048, 1_026_144), ("gguf-tinyllama-1-1b", 513_048, 1_026_144)]
    menu.aboutToShow.emit()
    assert scanner.calls == 1  # nothing changed: nothing read
    manifests = stores["ollama"] / "manifests" / "registry.ollama.ai" / "library"
    (manifests / "broken").mkdir()
    (manifests / "broken" / "latest").write_text(json.dumps({"layers": [
        {"mediaType": "application/vnd.ollama.image.model", "digest": "sha256:" + "ab" * 32}]}))
    (stores["ollama"] / "blobs" / f"sha256-{'ab' * 32}").write_bytes(b"GGUF not really")
    # (a model of a new name adds a folder in library/, which moves library/'s time alone)
    os.utime(manifests, ns=(manifests.stat().st_atime_ns, manifests.stat().st_mtime_ns + 1_000_000_000))
    with qtbot.waitSignal(runs.sig_finished, timeout=60_000):
        menu.aboutToShow.emit()
    assert scanner.calls == 2
    broken = next(a for a in menu.actions() if a.text().startswith("broken:latest"))
    assert broken.text() == "broken:latest (Ollama, GGUF) (cannot be read)" and not broken.isEnabled()
    assert "not a GGUF file" in broken.toolTip()
    runs.shutdown()


def test_the_window_opens_on_a_gguf_file_or_id(tmp_path, monkeypatch):
    """``window --model-config FILE.gguf`` and ``window --model gguf-…``: the file's model,
    held by reference, its weights at their stored bytes."""
    from explorer.core.model.hf_config import CONFIG_MODEL
    from explorer.ui.application import build_state
    from tests.test_listed_gguf import TINY
    from tests.ui.conftest import window_args

    make_stores(tmp_path, monkeypatch)
    for args in (window_args(model_config=str(TINY)), window_args(model="gguf-tinyllama-1-1b")):
        state, _ = build_state(args)
        assert state.session.model == CONFIG_MODEL and state.model.name == "LLaMA v2"
        assert state.analysis().totals.weight_bytes == 1_026_144
