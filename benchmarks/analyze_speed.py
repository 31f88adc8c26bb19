"""How long a full recompute takes: the chart will redo this on every drag.

Times, in one process, (a) analysing one llama-3-70b decode step on an H100 (per-op times,
bound, totals), (b) a 12-point batch sweep of the same workload, (c) both together, and
(d) expanding the per-layer op table (needed for tables and JSON, not for a drag).
Each case is timed twice: with new inputs (every cache of the analysis emptied before each
repeat: a change of model, parameters or batch) and with the same inputs again (the ops'
costing cached, as on every frame of a bandwidth or compute drag). Reports the median and
the 20th/80th percentiles, and the median as a fraction of a 16.7 ms frame (60 Hz).
Absolute times depend on this machine; the fraction is the goal: well under 0.1 of a
frame. Then (e) the layout search (``roofline-explorer layouts``, the window's Parallel
layouts view) of Llama 3.1 405B training on 1,024 H100s: every split, ZeRO stage and
recomputation costed with its expected time, per candidate, from empty caches.

    python benchmarks/analyze_speed.py [--repeats 300] [--search-repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from explorer.core.analysis.analysis import analyze
from explorer.core.analysis.sweep import batch_sweep
from explorer.core.hardware.catalog import load_catalog
from explorer.core.model.applicability import Phase
from explorer.core.model.presets import load_models
from explorer.core.model.workload import WorkloadParams

FRAME_S = 1 / 60
BATCHES = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048]


def clear_caches() -> None:
    """Empty every memo of the app's modules (``functools.lru_cache``): the next call
    works from its inputs, as after a change of model, parameters or batch."""
    for name, module in list(sys.modules.items()):
        if name.startswith("explorer."):
            for value in vars(module).values():
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()


def measure(fn, repeats: int, fresh: bool) -> np.ndarray:
    """``repeats`` times of ``fn()``; ``fresh``: each from empty caches (emptied untimed)."""
    for _ in range(10):  # warm-up: imports, NumPy dispatch
        fn()
    samples = np.empty(repeats)
    for i in range(repeats):
        if fresh:
            clear_caches()
        start = time.perf_counter_ns()
        fn()
        samples[i] = (time.perf_counter_ns() - start) * 1e-9
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=300)
    parser.add_argument("--search-repeats", type=int, default=5)
    args = parser.parse_args()
    model = load_models()["llama-3-70b"]
    hardware = load_catalog()["h100-sxm"]
    params = WorkloadParams(phase=Phase.DECODE, batch=1, context=4096)

    cases = {
        "analyze (80 layers, 17 op kinds)": lambda: analyze(model, params, hardware),
        "batch sweep (12 batches)": lambda: batch_sweep(model, params, hardware, BATCHES),
        "analyze + sweep": lambda: (analyze(model, params, hardware),
                                    batch_sweep(model, params, hardware, BATCHES)),
        "analyze + every-layer op table (1123 rows)": lambda: analyze(model, params, hardware).rows,
    }
    print(f"llama-3-70b decode on h100-sxm, {args.repeats} repeats each")
    for fresh, inputs in ((True, "new inputs (caches emptied)"), (False, "the same inputs (a drag)")):
        print(f"{inputs:44s} {'median':>10s} {'p20':>10s} {'p80':>10s} {'of a frame':>11s}")
        for name, fn in cases.items():
            s = measure(fn, args.repeats, fresh)
            median = statistics.median(s)
            p20, p80 = np.percentile(s, [20, 80])
            print(f"  {name:42s} {median * 1e3:8.3f} ms {p20 * 1e3:8.3f} ms {p80 * 1e3:8.3f} ms "
                  f"{median / FRAME_S:10.3f}")
    search(args.search_repeats)


def search(repeats: int) -> None:
    """The layout search's time, whole and per candidate."""
    from explorer.core.analysis.layouts import layouts

    model = load_models()["llama-3.1-405b"]
    hardware = load_catalog()["h100-sxm"]
    params = WorkloadParams(phase=Phase.TRAIN, batch=1024, seq=8192, causal=True)
    found = layouts(model, hardware, 1024, params)
    times = []
    for _ in range(repeats):
        clear_caches()
        start = time.perf_counter()
        layouts(model, hardware, 1024, params)
        times.append(time.perf_counter() - start)
    median = statistics.median(times)
    print(f"layout search, llama-3.1-405b training on 1,024 h100-sxm: {len(found)} candidates in "
          f"{median * 1e3:.0f} ms (median of {repeats}; min {min(times) * 1e3:.0f}, "
          f"max {max(times) * 1e3:.0f}; caches emptied before each), {median / len(found) * 1e3:.2f} ms "
          "a candidate")


if __name__ == "__main__":
    from common import watched  # (run as a script: benchmarks/ is on the path)

    with watched():
        main()
