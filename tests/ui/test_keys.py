"""Undo and Redo from the keyboard: each action's keys without duplicates on every
platform's standard bindings, and on a real X server (Xvfb, Qt's xcb platform, keys
pressed through XTest) Ctrl+Z, Ctrl+Shift+Z and Ctrl+Y move a scene back and forth."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6 import QtGui

from explorer.ui.keys import redo_keys, unique_keys

ROOT = Path(__file__).resolve().parents[2]
# StandardKey.Redo on each platform, as Qt's QKeySequence documentation tables them.
STANDARD_REDO = {"xcb (KDE, GNOME)": ("linux", ["Ctrl+Shift+Z"]),
                 "Windows": ("win32", ["Ctrl+Y", "Ctrl+Shift+Z"]),
                 "macOS": ("darwin", ["Ctrl+Shift+Z"]),  # (Ctrl is Cmd there)
                 "offscreen": ("linux", [])}


def texts(keys: list[QtGui.QKeySequence]) -> list[str]:
    return [k.toString(QtGui.QKeySequence.SequenceFormat.PortableText) for k in keys]


@pytest.mark.parametrize("name", STANDARD_REDO)
def test_redo_has_each_key_once_on_every_platform(qapp, name):
    platform, standard = STANDARD_REDO[name]
    keys = texts(redo_keys(standard, platform))
    assert len(keys) == len(set(keys)), keys
    assert "Ctrl+Shift+Z" in keys
    assert ("Ctrl+Y" in keys) == (platform != "darwin")


def test_unique_keys_keeps_the_first_of_each_and_drops_empty_ones(qapp):
    assert texts(unique_keys(["Ctrl+Y", "", "Ctrl+Shift+Z", QtGui.QKeySequence("Ctrl+Y")])) == \
        ["Ctrl+Y", "Ctrl+Shift+Z"]


def test_no_action_of_the_window_repeats_a_key_or_shares_one(window):
    owner: dict[str, str] = {}
    for action in window.findChildren(QtGui.QAction):
        keys = texts(action.shortcuts())
        assert len(keys) == len(set(keys)), (action.text(), keys)
        for key in keys:
            assert owner.setdefault(key, action.text()) == action.text(), \
                f"{key} is {owner[key]!r}'s and {action.text()!r}'s"


@pytest.mark.slow
def test_undo_and_redo_keys_move_a_scene_on_a_real_x_server(tmp_path):
    from tests.x11_server import x11_missing

    why = x11_missing()
    if why is not None:
        pytest.skip(why)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import drag_x11
    finally:
        sys.path.pop(0)
    server, display = drag_x11.start_server()
    try:
        env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb",
               "ROOFLINE_EXPLORER_DATA": str(tmp_path / "data"), "PYTHONPATH": str(ROOT)}
        app = [sys.executable, str(ROOT / "tests" / "x11_keys_app.py"), str(tmp_path / "s.ini")]
        out = subprocess.run(app, capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)
    finally:
        server.terminate()
        server.wait(10)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    assert "Ambiguous shortcut" not in out.stderr, out.stderr[-2000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    steps = [(s["key"], s["step"], s["batch"]) for s in result["seen"]]
    # decode-batching: step 2 is batch 8, step 3 batch 64 (each step one undo step)
    assert steps == [(None, 3, 64), ("Ctrl+Z", 2, 8), ("Ctrl+Shift+Z", 3, 64), ("Ctrl+Z", 2, 8),
                     ("Ctrl+Y", 3, 64)], steps
