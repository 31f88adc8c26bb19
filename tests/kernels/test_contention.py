"""Measurements that notice a busy machine: other programs' load is read around every timed
case; a point measured under load is retried, and if the load stays it is kept but marked
contended, never used as a ceiling, and counted in the run's summary."""

import json
from dataclasses import replace

import pytest

from explorer.kernels import runner
from explorer.kernels.load import Foreign, ProcStatLoad
from explorer.kernels.results import load_results
from explorer.kernels.runner import drive, run

QUIET = Foreign(0.02, False, "other programs used 0.02 cores while it ran")
BUSY = Foreign(0.95, True, "other programs used 0.95 cores while it ran")


class FakeLoad:
    """Foreign load in a scripted order, one value per timed window."""

    def __init__(self, *values):
        self.values, self.windows = list(values), 0

    def start(self):
        return None

    def stop(self, token):
        self.windows += 1
        return self.values.pop(0) if self.values else QUIET


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch):
    monkeypatch.setattr(runner, "QUIET_WAIT_S", 0.0)


def measure_triad(backend, load):
    reports = []
    results = drive(run(backend, ["stream", "smoke"], load=load), reports.append)
    [triad] = [p for p in results.points if p.kernel == "triad"]
    return results, triad, reports


def test_a_quiet_machine_gives_trusted_points_with_their_load(numpy_backend):
    load = FakeLoad()
    results, triad, _ = measure_triad(numpy_backend, load)
    assert load.windows == len(results.points)  # one window per case, no retries
    assert triad.foreign_load == pytest.approx(0.02) and triad.contended is None and triad.trusted
    assert not [n for n in results.notes if "busy" in n]


def test_a_load_that_passes_is_waited_out(numpy_backend):
    load = FakeLoad(QUIET, QUIET, QUIET, BUSY, QUIET)  # copy, scale, add quiet; triad busy once
    _results, triad, reports = measure_triad(numpy_backend, load)
    assert triad.contended is None and triad.trusted
    waits = [r.current for r in reports if "waiting for a quiet moment" in r.current]
    assert waits == [f"{triad.suite}/{triad.kernel} fp32 262144 threads={numpy_backend.cpu.threads}: "
                     "waiting for a quiet moment (other programs used 0.95 cores while it ran)"]


def test_a_load_that_stays_marks_the_point_contended_and_never_a_ceiling(numpy_backend):
    load = FakeLoad(QUIET, QUIET, QUIET, BUSY, BUSY, BUSY)
    results, triad, _ = measure_triad(numpy_backend, load)
    assert load.windows == 3 + 1 + runner.RETRIES
    assert triad.contended == BUSY.detail and triad.foreign_load == pytest.approx(0.95)
    assert not triad.trusted
    assert results.best_bandwidth() is None  # smoke sets stay in cache: never a ceiling
    as_if_from_memory = replace(results, preset="quick",
                                points=tuple(replace(p, dram_traffic=True) for p in results.points))
    assert as_if_from_memory.best_bandwidth().kernel != "triad"  # nor one measured under load
    [note] = [n for n in results.notes if "busy" in n]
    assert note.startswith("1 of 4 points were measured while other programs were busy (up to 0.95 "
                           "cores), after 2 retries")


def test_contention_survives_the_results_file_and_old_files_still_read(numpy_backend, tmp_path):
    results, _triad, _ = measure_triad(numpy_backend, FakeLoad(QUIET, QUIET, QUIET, BUSY, BUSY, BUSY))
    path = tmp_path / "r.json"
    results.save(path)
    assert [p.contended for p in load_results(path).points] == [p.contended for p in results.points]
    old = json.loads(path.read_text())
    old["schema"] = 1
    for point in old["points"]:
        del point["foreign_load"], point["contended"]
    path.write_text(json.dumps(old))
    assert all(p.foreign_load is None and p.contended is None for p in load_results(path).points)


def test_no_source_is_said_in_the_summary(numpy_backend):
    results = drive(run(numpy_backend, ["stream", "smoke"], load=None))
    assert any("other programs' load was not measured (no /proc)" in n for n in results.notes)


def test_proc_stat_counts_other_programs_cores(tmp_path, monkeypatch):
    """Two CPUs; over the window 200 ticks pass (100 per CPU), all processes are busy for 130
    of them and we for 40 (25 in our threads, 15 in a child we waited for, such as a
    start-up round's fresh interpreter): other programs kept 0.9 of a core busy."""
    (tmp_path / "self").mkdir()

    def write(busy_user, idle, own, children):
        (tmp_path / "stat").write_text(f"cpu  {busy_user} 0 0 {idle} 0 0 0 0 0 0\ncpu0 1 2 3 4\n")
        (tmp_path / "self" / "stat").write_text(
            "42 (python (x)) R " + " ".join(["0"] * 10) + f" {own} 0 {children} 0 " + " ".join(["0"] * 30))

    load = ProcStatLoad(tmp_path)
    load.cpus = 2
    write(1000, 5000, 300, 0)
    token = load.start()
    write(1130, 5070, 325, 15)
    monkeypatch.setattr("explorer.kernels.load.time.monotonic", lambda: token[1] + 1.0)
    foreign = load.stop(token)
    assert foreign.cores == pytest.approx(0.9) and foreign.busy
    assert foreign.detail == "other programs used 0.90 cores while it ran"


def test_a_cancel_while_waiting_keeps_the_point_already_measured(numpy_backend, monkeypatch):
    from explorer.kernels.timing import Cancelled

    def cancelled_wait(seconds, cancel):
        raise Cancelled()

    monkeypatch.setattr(runner, "_wait", cancelled_wait)
    results = drive(run(numpy_backend, ["stream", "smoke"], load=FakeLoad(QUIET, BUSY)))
    assert results.cancelled and [p.kernel for p in results.points] == ["copy", "scale"]
    assert results.points[1].contended == BUSY.detail


def test_a_load_that_cannot_be_read_costs_no_measurement(numpy_backend):
    class Broken(FakeLoad):
        def stop(self, token):
            raise OSError(5, "Input/output error")

    results = drive(run(numpy_backend, ["stream", "smoke"], load=Broken()))
    assert len(results.points) == 4 and all(p.foreign_load is None and p.trusted for p in results.points)


class FakeNvml:
    """pynvml's calls the load source makes, with a scripted process list."""

    class NVMLError(Exception):
        pass

    def __init__(self, *pids: int) -> None:
        self.pids, self.inits, self.shutdowns = list(pids), 0, 0

    def nvmlInit(self):
        self.inits += 1

    def nvmlShutdown(self):
        self.shutdowns += 1

    def nvmlDeviceGetHandleByIndex(self, index):
        return index

    def nvmlDeviceGetComputeRunningProcesses(self, handle):
        from types import SimpleNamespace
        return [SimpleNamespace(pid=pid, usedGpuMemory=1 << 30) for pid in self.pids]


def nvml_load(monkeypatch, *pids):
    import sys

    from explorer.kernels.load import NvmlLoad
    fake = FakeNvml(*pids)
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    return NvmlLoad(0), fake


def test_nvml_counts_other_processes_and_not_ours(monkeypatch):
    import os
    load, _ = nvml_load(monkeypatch, os.getpid())
    assert load.stop(load.start()) == Foreign(0.0, False, "no other process on the GPU")
    load, _ = nvml_load(monkeypatch, os.getpid(), 4242)
    foreign = load.stop(load.start())
    assert foreign.cores == 1.0 and foreign.busy


def test_in_a_container_one_listed_process_is_ours(monkeypatch):
    """NVML lists host process ids there: ours is missing, and the one process it lists while
    our case runs is us, not a foreign load (it once marked every GPU point contended)."""
    import os
    host_pid = os.getpid() + 100_000
    load, _ = nvml_load(monkeypatch, host_pid)
    foreign = load.stop(load.start())
    assert not foreign.busy and foreign.cores == 0.0
    assert "NVML lists other process ids than ours, as in a container" in foreign.detail
    load, _ = nvml_load(monkeypatch, host_pid, host_pid + 1)
    assert load.stop(load.start()).cores == 1.0


def test_a_run_shuts_nvml_down_and_no_load_check_is_said(monkeypatch, numpy_backend):
    import os
    load, fake = nvml_load(monkeypatch, os.getpid())
    drive(run(numpy_backend, ["stream", "smoke"], load=load), lambda p: None)
    assert fake.shutdowns == fake.inits == 1
    results = drive(run(numpy_backend, ["stream", "smoke"], load=runner.OFF), lambda p: None)
    assert any("was not checked (--no-load-check)" in note for note in results.notes)
    assert all(p.foreign_load is None and p.contended is None for p in results.points)
