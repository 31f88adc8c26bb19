"""Our GEMM points against NumPy's own ``matmul`` of the same shape and dtype, side by side.

Each quick-preset CPU product (square and skinny, fp64 and fp32) is prepared as the kernel
lab prepares it and timed with its timer, alternating round by round with ``A @ B`` on
fresh arrays of the same shape timed with ``time.perf_counter``; a STREAM run on every
core comes first, as in ``bench --suite quick`` (its threads must not slow BLAS down).
Goal: every ratio within 0.9–1.1.

    python benchmarks/gemm_vs_matmul.py [--rounds 9]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np
from common import Ratio, describe, interleaved_ratio, watched

from explorer.kernels.backends import NumpyBackend
from explorer.kernels.cases import Case, Preset
from explorer.kernels.runner import drive, run
from explorer.kernels.suites import gemm
from explorer.kernels.timing import TimingPlan, measure

PLAN = TimingPlan(warmup=1, min_regions=3, max_regions=5, target_s=0.2)


def case_ratio(backend: NumpyBackend, case: Case, rounds: int) -> Ratio:
    """``A @ B``'s time over our GEMM point's, same shape and dtype, interleaved."""
    prepared = case.prepare()
    m, n, k = case.size["m"], case.size["n"], case.size["k"]
    dtype = np.dtype(np.float64 if case.dtype == "fp64" else np.float32)
    a, b = np.random.rand(m, k).astype(dtype), np.random.rand(k, n).astype(dtype)

    def ours() -> float:
        return measure(prepared.launch, backend.timer, PLAN).median_s

    def matmul() -> float:
        times = []
        for _ in range(3):
            start = time.perf_counter()
            a @ b
            times.append(time.perf_counter() - start)
        return statistics.median(times)

    prepared.launch()
    assert prepared.check() is None  # the product is right before its speed counts
    return interleaved_ratio(ours, matmul, rounds)


def quick_cases(backend: NumpyBackend) -> list[Case]:
    """The quick preset's CPU products, after a STREAM run on every core (the thread pools a
    real run leaves behind: they must not slow BLAS down)."""
    drive(run(backend, ["stream", "quick"]))
    return [case for case in gemm.cases(backend, Preset.QUICK) if isinstance(case, Case)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    backend = NumpyBackend()
    cases = quick_cases(backend)
    print(f"NumPy {np.__version__}, {backend.cpu.blas}, {backend.cpu.threads} threads")
    worst = []
    for case in cases:
        ratio = case_ratio(backend, case, args.rounds)
        worst.append(ratio.median)
        m, n, k = case.size["m"], case.size["n"], case.size["k"]
        print(describe(f"{case.kernel} {case.dtype} {m}×{n}×{k}", ratio, "goal 0.9–1.1"))
    print(f"ratios (matmul time / ours): min {min(worst):.2f}, max {max(worst):.2f}")
    return 0


if __name__ == "__main__":
    with watched():
        code = main()
    sys.exit(code)
