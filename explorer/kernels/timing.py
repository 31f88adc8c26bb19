"""Timing a kernel honestly: warm-up, enough repeats, median and spread.

A kernel is a callable that launches the work once. ``Timer`` implementations
measure one *timed region* of ``inner`` launches and return seconds per launch;
``measure`` repeats regions and summarises them. Launches too short to time
alone are grouped so each region lasts at least ``min_region_s`` (launch
overhead from Python is 10–50 µs on a GPU and a few µs on a CPU): one calibrating
launch picks N = ⌈min_region_s / its time⌉, at most ``max_launches``, and every
region then times N launches between one pair of marks (CUDA events on a GPU) and
divides by N. A case's FLOPs and bytes stay those of one launch; the point states N
as its ``launches_per_timing`` param (``with_launches``).

N launches in one window hide the gaps between launches only while the device runs
a launch for longer than Python takes to issue it; a launch made of many small calls
that the device finishes sooner still times Python.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

LAUNCHES_PARAM = "launches_per_timing"  # a point's param: launches between one pair of marks


class Cancelled(Exception):
    """The user cancelled a run; raised between launches."""


class CancelToken:
    """Set from any thread; checked by the run between kernel launches."""

    def __init__(self) -> None:
        self._cancelled = False

    def cancel(self) -> None:
        self._cancelled = True

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def check(self) -> None:
        if self._cancelled:
            raise Cancelled


@dataclass(frozen=True)
class Timing:
    """Seconds per launch: median with the 20th and 80th percentiles of the regions."""

    median_s: float
    p20_s: float
    p80_s: float
    regions: int
    launches_per_region: int

    @classmethod
    def from_samples(cls, samples: list[float] | np.ndarray, inner: int) -> Timing:
        data = np.asarray(samples, dtype=float)
        p20, median, p80 = np.percentile(data, [20, 50, 80])
        return cls(float(median), float(p20), float(p80), int(data.size), inner)

    def with_launches(self, param: dict[str, int]) -> dict[str, int]:
        """A case's param with the launches timed per region added (``LAUNCHES_PARAM``), as a
        point states it: its time is per launch, its FLOPs and bytes those of one launch."""
        return {**param, LAUNCHES_PARAM: self.launches_per_region}

    @property
    def spread(self) -> float:
        """(p80 − p20) / median: the relative width of the middle of the distribution."""
        return (self.p80_s - self.p20_s) / self.median_s


class Timer(Protocol):
    method: str

    def region(self, kernel: Callable[[], object], inner: int) -> float:
        """Seconds per launch over one region of ``inner`` launches."""


class CpuTimer:
    """Wall-clock regions with ``time.perf_counter_ns``."""

    method = "time.perf_counter_ns around each region, NumPy calls are synchronous"

    def region(self, kernel: Callable[[], object], inner: int) -> float:
        start = time.perf_counter_ns()
        for _ in range(inner):
            kernel()
        return (time.perf_counter_ns() - start) * 1e-9 / inner


@dataclass(frozen=True)
class TimingPlan:
    warmup: int = 2
    min_regions: int = 5
    max_regions: int = 30
    min_region_s: float = 1e-3
    target_s: float = 0.3  # total timed time per kernel before stopping early
    max_launches: int = 1000  # launches per region at most (a probe that reads ~0 s asks for millions)


def measure(kernel: Callable[[], object], timer: Timer, plan: TimingPlan,
            cancel: CancelToken | None = None) -> Timing:
    """Warm up, pick the launches per region, then time regions until the plan is met."""
    cancel = cancel or CancelToken()
    for _ in range(plan.warmup):
        cancel.check()
        kernel()
    # One probe region (a single calibrating launch) decides how many launches make a region
    # long enough.
    cancel.check()
    probe = timer.region(kernel, 1)
    inner = launches_per_region(probe, plan)
    samples: list[float] = []
    spent = 0.0
    while len(samples) < plan.max_regions:
        cancel.check()
        seconds = timer.region(kernel, inner)
        samples.append(seconds)
        spent += seconds * inner
        if len(samples) >= plan.min_regions and spent >= plan.target_s:
            break
    return Timing.from_samples(samples, inner)


def launches_per_region(probe_s: float, plan: TimingPlan) -> int:
    """Launches that make one region last ``plan.min_region_s``, from one launch's time:
    at least 1, at most ``plan.max_launches``."""
    wanted = int(np.ceil(plan.min_region_s / max(probe_s, 1e-9)))
    return max(1, min(plan.max_launches, wanted))
