"""File › Models on this machine reads the Hugging Face cache in the background, once, and
again only when the cache folder changes; it says it is reading until then, and says when
a cache too big to list whole was cut."""

import json
import os
import threading

from PySide6 import QtWidgets

from explorer.core.model import hf_cache
from explorer.runs import Jobs
from explorer.ui.cached_models_menu import JOB, READING, CachedModelsMenu
from tests.core.test_hf_config import MISTRAL_7B


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
