"""Shared by the benchmark scripts: interleaved rounds, the foreign load of each, and a
median-and-spread summary.

Ratios are measured side by side in one process, alternating ours and the reference
round by round so slow drifts of this noisy machine hit both alike. Each round's foreign
load (other programs' CPU time, as ``bench`` reads it: ``explorer.kernels.load``) is read;
the median and spread are of the clean rounds (no more than ``CPU_THRESHOLD_CORES`` of
other programs' work), and of every round, said so, when fewer than three are clean.
"""

from __future__ import annotations

import compileall
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any, NamedTuple

import numpy as np

from explorer.kernels.load import CPU_THRESHOLD_CORES, ProcStatLoad

MIN_CLEAN = 3


class Ratio(NamedTuple):
    median: float
    p20: float
    p80: float
    ratios: list[float]  # every round's, clean or not
    clean: int  # rounds with no foreign load (all of them where it cannot be read)
    rounds: int
    foreign_cores: float | None  # the most other programs used in a round (None: not read)

    @property
    def note(self) -> str:
        if self.foreign_cores is None:
            return f"{self.rounds} rounds, foreign load not read"
        kept = "all rounds: too few clean" if self.clean < MIN_CLEAN else "clean rounds"
        return (f"{self.clean}/{self.rounds} clean, foreign ≤ {self.foreign_cores:.2f} cores; "
                f"median of {kept}")


class Rounds(NamedTuple):
    times: dict[str, list[float]]  # seconds of each run, round by round
    busy: list[bool | None]  # each round's foreign load past the threshold (None: not read)
    loads: list[float]  # each round's foreign load, in cores, where it was read

    def ratio(self, numerator: str, denominator: str) -> Ratio:
        """``numerator``'s time over ``denominator``'s, round by round: the median and
        20th–80th percentiles of the clean rounds (of all of them when too few are clean)."""
        ratios = [n / d for n, d in zip(self.times[numerator], self.times[denominator], strict=True)]
        clean = [r for r, busy in zip(ratios, self.busy, strict=True) if not busy]
        kept = clean if len(clean) >= MIN_CLEAN else ratios
        p20, p80 = np.percentile(kept, [20, 80])
        return Ratio(statistics.median(kept), float(p20), float(p80), ratios, len(clean), len(ratios),
                     max(self.loads) if self.loads else None)


def compile_app() -> None:
    """Byte-compile the app, as an installed one runs, every module afresh. ``compileall``
    without ``force`` keeps a module's cached code when it was written in the same second
    as the source's last change, even if the source changed after it; the import system,
    which also compares sizes, then compiles that module again at every start that writes
    no bytecode (PYTHONDONTWRITEBYTECODE), and a start-up benchmark would time it."""
    compileall.compile_dir(os.path.join(os.path.dirname(__file__), "..", "explorer"), quiet=1, force=True)


def child_env(**values: str) -> dict[str, str]:
    """The environment for a start-up's fresh interpreter, with ``values``: this one's,
    less what a window built here sets for itself (``fills_on_the_gui_thread``), so that the
    reference windows run with Qt's defaults and ours sets its own."""
    env = {name: value for name, value in os.environ.items() if name != "QT_NO_GUI_THREADPOOL"}
    return {**env, **values}


def interleaved(runs: dict[str, Callable[[], float]], rounds: int) -> Rounds:
    """Each run (a callable returning seconds) once a round, in the order given in even
    rounds and the reverse in odd ones, so a drift of the machine hits them alike; each
    round's foreign load read around it."""
    source = ProcStatLoad() if ProcStatLoad.available() else None
    times: dict[str, list[float]] = {name: [] for name in runs}
    busy, loads = [], []
    for i in range(rounds):
        token = source.start() if source else None
        for name in (reversed(list(runs)) if i % 2 else runs):
            times[name].append(runs[name]())
        foreign = source.stop(token) if source else None
        busy.append(None if foreign is None else foreign.busy)
        if foreign is not None:
            loads.append(foreign.cores)
    return Rounds(times, busy, loads)


def interleaved_ratio(ours: Callable[[], float], reference: Callable[[], float],
                      rounds: int = 15) -> Ratio:
    """reference_time / our_time over alternating rounds (each callable returns seconds per
    launch), the median and 20th–80th percentiles of the clean rounds. Above 1: ours is
    faster."""
    return interleaved({"ours": ours, "reference": reference}, rounds).ratio("reference", "ours")


IN_PROCESS = " in-process"  # the name of a start-up's in-process times in ``Rounds.times``

# A start-up's first painted frame is stamped on the system's monotonic clock, which every
# process on the machine reads alike (on Linux, CLOCK_MONOTONIC), so that the parent can time
# the child from the moment it spawned it. The child prints its in-process time, then this.
STAMP = "print(time.clock_gettime(time.CLOCK_MONOTONIC))"


def start_up(code: str, **run: Any) -> tuple[float, float, list[str]]:
    """Run ``code`` (which prints its in-process seconds, then ``STAMP``'s reading, then
    anything) in a fresh interpreter: (seconds from the spawn to the stamp, the in-process
    seconds, the rest of what it printed). ``run``: ``subprocess.run``'s arguments."""
    spawned = time.clock_gettime(time.CLOCK_MONOTONIC)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, **run)
    printed = done.stdout.split()
    if done.returncode != 0 or len(printed) < 2:
        raise RuntimeError(f"the start-up printed no time (exit {done.returncode}):\n{done.stderr[-2000:]}")
    return float(printed[1]) - spawned, float(printed[0]), printed[2:]


def two_clocks(runs: dict[str, Callable[[], tuple[float, float]]], rounds: int) -> Rounds:
    """``interleaved`` for runs that each return (whole-process, in-process) seconds: the
    whole-process times under each run's name, the in-process ones under its name and
    ``IN_PROCESS``, read in the same rounds."""
    inner: dict[str, list[float]] = {f"{name}{IN_PROCESS}": [] for name in runs}

    def whole(name: str) -> Callable[[], float]:
        def timed() -> float:
            outer, in_process = runs[name]()
            inner[f"{name}{IN_PROCESS}"].append(in_process)
            return outer
        return timed

    measured = interleaved({name: whole(name) for name in runs}, rounds)
    return Rounds({**measured.times, **inner}, measured.busy, measured.loads)


@contextmanager
def watched():
    """Around a whole benchmark: on leaving, print how busy other programs kept the machine
    meanwhile (the same reading as a round's), and whether its figures may be published."""
    source = ProcStatLoad() if ProcStatLoad.available() else None
    token = source.start() if source else None
    try:
        yield
    finally:
        foreign = source.stop(token) if source else None
        if foreign is None:
            print("foreign load: not read here (no /proc, or the run was too short)")
        else:
            verdict = "busy: these figures are not for publishing" if foreign.busy else "quiet"
            print(f"foreign load over the run: {foreign.cores:.2f} cores ({verdict})")


def describe(name: str, r: Ratio, goal: str = "") -> str:
    return f"{name:40s} median {r.median:6.3f}  (p20 {r.p20:6.3f}, p80 {r.p80:6.3f}; {r.note})  {goal}"


__all__ = ["CPU_THRESHOLD_CORES", "IN_PROCESS", "STAMP", "Ratio", "Rounds", "describe", "interleaved",
           "interleaved_ratio", "start_up", "two_clocks", "watched"]
