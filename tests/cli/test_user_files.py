"""Every command reads the user's own devices, and a broken file of theirs stops only the
command that needs it: the others warn once on stderr and go on."""

import json

import pytest

from tests.cli.test_cli import run
from tests.core.test_userfiles import write_broken_device, write_device


@pytest.fixture
def data(tmp_path, monkeypatch, catalog):
    """A data folder with one good device of the user's (mine) and one broken (my-gpu)."""
    monkeypatch.setenv("ROOFLINE_EXPLORER_DATA", str(tmp_path))
    write_device(tmp_path / "hardware", catalog, "mine", source="a100-80gb-sxm")
    write_broken_device(tmp_path / "hardware", catalog)
    return tmp_path


WARNING = "roofline-explorer: warning: 1 of your devices could not be loaded: my-gpu.yaml, field compute["


@pytest.mark.parametrize("argv", [
    ("hardware", "list"),
    ("hardware", "show", "mine"),
    ("analyze", "--hardware", "mine", "--model", "gpt2"),
    ("analyze", "--hardware", "h100-sxm", "--model", "gpt2"),
    ("explain", "--hardware", "mine,xeon-platinum-8480", "--model", "gpt2"),
    ("scenes", "show", "cpu-vs-gpu", "--step", "1"),
    ("lab", "--stage", "0"),
    ("bench", "--suite", "smoke", "--compare", "mine"),
])
def test_commands_use_the_user_s_devices_and_warn_once_about_a_broken_one(data, argv):
    code, out, err = run(*argv)
    assert code == 0, err
    assert err.count(WARNING) == 1 and "Traceback" not in err
    if argv[0] == "hardware" and argv[1] == "list":
        assert any(line.startswith("mine ") for line in out.splitlines())


def test_the_command_that_needs_the_broken_device_names_its_file_and_field(data):
    code, out, err = run("analyze", "--hardware", "my-gpu", "--model", "gpt2")
    assert code == 1 and out == ""
    assert "my-gpu.yaml: entry 'my-gpu': field 'compute[" in err
    assert "your device 'my-gpu' could not be loaded: unknown unit 'QFLOP/s'" in err


def test_bench_compares_with_a_user_device(data):
    code, out, _ = run("bench", "--suite", "smoke", "--compare", "mine", "--json")
    assert code == 0
    assert json.loads(out)["reference"] == "catalogue mine"


def test_a_broken_user_scene_is_skipped_by_scenes_commands(data):
    (data / "scenes").mkdir()
    (data / "scenes" / "lecture.yaml").write_text("schema: 1\nscenes: [{id: lecture}]\n")
    code, out, err = run("scenes", "list")
    assert code == 0 and "cpu-vs-gpu" in out
    assert "1 of your scenes could not be loaded: lecture.yaml, field title: is missing" in err
    code, _, err = run("scenes", "show", "lecture")
    assert code == 1 and "your scene 'lecture' could not be loaded" in err


def test_commands_run_when_the_data_folder_cannot_be_created(tmp_path, monkeypatch):
    import io

    from explorer.commands import main as cli

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("ROOFLINE_EXPLORER_DATA", str(blocker / "data"))
    for argv in (["export", "--out", str(tmp_path / "c.svg")], ["hardware", "list"],
                 ["scenes", "list"], ["analyze", "--hardware", "h100-sxm", "--model", "gpt2"]):
        out, err = io.StringIO(), io.StringIO()
        assert cli.run(cli.parse_args(argv), out, err) == 0, (argv, err.getvalue())
    assert (tmp_path / "c.svg").exists()
