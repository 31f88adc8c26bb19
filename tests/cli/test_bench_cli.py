"""``roofline-explorer bench`` from a terminal: summary, JSON, saved results, errors."""

import io
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from explorer.commands import main as cli
from explorer.kernels import gpuinfo
from explorer.kernels.results import load_results


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(cli.parse_args(list(argv)), out, err)
    return code, out.getvalue(), err.getvalue()


def test_smoke_bench_prints_a_summary_and_saves_results(tmp_path):
    path = tmp_path / "r.json"
    code, out, err = run("bench", "--suite", "stream", "gemm", "--suite", "smoke", "--out", str(path))
    assert code == 0
    assert "measuring with NumPy on" in err and "[" in err  # progress on stderr
    assert "suite" in out.splitlines()[0] and "median" in out
    assert "reference: derived from the local CPU" in out
    assert "best sustained bandwidth: none measured (a smoke run's working sets stay in the caches" in out
    saved = load_results(path)
    assert {p.suite for p in saved.points} == {"stream", "cache", "intensity", "gemm", "decode-batch",
                                               "attention", "parallelism", "memory-bound-ops", "shapes"}


def test_bench_json(tmp_path):
    code, out, _ = run("bench", "--suite", "smoke", "stream", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["schema"] == 4  # 4: each power with its uncertainty
    assert {p["suite"] for p in doc["points"]} == {"stream"}
    assert doc["machine"]["backend"] == "numpy"


def test_compare_with_a_catalogue_device():
    code, out, _ = run("bench", "--suite", "smoke", "stream", "--compare", "h100-sxm")
    assert code == 0 and "reference: catalogue h100-sxm" in out
    code, _, err = run("bench", "--suite", "smoke", "--compare", "h100")
    assert code == 2 and "did you mean h100-sxm" in err


def test_unavailable_gpu_backend_says_why():
    if not isinstance(gpuinfo.detect_gpu(0), gpuinfo.Unavailable):
        pytest.skip("this machine has a usable GPU")
    code, _, err = run("bench", "--backend", "cupy")
    assert code == 1
    assert "the cupy backend cannot run here:" in err


def test_unknown_suite():
    code, _, err = run("bench", "--suite", "gem")
    assert code == 2 and "unknown suite 'gem'" in err


def started_full_bench(path) -> subprocess.Popen:
    """``bench --suite full --out path`` in a process, once its first kernel is measured
    (the progress line moves past 0)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "explorer", "bench", "--suite", "full", "--out", str(path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if line.startswith("[") and " 1/" in line:
            break
    return process


@pytest.mark.slow
def test_ctrl_c_stops_cleanly_and_saves_partial_results(tmp_path):
    path = tmp_path / "partial.json"
    process = started_full_bench(path)
    process.send_signal(signal.SIGINT)
    started = time.monotonic()
    out, err = process.communicate(timeout=30)
    assert time.monotonic() - started < 5
    assert process.returncode == 130, err
    assert "Traceback" not in err
    assert "cancelled: the table holds the kernels that finished" in out
    saved = load_results(path)
    assert saved.cancelled and len(saved.points) >= 1


def test_the_out_folder_is_checked_before_anything_runs(tmp_path):
    code, _, err = run("bench", "--suite", "smoke", "--out", str(tmp_path / "missing" / "r.json"))
    assert code == 2 and "does not exist" in err
    assert "measuring with" not in err  # nothing was run and thrown away


def test_a_failed_save_keeps_the_results_elsewhere_and_says_why(tmp_path, monkeypatch):
    from explorer.kernels.results import Results

    wanted = tmp_path / "r.json"
    real_save = Results.save

    def save(self, path):
        if str(path) == str(wanted):
            raise OSError(28, "No space left on device")
        real_save(self, path)

    monkeypatch.setattr(Results, "save", save)
    code, out, err = run("bench", "--suite", "smoke", "stream", "--out", str(wanted))
    assert code == 1 and "best sustained bandwidth" in out  # the table came first
    assert f"could not save to {wanted}: No space left on device" in err
    kept = err.split("saved ")[1].split(" to ")[1].strip()
    assert len(load_results(kept).points) >= 1 and not wanted.exists()


@pytest.mark.slow
@pytest.mark.parametrize("signals", [(signal.SIGINT, signal.SIGINT), (signal.SIGTERM,)])
def test_a_second_ctrl_c_or_sigterm_stops_at_once_and_keeps_what_was_measured(tmp_path, signals):
    path = tmp_path / "partial.json"
    process = started_full_bench(path)
    for sig in signals:
        process.send_signal(sig)
        time.sleep(0.3)
    _, err = process.communicate(timeout=60)
    assert "Traceback" not in err
    saved = load_results(path)
    assert saved.cancelled and len(saved.points) >= 1
    if process.returncode in (130, -signal.SIGINT):
        # The first Ctrl+C's cancel ended the run (and saved it) before the second came;
        # the second then ends the process as Ctrl+C does.
        assert signals == (signal.SIGINT, signal.SIGINT)
    else:
        assert process.returncode == 143, err
        assert "stopped; keeping what was measured" in err and "stopped at once" in " ".join(saved.notes)


def test_a_data_folder_that_is_a_file_still_saves_to_out(tmp_path, monkeypatch):
    """The data folder's place holds a regular file: --out is tried first and works; without
    --out the run lands in the temporary folder, and no traceback either way."""
    blocker = tmp_path / "data"
    blocker.write_text("not a folder")
    monkeypatch.setenv("ROOFLINE_EXPLORER_DATA", str(blocker))
    wanted = tmp_path / "r.json"
    code, _, err = run("bench", "--suite", "smoke", "stream", "--out", str(wanted))
    assert code == 0 and "Traceback" not in err
    assert len(load_results(wanted).points) >= 1
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    code, _, err = run("bench", "--suite", "smoke", "stream")
    assert code == 0 and "Not a directory" in err
    assert len(load_results(next(tmp_path.glob("roofline-bench-*.json"))).points) >= 1


def test_two_runs_saved_in_the_same_second_keep_both_files(tmp_path, monkeypatch):
    from explorer.commands.bench import _save
    from explorer.kernels.results import Results

    monkeypatch.setenv("ROOFLINE_EXPLORER_DATA", str(tmp_path))
    run_ = Results(machine={"cpu": "x"}, timer="perf_counter", preset="smoke", suites=("stream",),
                   points=(), created="2026-12-01T15:45:00+00:00")
    first, second = _save(run_, None, io.StringIO()), _save(run_, None, io.StringIO())
    assert first != second and os.path.exists(first) and os.path.exists(second)
    assert os.path.basename(first).startswith(f"bench-20261201-154500-{os.getpid()}-")
