"""Recent files and crash recovery, without Qt: when the autosaver saves, which instances
count as crashed, what a restore or a refusal keeps."""

import os
import subprocess
import sys

import pytest

from explorer.core.files.processes import running
from explorer.core.model.session import Session, load_session
from explorer.document.files import Autosaver, RecentFiles, Recovery


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_continuous_editing_is_saved_at_least_every_max_interval():
    """An edit every 0.5 s for a minute: with a tick each second, no stretch of edits goes
    unsaved for more than the bound (the old debounce never saved at all)."""
    clock, saves = Clock(), []
    saver = Autosaver(lambda: saves.append(clock.now), debounce_s=1.0, max_interval_s=4.0, clock=clock)
    unsaved_since = None
    worst = 0.0
    for step in range(120):
        clock.now = step * 0.5
        saver.changed()
        unsaved_since = clock.now if unsaved_since is None else unsaved_since
        if step % 2 == 0 and saver.tick():
            worst = max(worst, clock.now - unsaved_since)
            unsaved_since = None
    assert len(saves) >= 11 and worst <= 5.0


def test_a_pause_saves_after_the_debounce_and_nothing_without_changes():
    clock, saves = Clock(), []
    saver = Autosaver(lambda: saves.append(clock.now), debounce_s=1.0, clock=clock)
    assert not saver.tick()
    saver.changed()
    clock.now = 0.5
    assert not saver.tick()
    clock.now = 1.0
    assert saver.tick() and saves == [1.0] and not saver.dirty


def test_a_failed_save_stays_due():
    saver = Autosaver(lambda: (_ for _ in ()).throw(OSError(28, "No space left on device")), debounce_s=0)
    saver.changed()
    with pytest.raises(OSError):
        saver.tick()
    assert saver.dirty


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_a_running_instance_is_never_taken_for_a_crashed_one(tmp_path):
    first, second = Recovery(tmp_path), Recovery(tmp_path)
    for instance in (first, second):
        instance.claim()
        instance.save(Session(model="gpt2"))
    assert first.crashed() == [] and second.crashed() == []  # both are this process: alive
    assert running(os.getpid(), None) and not running(dead_pid(), None)


def test_a_crashed_instance_is_offered_and_restored_or_declined(tmp_path):
    crashed = Recovery(tmp_path)
    crashed.claim()
    crashed.save(Session(model="gpt2"))
    crashed.lock_path.write_text(f'{{"pid": {dead_pid()}, "start": null}}')  # its process is gone
    me = Recovery(tmp_path)
    me.claim()
    (found,) = me.crashed()
    assert found.instance == crashed.instance and load_session(found.autosave).model == "gpt2"
    me.declined(found)
    assert me.crashed() == [] and (tmp_path / f"declined-{crashed.instance}.yaml").exists()
    me.release()  # a clean exit drops the declined session and this instance's files
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_an_autosave_whose_lock_is_gone_or_garbled_counts_as_crashed(tmp_path):
    (tmp_path / "orphan.yaml").write_text("schema: 1\nhardware: [t4]\nworkload: {model: gpt2}\n")
    (tmp_path / "garbled.yaml").write_text("schema: 1\nhardware: [t4]\nworkload: {model: gpt2}\n")
    (tmp_path / "garbled.lock").write_text("{not json")
    assert sorted(c.instance for c in Recovery(tmp_path).crashed()) == ["garbled", "orphan"]


def test_recent_files(tmp_path):
    recent = RecentFiles(tmp_path / "recent.json", limit=3)
    assert recent.list() == []
    for name in ("a", "b", "c", "a", "d"):
        recent.remember(tmp_path / name)
    assert recent.list() == [str(tmp_path / n) for n in ("d", "a", "c")]
    (tmp_path / "recent.json").write_text('{"not": "a list"}')
    assert recent.list() == []


def _crashed_instance(folder) -> Recovery:
    crashed = Recovery(folder)
    crashed.claim()
    crashed.save(Session(model="gpt2"))
    crashed.lock_path.write_text(f'{{"pid": {dead_pid()}, "start": null}}')
    return crashed


def test_a_restore_whose_save_fails_keeps_the_crashed_copy_until_a_save_works(tmp_path, monkeypatch):
    crashed = _crashed_instance(tmp_path)
    me = Recovery(tmp_path)
    me.claim()
    (found,) = me.crashed()
    real_save = Session.save
    monkeypatch.setattr(Session, "save", lambda self, path: (_ for _ in ()).throw(
        OSError(28, "No space left on device")))
    assert me.restored(found, Session(model="gpt2")) == "No space left on device"
    assert crashed.autosave_path.exists() and me.crashed() == []  # kept, not offered to itself
    moving_to_a_file = tmp_path / "not-a-folder"
    moving_to_a_file.write_text("")
    monkeypatch.setattr(Session, "save", real_save)
    with pytest.raises(OSError):
        me.moved_to(moving_to_a_file, Session(model="gpt2"))
    assert crashed.autosave_path.exists()  # the new folder failed: nothing released here
    me.save(Session(model="gpt2"))  # the first autosave that works holds it now
    assert not crashed.autosave_path.exists() and me.autosave_path.exists()


def test_moving_recovery_to_another_folder_holds_the_session_there_first(tmp_path):
    crashed = _crashed_instance(tmp_path / "old")
    me = Recovery(tmp_path / "old")
    me.claim()
    (found,) = me.crashed()
    me._adopted.append(found)  # restored, its own save not yet done
    moved = me.moved_to(tmp_path / "new", Session(model="llama-3-8b"))
    assert load_session(moved.autosave_path).model == "llama-3-8b"
    assert not crashed.autosave_path.exists() and not me.lock_path.exists()
