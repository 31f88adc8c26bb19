"""Shared by the benchmark scripts: interleaved rounds and a median-and-spread summary.

Ratios are measured side by side in one process, alternating ours and the reference
round by round so slow drifts of this noisy machine hit both alike.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable

import numpy as np


def interleaved_ratio(ours: Callable[[], float], reference: Callable[[], float],
                      rounds: int = 15) -> tuple[float, float, float, list[float]]:
    """Median, 20th and 80th percentile of reference_time / our_time over alternating rounds
    (each callable returns seconds per launch). Above 1: ours is faster."""
    ratios = []
    for i in range(rounds):
        if i % 2:
            r = reference()
            o = ours()
        else:
            o = ours()
            r = reference()
        ratios.append(r / o)
    p20, p80 = np.percentile(ratios, [20, 80])
    return statistics.median(ratios), float(p20), float(p80), ratios


def describe(name: str, median: float, p20: float, p80: float, goal: str = "") -> str:
    return f"{name:40s} median {median:6.3f}  (p20 {p20:6.3f}, p80 {p80:6.3f})  {goal}"
