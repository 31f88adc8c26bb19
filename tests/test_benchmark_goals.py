"""docs/benchmarks.md's performance goals, each measured by its own benchmark script with a few
rounds, failing only on a gross regression: a ratio twice as far as its goal. Ratios of
two programs run side by side, never wall times; a run where other programs kept the
machine busy (fewer than three clean rounds, as ``bench`` reads the load) is skipped, not
judged. The drag goal (p99 and the first move within one frame) is a time, not a ratio:
its mechanisms are tested where they live (tests/ui), its figure printed by
``benchmarks/drag_latency.py``."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
try:
    import app_responsiveness
    import chart_build
    import common
    import cpu_triad_vs_c
    import gemm_vs_matmul
finally:
    sys.path.pop(0)

pytestmark = pytest.mark.slow


def judged(ratio: common.Ratio) -> float:
    """The median of a ratio measured on a quiet enough machine (a skip otherwise)."""
    if ratio.foreign_cores is not None and ratio.clean < common.MIN_CLEAN:
        pytest.skip(f"other programs kept the machine busy ({common.describe('', ratio).strip()}): "
                    "not judged")
    return ratio.median


def test_start_up_is_within_twice_a_bare_pyqtgraph_window():
    """Goal: ≤ 1.0× a bare pyqtgraph window to the first painted frame, each process timed
    from its spawn (the in-process clock, read alongside, starts at the interpreter's first
    line)."""
    startup = app_responsiveness.startup_ratios(rounds=5)
    assert not startup.cupy  # CuPy is not imported before the first paint
    assert judged(startup.to_graph) <= 2.0
    # The interpreter's own start is in every whole-process time, not in the in-process one.
    assert startup.to_bare.median < startup.to_bare_in_process.median


def test_the_cpu_triad_is_within_twice_its_goal_of_a_c_triad():
    """Goal: ≥ 0.85 of a C/OpenMP triad on every core (C's time over ours)."""
    ratio = cpu_triad_vs_c.ours_over_c(rounds=5)
    if isinstance(ratio, str):
        pytest.skip(ratio)  # no C compiler here
    assert judged(ratio) >= 0.85 / 2


def test_a_gemm_point_is_within_twice_its_goal_of_matmul():
    """Goal: 0.9–1.1 of ``A @ B`` of the same shape (its time over ours)."""
    backend = gemm_vs_matmul.NumpyBackend()
    case = gemm_vs_matmul.quick_cases(backend)[0]
    ratio = judged(gemm_vs_matmul.case_ratio(backend, case, rounds=5))
    assert 0.9 / 2 <= ratio <= 1.1 * 2


def test_four_devices_cost_within_twice_their_goal():
    """Goal: four devices ≤ 2× one, the same geometry again (a change of batch, a star
    drag): 2.0–2.5× on this machine, so a regression to twice the goal fails."""
    assert judged(chart_build.four_over_one(rounds=5, repeats=10)) <= 2 * chart_build.GOAL
