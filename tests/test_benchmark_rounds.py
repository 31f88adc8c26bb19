"""benchmarks/common.py: interleaved rounds keep only the clean ones (no foreign load, as
``bench`` reads it) for the median and spread, and say how many were clean."""

import sys
from pathlib import Path

import pytest

from explorer.kernels.load import Foreign

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
try:
    import common
finally:
    sys.path.pop(0)


class FakeLoad:
    """Foreign load of each round in turn: busy where ``busy[i]``."""

    def __init__(self, busy: list[bool]) -> None:
        self.busy = list(busy)

    def start(self):
        return None

    def stop(self, _token):
        busy = self.busy.pop(0)
        return Foreign(1.5 if busy else 0.02, busy, "")


def rounds(monkeypatch, busy: list[bool], ours_s: list[float]):
    class Source(FakeLoad):
        available = staticmethod(lambda: True)

        def __init__(self) -> None:
            super().__init__(busy)

    monkeypatch.setattr(common, "ProcStatLoad", Source)
    times = iter(ours_s)
    return common.interleaved_ratio(lambda: next(times), lambda: 1.0, len(ours_s))


def test_busy_rounds_are_left_out_of_the_median(monkeypatch):
    # ratios 1/0.5 = 2 in the busy rounds, 1/1.0 = 1 in the clean ones
    r = rounds(monkeypatch, [True, False, False, True, False], [0.5, 1.0, 1.0, 0.5, 1.0])
    assert (r.median, r.clean, r.rounds) == (1.0, 3, 5)
    assert r.ratios == [2.0, 1.0, 1.0, 2.0, 1.0] and r.foreign_cores == pytest.approx(1.5)
    assert "3/5 clean, foreign ≤ 1.50 cores; median of clean rounds" in common.describe("x", r)


def test_too_few_clean_rounds_keep_every_round_and_say_so(monkeypatch):
    r = rounds(monkeypatch, [True, True, False, True], [0.5, 0.5, 1.0, 0.5])
    assert (r.median, r.clean) == (2.0, 1) and "median of all rounds: too few clean" in r.note


def test_a_whole_run_says_how_busy_the_machine_was(monkeypatch, capsys):
    class Source(FakeLoad):
        available = staticmethod(lambda: True)

        def __init__(self) -> None:
            super().__init__([True])

    monkeypatch.setattr(common, "ProcStatLoad", Source)
    with common.watched():
        pass
    assert "foreign load over the run: 1.50 cores (busy: these figures are not for publishing)" in \
        capsys.readouterr().out


def test_any_number_of_runs_alternate_their_order_round_by_round(monkeypatch):
    """Three runs a round, in the order given in even rounds and reversed in odd ones; each
    ratio of two of them is taken round by round over the clean rounds."""
    class Source(FakeLoad):
        available = staticmethod(lambda: True)

        def __init__(self) -> None:
            super().__init__([False, True, False, False])

    monkeypatch.setattr(common, "ProcStatLoad", Source)
    calls = []

    def run(name, seconds):
        def timed():
            calls.append(name)
            return seconds[len([c for c in calls if c == name]) - 1]
        return timed

    measured = common.interleaved({"a": run("a", [1.0, 9.0, 1.0, 1.0]), "b": run("b", [2.0, 2.0, 2.0, 4.0]),
                                   "c": run("c", [4.0] * 4)}, 4)
    assert calls == ["a", "b", "c", "c", "b", "a", "a", "b", "c", "c", "b", "a"]
    r = measured.ratio("b", "a")
    assert r.ratios == [2.0, 2.0 / 9.0, 2.0, 4.0] and (r.clean, r.rounds) == (3, 4)
    assert r.median == 2.0  # the busy second round is left out
    assert measured.ratio("c", "b").ratios == [2.0, 2.0, 2.0, 1.0]


def test_two_clocks_keep_each_runs_in_process_times_beside_its_whole_process_ones(monkeypatch):
    class Source(FakeLoad):
        available = staticmethod(lambda: True)

        def __init__(self) -> None:
            super().__init__([False, False, False])

    monkeypatch.setattr(common, "ProcStatLoad", Source)
    # whole-process times: the in-process ones plus the interpreter's start, 0.1 s
    ours = iter([(0.4, 0.3), (0.5, 0.4), (0.4, 0.3)])
    bare = iter([(0.2, 0.1)] * 3)
    measured = common.two_clocks({"ours": lambda: next(ours), "bare": lambda: next(bare)}, 3)
    assert measured.times["ours"] == [0.4, 0.5, 0.4] and measured.times["ours in-process"] == [0.3, 0.4, 0.3]
    assert measured.ratio("ours", "bare").ratios == pytest.approx([2.0, 2.5, 2.0])
    assert measured.ratio("ours in-process", "bare in-process").ratios == pytest.approx([3.0, 4.0, 3.0])


def test_a_start_up_is_timed_from_its_spawn_and_from_its_first_line():
    """The child waits 50 ms, then stamps the shared monotonic clock: the spawn's clock
    counts that wait and the interpreter's start; the in-process time is what it printed."""
    code = f"import time\ntime.sleep(0.05)\nprint(0.25)\n{common.STAMP}\nprint('painted')\n"
    whole, in_process, rest = common.start_up(code)
    assert in_process == 0.25 and rest == ["painted"]
    assert whole >= 0.05
    with pytest.raises(RuntimeError, match="exit 3"):
        common.start_up("raise SystemExit(3)")
