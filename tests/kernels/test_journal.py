"""The run journal: every measured point is on disk as soon as it is measured, and a run
that was killed comes back as a results file."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from explorer.core.files.datafile import DataFileError
from explorer.kernels.journal import RECOVERED_NOTE, SUFFIX, Journal, leftovers, recover, recover_all
from explorer.kernels.results import Point, Results, load_results
from tests.timeouts import no_block


def point(n: int) -> Point:
    return Point(suite="stream", kernel="triad", dtype="fp64", size={"n": 1000 * n}, param={},
                 flops=2000 * n, bytes=24000 * n, time_median_s=1e-5, time_p20_s=0.9e-5,
                 time_p80_s=1.2e-5)


RUN = Results(machine={"cpu": "test"}, timer="perf_counter", preset="quick", suites=("stream",),
              points=(), cancelled=True, created="2026-12-01T00:00:00+00:00")


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def orphan(journal: Journal) -> None:
    """Make ``journal`` look like the journal of a process that was killed."""
    journal.close()
    lines = journal.path.read_text().splitlines()
    header = json.loads(lines[0])
    header["process"] = {"pid": dead_pid(), "start": None}
    journal.path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")


def test_points_are_on_disk_as_they_arrive_and_come_back(tmp_path):
    journal = Journal(tmp_path, RUN)
    for n in (1, 2, 3):
        assert journal.add(point(n)) is None
        assert len(journal.path.read_text().splitlines()) == n + 1  # header + n points, flushed
    back = recover(journal.path)
    assert back.points == (point(1), point(2), point(3))
    assert back.cancelled and back.machine == {"cpu": "test"} and back.preset == "quick"
    assert back.notes == (RECOVERED_NOTE,)


def test_a_last_line_cut_short_by_the_crash_is_dropped_and_counted(tmp_path):
    journal = Journal(tmp_path, RUN)
    journal.add(point(1))
    journal.add(point(2))
    journal.close()
    text = journal.path.read_text()
    journal.path.write_text(text[:-25])  # the second point half written
    back = recover(journal.path)
    assert back.points == (point(1),)
    assert back.notes == (f"{RECOVERED_NOTE} (1 unreadable line dropped)",)


def test_a_journal_without_its_header_is_refused_with_the_file(tmp_path):
    path = tmp_path / ".run-x.journal.jsonl"
    path.write_text('{"suite": "stream"\n')
    with pytest.raises(DataFileError, match="does not start with a run's description"):
        recover(path)


def test_only_journals_of_processes_that_stopped_are_recovered(tmp_path):
    live = Journal(tmp_path, RUN)  # this process: still running
    live.add(point(1))
    killed = Journal(tmp_path, RUN)
    killed.add(point(2))
    killed.add(point(3))
    orphan(killed)
    empty = Journal(tmp_path, RUN)  # killed before its first point
    orphan(empty)
    assert set(leftovers(tmp_path)) == {killed.path, empty.path}
    recovered = recover_all(tmp_path)
    assert len(recovered) == 1
    path, results = recovered[0]
    assert path.name.endswith("-recovered.json") and not path.name.startswith(".")
    assert load_results(path).points == (point(2), point(3)) == results.points
    assert not killed.path.exists() and not empty.path.exists() and live.path.exists()
    live.discard()
    assert not live.path.exists()


def test_a_full_disk_stops_the_journal_once_and_says_why(tmp_path):
    journal = Journal(tmp_path, RUN)

    class Full:
        def write(self, text):
            raise OSError(28, "No space left on device")

        def close(self):
            pass

    journal._file = Full()
    assert journal.add(point(1)) == "No space left on device"
    assert journal.add(point(2)) is None  # said once; the run goes on


@pytest.mark.slow
def test_a_bench_killed_with_sigkill_keeps_every_point_it_had_measured(tmp_path):
    """SIGKILL leaves no chance to save: the journal beside --out holds the points, and the
    next bench turns it into a results file."""
    out = tmp_path / "r.json"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "explorer", "bench", "--suite", "full", "--out", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    measured = 0
    while measured < 2:
        line = process.stderr.readline()
        assert line, "bench ended before measuring two points"
        if match := re.match(r"\[[-#=> ]*\] (\d+)/", line):
            measured = int(match.group(1))
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert not out.exists()
    journals = list(tmp_path.glob(".run-*.journal.jsonl"))
    assert len(journals) == 1
    second = subprocess.run(
        [sys.executable, "-m", "explorer", "bench", "--suite", "smoke", "stream", "--out",
         str(tmp_path / "next.json")], capture_output=True, text=True, env=env, timeout=120)
    assert second.returncode == 0, second.stderr
    assert "points of an interrupted run into" in second.stderr
    recovered = load_results(next(tmp_path.glob("run-*-recovered.json")))
    assert len(recovered.points) >= measured - 1 and recovered.cancelled  # the progress line leads
    assert RECOVERED_NOTE in recovered.notes[-1]
    assert not list(tmp_path.glob(".run-*.journal.jsonl"))


def test_a_journal_whose_writer_holds_its_lock_is_never_taken(tmp_path):
    """The writer keeps its journal locked for the whole run: even a header naming a process
    id that looks dead (another container, a reused id) does not make it a leftover."""
    journal = Journal(tmp_path, RUN)
    journal.add(point(1))
    lines = journal.path.read_text().splitlines()
    header = json.loads(lines[0])
    header["process"] = {"pid": dead_pid(), "start": None}
    journal.path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")  # same file, lock kept
    assert leftovers(tmp_path) == [] and recover_all(tmp_path) == []
    assert journal.path.stat().st_mode & 0o777 == 0o600  # private to its user
    journal.close()  # the lock goes with the process
    assert leftovers(tmp_path) == [journal.path]


def test_a_journal_that_cannot_be_removed_does_not_stop_the_others(tmp_path, monkeypatch):
    first, second = Journal(tmp_path, RUN), Journal(tmp_path, RUN)
    for journal in (first, second):
        journal.add(point(1))
        orphan(journal)
    real_unlink = Path.unlink

    def unlink(path, missing_ok=False):
        if path == first.path:
            raise PermissionError(1, "Operation not permitted")
        return real_unlink(path, missing_ok=missing_ok)

    monkeypatch.setattr(Path, "unlink", unlink)
    recovered = recover_all(tmp_path)
    assert [len(results.points) for _, results in recovered] == [1]
    assert first.path.exists() and not second.path.exists()


RECOVER_ONCE = """
import sys, time
from explorer.kernels.journal import recover_all
time.sleep(max(0.0, float(sys.argv[2]) - time.time()))  # both start at the same moment
print(len(recover_all(sys.argv[1])))
"""


@pytest.mark.slow
def test_two_processes_recovering_at_once_recover_each_journal_once(tmp_path):
    journals = [Journal(tmp_path, RUN) for _ in range(12)]
    for journal in journals:
        journal.add(point(1))
        orphan(journal)
    start = str(time.time() + 1.5)
    processes = [subprocess.Popen([sys.executable, "-c", RECOVER_ONCE, str(tmp_path), start],
                                  stdout=subprocess.PIPE, text=True) for _ in range(2)]
    counts = [int(p.communicate(timeout=60)[0]) for p in processes]
    assert sum(counts) == 12  # each reported by exactly one process
    assert len(list(tmp_path.glob("run-*-recovered.json"))) == 12
    assert not list(tmp_path.glob(f".run-*{SUFFIX}"))


def test_a_recovered_file_is_as_private_as_its_journal(tmp_path):
    journal = Journal(tmp_path, RUN)
    journal.add(point(1))
    orphan(journal)
    [(path, _)] = recover_all(tmp_path)
    assert path.stat().st_mode & 0o777 == 0o600


def test_special_files_named_like_journals_are_left_alone_at_once(tmp_path):
    fifo = tmp_path / f".run-fifo{SUFFIX}"
    os.mkfifo(fifo)
    (tmp_path / f".run-folder{SUFFIX}").mkdir()
    (tmp_path / f".run-zero{SUFFIX}").symlink_to("/dev/zero")
    (tmp_path / f".run-loop{SUFFIX}").symlink_to(tmp_path / f".run-loop{SUFFIX}")
    with no_block():
        assert recover_all(tmp_path) == [] and leftovers(tmp_path) == []
    with pytest.raises(DataFileError, match="is a named pipe"):
        recover(fifo)


def test_a_journal_larger_than_any_run_is_left_whole(tmp_path, monkeypatch):
    from explorer.kernels import journal as journal_module
    journal = Journal(tmp_path, RUN)
    for n in range(1, 20):
        journal.add(point(n))
    orphan(journal)
    monkeypatch.setattr(journal_module, "MAX_RESULTS_BYTES", 2000)  # the journal is larger
    before = journal.path.read_bytes()
    assert recover_all(tmp_path) == []
    assert journal.path.read_bytes() == before and not list(tmp_path.glob("*-recovered.json"))
