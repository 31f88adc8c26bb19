"""What a fault run found, one class per test: special files and oversized files wherever
the app reads (the one reader, ``core.reading``), the one writer keeping the user's file
(``core.atomic``: mode, symbolic links, temporaries of killed writes), a session's results
read beside it, and the entry points (commands, the recovery folder) refusing by name."""

import os
import re
import stat
import time
from pathlib import Path

import pytest

from explorer.core.files.atomic import STALE_AFTER_S, remove_stale, write_text_atomic
from explorer.core.files.datafile import DataFileError
from explorer.core.files.reading import MAX_FILE_BYTES, read_text
from explorer.core.files.userfiles import ids_in
from explorer.core.model.session import Session, load_session
from explorer.document import Document
from explorer.document.files import RecentFiles, Recovery
from tests.cli.test_cli import run
from tests.timeouts import no_block, no_hang


def fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


# -- the one reader ------------------------------------------------------------------------
def test_the_reader_refuses_special_files_by_name_without_waiting(tmp_path):
    cases = {fifo(tmp_path / "pipe.yaml"): "is a named pipe (FIFO), not a file",
             tmp_path / "folder.yaml": "is a folder",
             tmp_path / "zero.yaml": "is a character device"}
    (tmp_path / "folder.yaml").mkdir()
    (tmp_path / "zero.yaml").symlink_to("/dev/zero")
    for path, reason in cases.items():
        with no_block(), pytest.raises(DataFileError, match=re.escape(reason)) as caught:
            read_text(path)
        assert caught.value.file == str(path)


def test_the_reader_refuses_a_large_file_before_reading_it_and_non_utf8_text(tmp_path):
    big = tmp_path / "big.yaml"
    with open(big, "wb") as handle:
        handle.truncate(MAX_FILE_BYTES * 2)  # sparse: its size says it all
    with no_hang(1.0), pytest.raises(DataFileError, match=r"8\.0 MB or more; files over 4 MB"):
        read_text(big)
    latin = tmp_path / "latin.json"
    latin.write_bytes('{"name": "Caf\u00e9"}'.encode("latin-1"))
    with pytest.raises(DataFileError, match="is not UTF-8 text"):
        read_text(latin)


def test_a_refused_user_file_is_not_read_again_to_name_its_ids(tmp_path):
    """Naming what a broken device file meant to define reads it through the same reader:
    /dev/zero and an 8 MB file cost nothing (they once ran to a MemoryError and 14 s)."""
    zero = tmp_path / "zero.yaml"
    zero.symlink_to("/dev/zero")
    big = tmp_path / "big.yaml"
    big.write_text("devices:\n- id: big\n" + "#" * (8 << 20))
    with no_hang(1.0):
        assert ids_in(zero, "devices") == ("zero",)
        assert ids_in(big, "devices") == ("big",)


# -- the one writer ------------------------------------------------------------------------
def test_saving_keeps_the_replaced_file_s_mode(tmp_path):
    path = tmp_path / "private.yaml"
    Session(model="gpt2").save(path)
    path.chmod(0o600)
    Session(model="llama-3-8b").save(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_session(path).model == "llama-3-8b"


def test_saving_through_a_symbolic_link_writes_its_target_and_keeps_the_link(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "session.yaml"
    Session(model="gpt2").save(target)
    link = tmp_path / "link.yaml"
    link.symlink_to(target)
    Session(model="llama-3-8b").save(link)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert load_session(target).model == "llama-3-8b"
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["session.yaml"]  # no temporaries
    dangling = tmp_path / "new.yaml"
    dangling.symlink_to(tmp_path / "real" / "new-target.yaml")
    write_text_atomic(dangling, "x")
    assert dangling.is_symlink() and (tmp_path / "real" / "new-target.yaml").read_text() == "x"
    loop = tmp_path / "loop.yaml"
    loop.symlink_to(loop)
    with pytest.raises(OSError, match="Too many levels of symbolic links"):
        write_text_atomic(loop, "x")
    assert loop.is_symlink()


def test_temporaries_of_killed_writes_go_and_live_ones_stay(tmp_path):
    dead = _dead_pid()
    old = time.time() - STALE_AFTER_S - 5
    killed = tmp_path / f".session.yaml.{dead}-0123abcd.tmp"
    young = tmp_path / f".other.yaml.{dead}-0123abce.tmp"
    alive = tmp_path / f".session.yaml.{os.getpid()}-0123abcf.tmp"
    mine = tmp_path / f".session.yaml.{dead}-notmine.tmp"  # not a name this writer makes
    for path in (killed, young, alive, mine):
        path.write_text("half")
    for path in (killed, alive, mine):
        os.utime(path, (old, old))
    write_text_atomic(tmp_path / "session.yaml", "whole")  # the first write into a folder tidies it
    assert not killed.exists() and young.exists() and alive.exists() and mine.exists()
    os.utime(young, (old, old))
    assert remove_stale(tmp_path) == [young]


def _dead_pid() -> int:
    import subprocess
    import sys
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


# -- a session's results -------------------------------------------------------------------
def test_a_session_s_results_are_read_from_its_own_folder(tmp_path, monkeypatch, catalog, models):
    from tests.fuzz.test_loaders import _results_text
    folder = tmp_path / "lecture"
    folder.mkdir()
    (folder / "runs").mkdir()
    (folder / "runs" / "r.json").write_text(_results_text(tmp_path))
    session = Session(model="gpt2", results=(str(folder / "runs" / "r.json"),))
    session.save(folder / "s.yaml")
    assert "- runs/r.json" in (folder / "s.yaml").read_text()  # the folder can move as a whole
    moved = tmp_path / "moved"
    (folder).rename(moved)
    monkeypatch.chdir(tmp_path)  # anywhere but the session's folder
    loaded = load_session(moved / "s.yaml")
    assert loaded.results == (str(moved / "runs" / "r.json"),)
    doc = Document(catalog, models)
    assert doc.open_session(moved / "s.yaml") == [] and len(doc.results()) == 1


def test_a_session_s_results_are_regular_json_files_only(tmp_path, catalog, models):
    fifo(tmp_path / "pipe.json")
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    (tmp_path / "s.yaml").write_text("schema: 1\nhardware: [h100-sxm]\nworkload: {model: gpt2}\n"
                                     "results: [pipe.json, zero.json, /etc/hostname]\n")
    doc = Document(catalog, models)
    with no_block():
        skipped = doc.open_session(tmp_path / "s.yaml")
    reasons = [s.describe() for s in skipped]
    assert reasons == ["pipe.json: is a named pipe (FIFO), not a file: only regular files are read",
                       "zero.json: is a character device, not a file: only regular files are read",
                       "hostname: is not a results file: a session shows measurement files (.json) only"]


# -- entry points --------------------------------------------------------------------------
def test_commands_refuse_special_files_by_name(tmp_path):
    pipe = fifo(tmp_path / "config.json")
    with no_block():
        code, _, err = run("analyze", "--hardware", "h100-sxm", "--model-config", str(pipe))
    assert code != 0 and f"{pipe}: is a named pipe" in err and "Traceback" not in err
    session = fifo(tmp_path / "s.yaml")
    with no_block():
        code, _, err = run("export", "--session", str(session), "--out", str(tmp_path / "x.svg"))
    assert code != 0 and f"{session}: is a named pipe" in err and "Traceback" not in err


def test_a_fifo_in_the_user_s_hardware_folder_is_skipped_and_named(tmp_path, monkeypatch):
    monkeypatch.setenv("ROOFLINE_EXPLORER_DATA", str(tmp_path))
    (tmp_path / "hardware").mkdir()
    fifo(tmp_path / "hardware" / "mine.yaml")
    with no_block():
        code, out, err = run("analyze", "--hardware", "h100-sxm", "--model", "gpt2")
    assert code == 0 and "H100" in out
    assert "1 of your devices could not be loaded: mine.yaml: is a named pipe" in err


def test_the_recovery_folder_s_special_files_never_block(tmp_path):
    folder = tmp_path / "autosave"
    folder.mkdir()
    fifo(folder / "123-abcdef.yaml")
    fifo(folder / "123-abcdef.lock")
    fifo(tmp_path / "recent.json")
    me = Recovery(folder)
    with no_block():
        me.claim()
        [crashed] = me.crashed()  # an unreadable lock names no running instance
        with pytest.raises(DataFileError, match="is a named pipe"):
            load_session(crashed.autosave)
        assert RecentFiles(tmp_path / "recent.json").list() == []
        me.tidy()
    me.release()


def test_a_screenshot_size_is_bounded_by_pixels(capsys):
    from explorer.commands.window_options import parse
    for too_large in ("16384x16384", "8192x8192", "9000x200"):
        with pytest.raises(SystemExit):
            parse(["--screenshot", "x.png", "--size", too_large])
        assert "is too large: at most 8192 pixels a side and 33.2 million pixels" in capsys.readouterr().err
    assert parse(["--screenshot", "x.png", "--size", "7680x4320"]).size == (7680, 4320)


def test_moving_a_broken_file_aside_never_replaces_an_earlier_copy(tmp_path):
    from explorer.ui.notice_bar import move_aside
    path = tmp_path / "mine.yaml"
    moved = []
    for text in ("first", "second"):  # the same second: the same stamp
        path.write_text(text)
        moved.append(move_aside(path))
    assert [p.read_text() for p in moved] == ["first", "second"] and len(set(moved)) == 2


def test_a_results_file_with_an_integer_json_cannot_convert_is_skipped_and_named(tmp_path, catalog, models):
    from explorer.kernels.results import load_results
    path = tmp_path / "r.json"
    path.write_text('{"schema": 2, "n": ' + "9" * 5000 + "}")
    with pytest.raises(DataFileError, match="is not valid JSON: Exceeds the limit") as caught:
        load_results(path)
    assert caught.value.file == str(path)
    (tmp_path / "s.yaml").write_text("schema: 1\nhardware: [h100-sxm]\nworkload: {model: gpt2}\n"
                                     "results: [r.json]\n")
    [skipped] = Document(catalog, models).open_session(tmp_path / "s.yaml")
    assert skipped.describe().startswith("r.json: is not valid JSON: Exceeds the limit (4300 digits)")


def test_a_read_only_file_is_refused_not_replaced(tmp_path, monkeypatch):
    path = tmp_path / "s.yaml"
    path.write_text("keep me")
    path.chmod(0o444)
    if os.access(path, os.W_OK):  # root may write anything: ask as a user would be answered
        real_access = os.access
        monkeypatch.setattr(os, "access", lambda p, mode, *a, **k: False if str(p) == str(path)
                            else real_access(p, mode, *a, **k))
    with pytest.raises(PermissionError, match="read-only") as caught:
        write_text_atomic(path, "new")
    assert caught.value.filename == str(path) and path.read_text() == "keep me"


def test_errors_name_the_user_s_file_not_the_temporary(tmp_path):
    (tmp_path / "folder").mkdir()
    with pytest.raises(OSError) as caught:
        write_text_atomic(tmp_path / "folder", "x")  # a folder cannot be replaced by a file
    assert caught.value.filename == str(tmp_path / "folder") and ".tmp" not in str(caught.value)
    assert [p.name for p in tmp_path.iterdir()] == ["folder"]


def test_another_user_s_link_in_a_shared_folder_is_replaced_not_followed(tmp_path, monkeypatch):
    """In /tmp anyone can plant a link at a name the app will write: it is never followed."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    link = tmp_path / "run-recovered.json"
    link.symlink_to(victim)
    real_lstat = os.lstat

    class Foreign:  # the link's owner is someone else
        def __init__(self, info):
            self.st_mode, self.st_uid = info.st_mode, info.st_uid + 1

    monkeypatch.setattr(os, "lstat", lambda p, *a, **k: Foreign(real_lstat(p, *a, **k))
                        if str(p) == str(link) else real_lstat(p, *a, **k))
    write_text_atomic(link, "results")
    assert victim.read_text() == "precious" and not link.is_symlink() and link.read_text() == "results"


def test_results_beside_a_session_saved_through_a_link_are_found_again(tmp_path):
    from tests.fuzz.test_loaders import _results_text
    project = tmp_path / "proj"
    (project / "runs").mkdir(parents=True)
    (project / "runs" / "r.json").write_text(_results_text(tmp_path))
    Session(model="gpt2").save(project / "s.yaml")
    link = tmp_path / "link.yaml"
    link.symlink_to(project / "s.yaml")
    Session(model="gpt2", results=(str(project / "runs" / "r.json"),)).save(link)
    assert "- runs/r.json" in (project / "s.yaml").read_text()
    for opened in (project / "s.yaml", link):
        assert load_session(opened).results == (str(project / "runs" / "r.json"),)
