"""benchmarks/ncu_check.py (the probe's last part on a GPU machine), run here with a fake
``ncu``: its verdicts from a capture written with known counts, the capture and verdicts
forming a log the app's reader takes, and a machine without ncu or without profiling
rights said, not failed."""

import os
import stat
import sys
from pathlib import Path

import pytest

from explorer.profiles.ncu import read_ncu_csv

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
try:
    import ncu_check
finally:
    sys.path.pop(0)

FACTS = {"triad_bytes": 3 * (1 << 28) * 4, "product_flops": 2 * 2048 ** 3}


def capture(dram_read: int, dram_write: int, ffma: int) -> str:
    header = ['"ID"', '"Process ID"', '"Kernel Name"', '"gpu__time_duration.sum"', '"dram__bytes_read.sum"',
              '"dram__bytes_write.sum"', '"sm__sass_thread_inst_executed_op_ffma_pred_on.sum"']
    units = ['""', '""', '""', '"ns"', '"byte"', '"byte"', '"inst"']  # as Nsight Compute 2023+ writes
    rows = [['"0"', '"77"', '"stream_triad"', '"1500000"', f'"{dram_read}"', f'"{dram_write}"', '"0"'],
            ['"1"', '"77"', '"sm90_xmma_gemm_f32f32_f32f32_f32_nn_n"', '"900000"', '"50331648"', '"16777216"',
             f'"{ffma}"']]
    table = "\n".join(",".join(r) for r in [header, units, *rows])
    return "==PROF== Connected to process 77\n" + table + "\n"


def test_counts_within_their_bounds_pass_and_the_log_is_a_capture(tmp_path):
    lines = ncu_check.check(capture(2 * (1 << 30), (1 << 30) - (40 << 20), 2048 ** 3 + 4096), FACTS)
    assert all(line.endswith(": ok") for line in lines), lines
    log = tmp_path / "probe.log"
    log.write_text("python 3.12; cupy 14\n" + capture(2 << 30, 1 << 30, 2048 ** 3) + "\n".join(lines) + "\n")
    assert next(k.name for k in read_ncu_csv(log).kernels) == "stream_triad"


@pytest.mark.parametrize("read, written, ffma, failed", [
    (2 << 30, (1 << 30) - (200 << 20), 2048 ** 3, "triad DRAM bytes"),  # 6 % short
    (2 << 30, 1 << 30, 2048 ** 3 // 2, "product FLOPs"),  # half the FMAs
])
def test_counts_outside_their_bounds_fail_by_name(read, written, ffma, failed):
    lines = ncu_check.check(capture(read, written, ffma), FACTS)
    assert [line for line in lines if line.endswith("FAILED")] == [next(x for x in lines if failed in x)]


def _fake_ncu(folder: Path, output: str, status: int = 0) -> None:
    script = folder / "ncu"
    script.write_text(f"#!/bin/sh\necho '{output}'\nexit {status}\n")  # echo: a shell builtin
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


def test_without_ncu_or_without_rights_the_check_is_not_run_never_passed(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(ncu_check, "NCU_PLACES", (str(tmp_path / "cuda-*" / "bin" / "ncu"),))
    assert ncu_check.main([]) == ncu_check.NOT_RUN != 0
    out = capsys.readouterr().out
    assert "NOT RUN: ncu was not found (looked in PATH, " in out and "cuda-*" in out
    _fake_ncu(tmp_path, "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission", 1)
    assert ncu_check.main([]) == ncu_check.NOT_RUN
    assert "NOT RUN: ncu may not read the counters" in capsys.readouterr().out


def test_ncu_is_found_where_cuda_installs_it_newest_first(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    for version in ("12.8", "12.10"):
        (tmp_path / f"cuda-{version}" / "bin").mkdir(parents=True)
        _fake_ncu(tmp_path / f"cuda-{version}" / "bin", "")
    (tmp_path / "nsight" / "2025.1").mkdir(parents=True)
    places = (str(tmp_path / "cuda-*" / "bin" / "ncu"), str(tmp_path / "nsight" / "*" / "ncu"))
    found, looked = ncu_check.find_ncu(places)
    assert found == str(tmp_path / "cuda-12.10" / "bin" / "ncu")  # 12.10 is newer than 12.8
    assert looked == ["PATH", places[0]]
    assert ncu_check.find_ncu((places[1],))[0] is None  # a folder without an ncu in it


def test_a_failing_ncu_run_fails_the_step(tmp_path, monkeypatch, capsys):
    _fake_ncu(tmp_path, "==PROF== the application exited with an error", 1)
    monkeypatch.setenv("PATH", str(tmp_path) + os.pathsep + os.environ["PATH"])
    assert ncu_check.main([]) == 1
    assert "FAILED" in capsys.readouterr().out
