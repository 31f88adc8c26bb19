"""The one writer (``core.files.atomic``) under faults: a clean-up that fails never hides
the real error, and nothing but a regular file (or a new name) is ever replaced, whether the
user's path is the special file or a link to it; every writer and command says so by name."""

import errno
import os
import stat
from pathlib import Path

import pytest

from explorer.core.files import atomic
from explorer.core.files.atomic import write_bytes_atomic, write_text_atomic


def device(path: Path) -> Path:
    """A character device like /dev/null (1, 3), made here, never in /dev."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("making a device node needs root (CAP_MKNOD) here")
    return path


def fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


SPECIAL = {"fifo": (fifo, "a named pipe (FIFO)"), "device": (device, "a character device")}


# -- a failed clean-up never hides the real error ------------------------------------------
@pytest.mark.parametrize("failing", ["open", "replace"])
def test_a_clean_up_that_fails_keeps_the_real_error_and_the_user_s_name(tmp_path, monkeypatch, failing):
    """On a read-only file system both the write and the clean-up fail: the error is the
    write's (EROFS), naming the user's file, not the temporary the clean-up could not remove."""
    path = tmp_path / "deck.pptx"
    real = getattr(os, failing)

    def refused(*args, **kwargs):
        if ".tmp" in str(args[0]):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(args[0]))
        return real(*args, **kwargs)

    def unlink(self, missing_ok=False):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(self))

    monkeypatch.setattr(os, failing, refused)
    monkeypatch.setattr(Path, "unlink", unlink)
    with pytest.raises(OSError) as caught:
        write_bytes_atomic(path, b"slides")
    assert caught.value.errno == errno.EROFS and caught.value.strerror == "Read-only file system"
    assert caught.value.filename == str(path) and ".tmp" not in str(caught.value)


def test_a_clean_up_that_fails_never_hides_an_interrupt(tmp_path, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    def unlink(self, missing_ok=False):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(self))

    monkeypatch.setattr(os, "replace", interrupted)
    monkeypatch.setattr(Path, "unlink", unlink)
    with pytest.raises(KeyboardInterrupt):
        write_text_atomic(tmp_path / "s.yaml", "x")


# -- only regular files are replaced -------------------------------------------------------
@pytest.mark.parametrize("kind", SPECIAL)
def test_a_special_file_is_refused_by_name_not_replaced(tmp_path, kind):
    make, what = SPECIAL[kind]
    special = make(tmp_path / "out.svg")
    with pytest.raises(OSError) as caught:
        write_text_atomic(special, "<svg/>")
    assert caught.value.filename == str(special)
    assert str(caught.value) == f"{special}: is {what}, not a file: only regular files are written"
    assert not stat.S_ISREG(os.lstat(special).st_mode) and os.listdir(tmp_path) == ["out.svg"]


@pytest.mark.parametrize("kind", SPECIAL)
def test_a_link_to_a_special_file_is_refused_and_both_stay(tmp_path, kind):
    """``ln -s nullnode out.svg``: the device stays a device (as root, a link to /dev/null
    would otherwise have replaced the system's /dev/null), and the link stays a link."""
    make, what = SPECIAL[kind]
    special = make(tmp_path / "node")
    link = tmp_path / "out.svg"
    link.symlink_to(special)
    with pytest.raises(OSError) as caught:
        write_bytes_atomic(link, b"x" * 18_000)
    assert caught.value.filename == str(link)
    assert str(caught.value) == (f"{link}: links to {special}, {what}, not a file: only regular "
                                 "files are written")
    assert link.is_symlink() and not stat.S_ISREG(os.lstat(special).st_mode)
    assert sorted(os.listdir(tmp_path)) == ["node", "out.svg"]


def test_a_folder_is_refused_by_name(tmp_path):
    folder = tmp_path / "out.svg"
    folder.mkdir()
    with pytest.raises(OSError) as caught:
        write_text_atomic(folder, "x")
    assert caught.value.errno == errno.EISDIR
    assert str(caught.value) == f"{folder}: is a folder, not a file: only regular files are written"


def test_links_to_regular_files_and_new_names_are_still_written(tmp_path):
    (tmp_path / "real.svg").write_text("old")
    (tmp_path / "link.svg").symlink_to(tmp_path / "real.svg")
    (tmp_path / "new.svg").symlink_to(tmp_path / "made.svg")  # dangling: makes its target
    for path in ("link.svg", "new.svg", "plain.svg"):
        write_text_atomic(tmp_path / path, "new")
    assert (tmp_path / "real.svg").read_text() == (tmp_path / "made.svg").read_text() == "new"
    assert (tmp_path / "link.svg").is_symlink() and (tmp_path / "plain.svg").read_text() == "new"
    assert atomic.target_of(tmp_path / "new.svg") == tmp_path / "made.svg"


# -- every command that writes says so, by name, without a traceback -----------------------
def _calibration_run(tmp_path: Path) -> str:
    from explorer.kernels.results import Results
    from tests.kernels.test_calibrate import TRUE, _profile, _results
    run = _results(_profile(TRUE))
    machine = {"backend": "cupy", "device_kind": "gpu", "gpu": {"name": "NVIDIA H100 80GB HBM3"}}
    Results(machine, "cuda-events", "quick", run.suites, run.points).save(tmp_path / "run.json")
    return str(tmp_path / "run.json")


COMMANDS = {  # name → (arguments before --out, the suffix written, exit status)
    "export svg": (lambda tmp: ["export", "--model", "gpt2", "--hardware", "h100-sxm"], ".svg", 1),
    "export pptx": (lambda tmp: ["export", "--model", "gpt2", "--hardware", "h100-sxm"], ".pptx", 1),
    "serve": (lambda tmp: ["serve", "--hardware", "h100-sxm", "--model", "llama-3-8b"], ".svg", 1),
    # calibrate and bench ask before measuring (exit 2), the others when they write (exit 1)
    "calibrate": (lambda tmp: ["calibrate", "--results", _calibration_run(tmp)], ".yaml", 2),
    "bench": (lambda tmp: ["bench", "--backend", "numpy", "--suite", "stream"], ".json", 2),
}


@pytest.mark.parametrize("kind", SPECIAL)
@pytest.mark.parametrize("command", COMMANDS)
def test_commands_refuse_to_write_through_a_link_to_a_special_file(tmp_path, command, kind):
    from tests.cli.test_cli import run
    from tests.timeouts import no_block

    arguments, suffix, status = COMMANDS[command]
    make, what = SPECIAL[kind]
    special = make(tmp_path / "node")
    link = tmp_path / f"out{suffix}"
    link.symlink_to(special)
    with no_block():
        code, _, err = run(*arguments(tmp_path), "--out", str(link))
    assert code == status, err
    assert f"{link}: links to {special}, {what}, not a file: only regular files are written" in err
    assert "Traceback" not in err and not stat.S_ISREG(os.lstat(special).st_mode) and link.is_symlink()
