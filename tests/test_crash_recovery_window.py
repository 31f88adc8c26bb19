"""Crash and restart with the real window (tests/window_driver.py), each case asserting what
was kept: SIGKILL while the restore question is open, two instances at once, SIGKILL during
a kernel run. The Qt-free autosave bound (50 random kills) is tests/test_crash_recovery.py."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]


class App:
    """One window process; ``lines`` holds what it said so far."""

    def __init__(self, data: Path, **env: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.window_driver"], cwd=ROOT, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env={**os.environ, "ROOFLINE_EXPLORER_DATA": str(data), "QT_QPA_PLATFORM": "offscreen",
                 "XDG_CONFIG_HOME": str(data / "config"), **env})
        self.lines: list[list[str]] = []

    def wait_for(self, word: str, timeout: float = 60, count: int = 1) -> list[str]:
        """Read lines until the ``count``-th one starting with ``word``; returns it."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            seen = [line for line in self.lines if line[0] == word]
            if len(seen) >= count:
                return seen[count - 1]
            line = self.process.stdout.readline()
            if not line:
                raise AssertionError(f"the app ended before '{word}': {self.process.stderr.read()}")
            self.lines.append(line.split())
        raise AssertionError(f"no '{word}' within {timeout} s")

    def said(self, word: str) -> bool:
        return any(line[0] == word for line in self.lines)

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def finish(self) -> None:
        out, err = self.process.communicate(timeout=60)
        self.lines += [line.split() for line in out.splitlines()]
        assert self.process.returncode == 0, err
        assert "Traceback" not in err, err


def autosaves(data: Path) -> list[Path]:
    return sorted((data / "autosave").glob("[0-9]*.yaml"))


def autosaved_batch(path: Path) -> int:
    return yaml.safe_load(path.read_text())["workload"]["batch"]


def edited_and_killed(data: Path) -> int:
    """An instance that edits every 0.2 s is killed once it has autosaved; returns the batch
    its autosave holds."""
    editor = App(data, EDIT_EVERY="0.2")
    editor.wait_for("ready")
    deadline = time.monotonic() + 30
    while not autosaves(data) and time.monotonic() < deadline:
        time.sleep(0.1)
    editor.kill()
    [autosave] = autosaves(data)
    return autosaved_batch(autosave)


def test_a_kill_while_the_restore_question_is_open_keeps_the_crashed_session(tmp_path):
    saved = edited_and_killed(tmp_path)
    assert saved > 1
    [autosave] = autosaves(tmp_path)
    before = autosave.read_bytes()
    asking = App(tmp_path, ANSWER="wait")
    asking.wait_for("asked")
    time.sleep(3.0)  # longer than the autosave's debounce: the window's own timer has run
    asking.kill()
    assert autosave.read_bytes() == before  # nothing was touched before the answer
    restoring = App(tmp_path, ANSWER="yes", CLOSE_AFTER="0.5")
    restoring.finish()
    assert restoring.said("asked")
    assert int(restoring.wait_for("ready")[1]) == saved
    assert not autosave.exists() and autosaves(tmp_path) == []  # restored, then a clean exit


def test_two_instances_never_take_each_other_for_crashed(tmp_path):
    first = App(tmp_path, EDIT_EVERY="0.2")
    first.wait_for("ready")
    deadline = time.monotonic() + 30
    while not autosaves(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.1)
    second = App(tmp_path, ANSWER="yes", CLOSE_AFTER="0.5")
    second.finish()
    assert not second.said("asked")  # the first is running: nothing to restore
    assert int(second.wait_for("ready")[1]) == 1
    [autosave] = autosaves(tmp_path)  # the second's clean exit left the first's files alone
    assert autosave.with_suffix(".lock").exists()
    first.kill()
    saved = autosaved_batch(autosave)
    third = App(tmp_path, ANSWER="yes", CLOSE_AFTER="0.5")
    third.finish()
    assert third.said("asked") and int(third.wait_for("ready")[1]) == saved


def test_a_kill_during_a_kernel_run_keeps_the_points_measured(tmp_path):
    running = App(tmp_path, RUN_KERNELS="1")
    measured = int(running.wait_for("point", count=2)[1])
    running.kill()
    after = App(tmp_path, ANSWER="no", CLOSE_AFTER="0.5")
    after.finish()
    ready = after.wait_for("ready")
    assert int(ready[2]) == 1 and int(ready[3]) >= measured  # one results file, every point
    assert len(list((tmp_path / "results").glob("run-*-recovered.json"))) == 1
    assert not list((tmp_path / "results").glob(".run-*"))


def test_a_kill_right_after_a_restore_loses_nothing(tmp_path):
    """The restoring window's own autosave holds the session before the crashed one's goes:
    killed 0.3 s after restoring (before its first timed autosave), the next start still
    offers the same session."""
    saved = edited_and_killed(tmp_path)
    restoring = App(tmp_path, ANSWER="yes")
    assert int(restoring.wait_for("ready")[1]) == saved
    time.sleep(0.3)
    restoring.kill()
    [autosave] = autosaves(tmp_path)  # the restoring window's, fsynced before the swap
    assert autosaved_batch(autosave) == saved
    again = App(tmp_path, ANSWER="yes", CLOSE_AFTER="0.5")
    again.finish()
    assert again.said("asked") and int(again.wait_for("ready")[1]) == saved
    assert autosaves(tmp_path) == [] and not list((tmp_path / "autosave").glob("*.lock"))


def test_locks_and_temporaries_of_gone_instances_are_removed_at_start(tmp_path):
    """A crashed window's lock with no session beside it, and a save's temporary file whose
    writer was killed, go at the next start; a live writer's temporary and a crashed
    session's lock stay."""
    folder = tmp_path / "autosave"
    folder.mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    lone_lock = folder / f"{dead}-aaaaaa.lock"
    lone_lock.write_text(f'{{"pid": {dead}, "start": null}}')
    stale = folder / f".{dead}-aaaaaa.yaml.{dead}-0123abcd.tmp"
    stale.write_text("half")
    live = folder / f".x.yaml.{os.getpid()}-0123abcd.tmp"
    live.write_text("half")
    for path in (stale, live):
        os.utime(path, (time.time() - 600, time.time() - 600))
    app = App(tmp_path, ANSWER="no", CLOSE_AFTER="0.5")
    app.finish()
    assert not lone_lock.exists() and not stale.exists()
    assert live.exists()  # its writer (this test) still runs
