"""A calibration keeps what it measured: every point journalled as it is measured, the run
saved beside the profile before the fit, a profile that no folder takes printed whole, a
cancel or a kill that loses nothing, and exit codes that say what happened."""

import importlib.util
import io
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from explorer.commands import main as cli
from explorer.core.hardware.efficiency import read_efficiencies
from explorer.kernels import runner
from explorer.kernels.journal import RECOVERED_NOTE, SUFFIX
from explorer.kernels.results import Results, load_results
from explorer.kernels.runner import Progress
from tests.kernels.test_calibrate import TRUE, _profile, _results

NO_CUPY = pytest.mark.skipif(importlib.util.find_spec("cupy") is not None, reason="CuPy is installed here")
H100 = {"backend": "cupy", "device_kind": "gpu", "gpu": {"name": "NVIDIA H100 80GB HBM3"}}


def _cli(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(cli.parse_args(list(argv)), out, err)
    return code, out.getvalue(), err.getvalue()


def h100_run(cancelled: bool = False) -> Results:
    """A calibration's run on an H100, its times made from known factors."""
    results = _results(_profile(TRUE))
    return Results(H100, "cuda-events", "quick", results.suites, results.points, cancelled=cancelled)


def replay(results: Results, calls: list):
    """A stand-in for ``runner.run`` that yields ``results``' points as a run would (each
    with the progress report that follows it) and records how it was called."""

    def run(backend, suites, preset="quick", **options):
        calls.append((list(suites), preset, options))
        points = results.points
        for index, point in enumerate(points):
            yield Progress(index, len(points), point.kernel, 0.0, points[index - 1] if index else None)
        yield Progress(len(points), len(points), "", 0.0, points[-1] if points else None)
        return results

    return run


def test_a_measured_run_is_saved_beside_its_profile_and_its_journal_goes(tmp_path, monkeypatch):
    calls: list = []
    monkeypatch.setenv("ROOFLINE_EXPLORER_DATA", str(tmp_path / "data"))
    monkeypatch.setattr(runner, "run", replay(h100_run(), calls))
    out_path = tmp_path / "profiles" / "h100.yaml"
    out_path.parent.mkdir()
    code, _, err = _cli("calibrate", "--out", str(out_path), "--no-load-check")
    assert code == 0, err
    [(suites, _, options)] = calls
    assert options["load"] == runner.OFF and {"shapes", "stream", "quick"} <= set(suites)
    [saved] = out_path.parent.glob("calibrate-*.json")
    assert load_results(saved).points == h100_run().points  # every point, beside the profile
    assert f"saved the {len(h100_run().points)} measured points to {saved}" in err
    assert read_efficiencies(out_path)[0].devices == ("h100-sxm",)
    assert not list(tmp_path.rglob(f"*{SUFFIX}"))  # the journal went once the file held the points


def test_the_energy_meter_is_found_once_and_the_run_reads_that_one(tmp_path, monkeypatch):
    """Finding a counter's step takes up to seconds and two probes could disagree (the
    sweep planned for a meter the run then lacks): one probe, handed to the run."""
    from explorer.kernels import energy

    calls: list = []
    probes: list = []
    meter = energy.Unmeasurable("a test machine")
    monkeypatch.setattr(energy, "meter_for", lambda backend: probes.append(backend) or meter)
    monkeypatch.setenv("ROOFLINE_EXPLORER_DATA", str(tmp_path / "data"))
    monkeypatch.setattr(runner, "run", replay(h100_run(), calls))
    _cli("calibrate", "--out", str(tmp_path / "p.yaml"))
    assert len(probes) == 1 and calls[0][2]["energy"] is meter and "intensity" not in calls[0][0]


def test_the_load_is_read_unless_asked_not_to(tmp_path, monkeypatch):
    calls: list = []
    monkeypatch.setenv("ROOFLINE_EXPLORER_DATA", str(tmp_path / "data"))
    monkeypatch.setattr(runner, "run", replay(h100_run(), calls))
    _cli("calibrate", "--out", str(tmp_path / "p.yaml"))
    assert calls[0][2]["load"] == "auto"


def test_a_run_cancelled_before_its_first_point_exits_130_and_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("ROOFLINE_EXPLORER_DATA", str(tmp_path / "data"))
    empty = Results(H100, "cuda-events", "quick", ("shapes", "stream"), (), cancelled=True)
    monkeypatch.setattr(runner, "run", replay(empty, []))
    code, _, err = _cli("calibrate", "--out", str(tmp_path / "p.yaml"))
    assert code == 130 and "cancelled before its first point" in err
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == []


def test_a_cancelled_run_keeps_its_points_and_fits_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("ROOFLINE_EXPLORER_DATA", str(tmp_path / "data"))
    part = h100_run(cancelled=True)
    monkeypatch.setattr(runner, "run", replay(Results(H100, "cuda-events", "quick", part.suites,
                                                      part.points[:5], cancelled=True), []))
    code, out, err = _cli("calibrate", "--out", str(tmp_path / "p.yaml"))
    assert code == 130 and out == ""
    [saved] = tmp_path.glob("calibrate-*.json")
    assert load_results(saved).points == part.points[:5]
    assert f"the 5 points measured are saved in {saved}" in err and "calibrate --results" in err
    assert not (tmp_path / "p.yaml").exists() and not list(tmp_path.rglob(f"*{SUFFIX}"))


def _unwritable(tmp_path: Path, name: str) -> Path:
    """A folder no one can create, root included: its parent is a regular file."""
    blocker = tmp_path / f"{name}-is-a-file"
    blocker.write_text("")
    return blocker / name


def test_a_data_folder_that_refuses_the_profile_sends_it_to_the_temporary_folder(tmp_path, monkeypatch):
    """The run was measured; the data folder cannot be written (read-only, full, not a
    folder): the profile goes to the temporary folder, the refusal is named and the exit
    code says it is not where --efficiency calibrated looks."""
    import tempfile

    monkeypatch.setenv("ROOFLINE_EXPLORER_DATA", str(_unwritable(tmp_path, "data")))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(runner, "run", replay(h100_run(), []))
    code, out, err = _cli("calibrate")
    assert code == 1
    profile = tmp_path / "roofline-calibrated-h100-sxm.yaml"
    assert read_efficiencies(profile)[0].devices == ("h100-sxm",)
    assert re.search(r"could not save to \S*data-is-a-file/data/efficiency/calibrated-h100-sxm\.yaml: "
                     "Not a directory", err)
    assert f"wrote {profile}: copy it into the data folder's efficiency/" in out
    [saved] = tmp_path.glob("roofline-calibrate-*.json")  # the run too: in the temporary folder
    assert len(load_results(saved).points) == len(h100_run().points)


def test_a_profile_no_folder_takes_is_printed_whole(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setenv("ROOFLINE_EXPLORER_DATA", str(_unwritable(tmp_path, "data")))
    monkeypatch.setattr(tempfile, "tempdir", str(_unwritable(tmp_path, "tmp")))
    saved = tmp_path / "run.json"
    h100_run().save(saved)
    code, out, err = _cli("calibrate", "--results", str(saved))
    assert code == 1 and "could not be saved anywhere" in out
    assert err.count("could not save to") == 2  # the data folder, then the temporary folder
    text = out.split("efficiency/ as calibrated-h100-sxm.yaml:\n", 1)[1]
    [profile] = read_efficiencies(tmp_path / "printed.yaml", text)
    assert profile.id == "calibrated-h100-sxm" and profile.devices == ("h100-sxm",)


@NO_CUPY
def test_a_backend_that_cannot_run_is_an_error_not_a_cancel():
    code, _, err = _cli("calibrate", "--backend", "cupy")
    assert code == 1 and "the cupy backend cannot run here" in err


def _start(tmp_path: Path, *extra: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "ROOFLINE_EXPLORER_DATA": str(tmp_path / "data")}
    return subprocess.Popen([sys.executable, "-m", "explorer", "calibrate", "--no-load-check",
                             "--out", str(tmp_path / "p.yaml"), *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)


def _wait_for_points(process: subprocess.Popen, count: int) -> None:
    """Read the progress until ``count`` points have been measured (and journalled)."""
    while True:
        line = process.stderr.readline()
        assert line, "calibrate ended before measuring enough points"
        if (match := re.match(r"\[(\d+)/\d+\]", line)) and int(match.group(1)) > count:
            return


def _journal_points(folder: Path) -> int:
    [journal] = folder.glob(f".run-*{SUFFIX}")
    return len([line for line in journal.read_text().splitlines()[1:] if json.loads(line)])


@pytest.mark.slow
@NO_CUPY
def test_a_calibration_killed_mid_run_is_recovered_once_by_the_next_command(tmp_path):
    """SIGKILL leaves no chance to save: the journal beside --out holds every point measured,
    and the next calibrate (whose backend then turns out not to run: exit 1, not the
    cancel's 130) recovers each of them exactly once; a bench after it finds nothing left."""
    process = _start(tmp_path)
    _wait_for_points(process, 3)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    journalled = _journal_points(tmp_path)
    assert journalled >= 3 and not (tmp_path / "p.yaml").exists()
    env = {**os.environ, "ROOFLINE_EXPLORER_DATA": str(tmp_path / "data")}
    second = subprocess.run([sys.executable, "-m", "explorer", "calibrate", "--backend", "cupy",
                             "--out", str(tmp_path / "p.yaml")],
                            capture_output=True, text=True, env=env, timeout=120)
    assert second.returncode == 1 and "the cupy backend cannot run here" in second.stderr
    [recovered] = tmp_path.glob("run-*-recovered.json")
    back = load_results(recovered)
    assert len(back.points) == journalled and back.cancelled and RECOVERED_NOTE in back.notes[-1]
    assert f"calibrate --results {recovered}" in second.stderr  # a calibration's run: how to fit it
    assert not list(tmp_path.glob(f".run-*{SUFFIX}"))
    third = subprocess.run([sys.executable, "-m", "explorer", "bench", "--suite", "smoke", "stream",
                            "--no-load-check", "--out", str(tmp_path / "next.json")],
                           capture_output=True, text=True, env=env, timeout=120)
    assert third.returncode == 0, third.stderr
    assert "recovered" not in third.stderr and len(list(tmp_path.glob("run-*-recovered.json"))) == 1


@pytest.mark.slow
def test_ctrl_c_keeps_every_point_measured_beside_the_profile(tmp_path):
    process = _start(tmp_path)
    _wait_for_points(process, 2)
    process.send_signal(signal.SIGINT)
    _, rest = process.communicate(timeout=120)
    assert process.returncode == 130, rest
    [saved] = tmp_path.glob("calibrate-*.json")
    kept = load_results(saved)
    assert len(kept.points) >= 2 and kept.cancelled
    assert f"the {len(kept.points)} points measured are saved in {saved}" in rest
    assert not list(tmp_path.glob(f".run-*{SUFFIX}")) and not (tmp_path / "p.yaml").exists()
