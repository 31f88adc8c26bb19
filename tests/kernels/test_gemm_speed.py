"""Our GEMM points run at NumPy's own matmul speed for the same shape (a gross gap, such as
a product timed at a sixth of matmul's rate, fails; the machine's noise does not)."""

import statistics
import time

import numpy as np
import pytest

from explorer.kernels.cases import Case
from explorer.kernels.suites import gemm
from explorer.kernels.timing import TimingPlan, measure


@pytest.mark.slow
def test_gemm_points_match_numpy_matmul_of_the_same_shape(numpy_backend):
    plan = TimingPlan(warmup=1, min_regions=3, max_regions=3, target_s=0.05)
    for case in gemm.cases(numpy_backend, "quick"):
        if not isinstance(case, Case) or case.dtype != "fp64":
            continue
        prepared = case.prepare()
        m, n, k = case.size["m"], case.size["n"], case.size["k"]
        a, b = np.random.rand(m, k), np.random.rand(k, n)
        ratios = []
        for _ in range(5):  # interleaved: the machine's drifts hit both alike
            ours = measure(prepared.launch, numpy_backend.timer, plan).median_s
            start = time.perf_counter()
            a @ b
            ratios.append((time.perf_counter() - start) / ours)
        assert prepared.check() is None
        assert statistics.median(ratios) > 0.5, (case.label, ratios)
