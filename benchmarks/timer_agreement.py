"""Our reported kernel times against independent timers of the same calls.

CPU: ``explorer.kernels.timing.measure`` (median of regions) versus ``timeit.repeat``
(best-practice median of repeats, each long enough). GPU, where CuPy and a device exist:
versus ``cupyx.profiler.benchmark`` (CUDA-event GPU times). Goal: ratios 1.00 ± 0.05.

    python benchmarks/timer_agreement.py
"""

from __future__ import annotations

import argparse
import statistics
import sys
import timeit

from explorer.kernels import gpuinfo
from explorer.kernels.backends import CupyBackend, NumpyBackend
from explorer.kernels.cases import Case
from explorer.kernels.suites import plan
from explorer.kernels.timing import TimingPlan, measure

KERNELS = {("stream", "triad"), ("gemm", "square"), ("memory-bound-ops", "softmax"),
           ("decode-batch", "linear")}
PLAN = TimingPlan(warmup=3, min_regions=15, max_regions=40, target_s=0.5)
PRESET = "quick"  # the sizes of the cases compared (the tests take the smoke preset's)


def chosen_cases(backend):
    out = []
    for case in plan(backend, [PRESET], PRESET):
        if isinstance(case, Case) and (case.suite, case.kernel) in KERNELS and case.dtype != "tf32":
            if case.suite == "decode-batch" and case.param["batch"] != 1:
                continue
            out.append(case)
    return out


def timeit_reference(launch, ours_s: float) -> float:
    number = max(1, int(1e-3 / ours_s) + 1)
    return statistics.median(timeit.repeat(launch, number=number, repeat=15)) / number


def cupyx_reference(launch) -> float:
    from cupyx.profiler import benchmark

    result = benchmark(launch, n_repeat=30, n_warmup=3)
    return float(statistics.median(result.gpu_times[0]))


def report(backend, reference, name: str, rounds: int = 7) -> list[float]:
    """Per kernel: the median over interleaved rounds of ours / reference."""
    ratios = []
    print(f"{backend.label}: ours / {name}, median of {rounds} interleaved rounds")
    for case in chosen_cases(backend):
        prepared = case.prepare()
        try:
            pairs = []
            for _ in range(rounds):
                ours = measure(prepared.launch, backend.timer, PLAN).median_s
                pairs.append((ours, reference(prepared.launch, ours)))
            assert prepared.check() is None, case.label
        finally:
            prepared.close()
            backend.release()
        per_round = [o / r for o, r in pairs]
        ratio = statistics.median(per_round)
        ratios.append(ratio)
        verdict = "ok" if abs(ratio - 1) <= 0.05 else "OUTSIDE 1.00 ± 0.05"
        print(f"  {case.label:45s} ours {statistics.median(o for o, _ in pairs) * 1e3:9.4f} ms  "
              f"ratio {ratio:5.3f} (rounds {min(per_round):.3f}–{max(per_round):.3f})  {verdict}")
    return ratios


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpu-only", action="store_true", help="skip the CPU comparison")
    args = parser.parse_args(argv)
    if not args.gpu_only:
        ratios = report(NumpyBackend(), timeit_reference, "timeit")
        print(f"CPU median ratio {statistics.median(ratios):.3f} (goal 1.00 ± 0.05)")
    info = gpuinfo.detect_gpu(0)
    if isinstance(info, gpuinfo.Unavailable):
        print(f"GPU comparison skipped: {info.reason}")
        return 0
    gpu = CupyBackend(0)
    gpu.warm_up()
    ratios = report(gpu, lambda launch, ours: cupyx_reference(launch), "cupyx.profiler.benchmark")
    print(f"GPU median ratio {statistics.median(ratios):.3f} (goal 1.00 ± 0.05)")
    return 0


if __name__ == "__main__":
    from common import watched  # (run as a script: benchmarks/ is on the path)

    with watched():
        code = main()
    sys.exit(code)
