"""What a fourth device costs the chart: building its description (roofs, labels placed,
key) with one to four devices overlaid, llama-3-70b decode at TP 8 on H100, A100, MI300X
and H200, the chart area of a 1366×768 window.

Rounds interleave the four counts so a drift of this noisy machine hits them alike; each
round builds every chart ``--repeats`` times (more where a round would be too short to
read the foreign load over) from its analysis (cached, as in the window: only the chart
is rebuilt), first for the same page and ranges again (as a change of batch or a star
drag redraws it: each roof's lines, its label places and what the lines leave of each
place are kept), then for a new geometry (the chart's own caches emptied before each
build, untimed; the text widths kept). Prints the median and p20–p80 per count and each
count's ratio to one device's, with the clean rounds (no foreign load) it was taken
over. Goal: cost linear in roofs and labels, four devices ≤ 2× one.

    python benchmarks/chart_build.py [--rounds 9] [--repeats 20]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from functools import partial

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
from common import Ratio, Rounds, describe, interleaved

from explorer.chart.elements import Page
from explorer.chart.model import build_chart
from explorer.core.hardware.catalog import load_catalog
from explorer.core.model.presets import load_models
from explorer.core.model.session import Session
from explorer.core.model.workload import WorkloadParams
from explorer.document import Document
from explorer.kernels.load import MIN_WINDOW_S

DEVICES = ("h100-sxm", "a100-80gb-sxm", "mi300x", "h200-sxm")
PAGE = Page.screen(1000, 640)  # the chart's part of a 1366×768 window
GOAL = 2.0
MIN_ROUND_S = 2 * MIN_WINDOW_S


def documents() -> dict[int, Document]:
    catalog, models = load_catalog(), load_models()
    return {n: Document(catalog, models, Session(model="llama-3-70b", hardware=DEVICES[:n],
                                                 params=WorkloadParams(tp=8)))
            for n in range(1, len(DEVICES) + 1)}


def forget_geometry() -> None:
    """Empty the chart's own memos (roof lines and their label places, axes, key rows),
    as a new page or new ranges would; the text widths (fonts measured) are kept."""
    for name, module in list(sys.modules.items()):
        if name.startswith("explorer.chart.") and name != "explorer.chart.text":
            for value in vars(module).values():
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()


def measure(rounds: int, repeats: int, fresh: bool = False) -> Rounds:
    """Seconds per build (the median of ``repeats``), one per round, by device count, in
    interleaved rounds whose foreign load is read; ``fresh``: each build for a new
    geometry (``forget_geometry`` first, untimed)."""
    docs = documents()
    for doc in docs.values():
        build_chart(doc, PAGE)  # analyses, sweeps and text widths cached

    def builds(doc: Document) -> float:
        times: list[float] = []
        while len(times) < repeats or sum(times) < MIN_ROUND_S / len(docs):  # a round long enough to
            # read the foreign load over it (``MIN_WINDOW_S``)
            if fresh:
                forget_geometry()
            start = time.perf_counter()
            build_chart(doc, PAGE)
            times.append(time.perf_counter() - start)
        return statistics.median(times)

    return interleaved({str(n): partial(builds, doc) for n, doc in docs.items()}, rounds)


def four_over_one(rounds: int = 9, repeats: int = 20) -> Ratio:
    """Building with four devices over building with one."""
    return measure(rounds, repeats).ratio(str(len(DEVICES)), "1")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args(argv)
    print(f"chart build, llama-3-70b TP 8, {args.rounds} interleaved rounds of {args.repeats}")
    for fresh, what in ((False, "the same geometry again"), (True, "a new geometry")):
        measured = measure(args.rounds, args.repeats, fresh)
        print(f"{what}:")
        for n, values in measured.times.items():
            p20, p80 = np.percentile(values, [20, 80])
            print(f"  {n} device{'s' if n != '1' else ' '}: median {statistics.median(values) * 1e3:6.2f} ms "
                  f"(p20 {p20 * 1e3:6.2f}, p80 {p80 * 1e3:6.2f}; every round)")
        for n in list(measured.times)[1:]:
            goal = f"goal <= {GOAL:g}" if n == str(len(DEVICES)) else "(context)"
            print(describe(f"  {n} devices ÷ 1 device", measured.ratio(n, "1"), goal))
    return 0


if __name__ == "__main__":
    from common import watched

    with watched():
        code = main()
    raise SystemExit(code)
