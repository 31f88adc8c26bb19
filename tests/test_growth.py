"""benchmarks/growth.py: a series' growth exponent is the least-squares slope of log(cost)
against log(work), which reads 1 for linear growth and 2 for quadratic."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
try:
    import growth
finally:
    sys.path.pop(0)


def points(pairs):
    return [growth.Point(work, seconds, 1.0) for work, seconds in pairs]


def test_linear_growth_reads_one_and_quadratic_two():
    assert growth.exponent(points([(10, 0.5), (50, 2.5), (250, 12.5)]), "seconds") == pytest.approx(1.0)
    assert growth.exponent(points([(1, 3.0), (2, 12.0), (4, 48.0)]), "seconds") == pytest.approx(2.0)
    assert growth.exponent(points([(8, 0.2), (65536, 0.2)]), "seconds") == pytest.approx(0.0)
    assert growth.exponent(points([(8, 0.2), (65536, 0.2)]), "peak_mb") == pytest.approx(0.0)


def test_the_slope_is_fitted_by_least_squares():
    # log2: x 0, 1, 2; y 0, 2, 2 → slope (−1·−4/3 + 0·2/3 + 1·2/3) / 2 = 1
    fitted = growth.exponent(points([(1, 1.0), (2, 4.0), (4, 4.0)]), "seconds")
    assert fitted == pytest.approx(1.0)


def test_no_exponent_without_two_points_or_with_a_zero():
    assert growth.exponent(points([(10, 1.0)]), "seconds") is None
    assert growth.exponent([growth.Point(1, 1.0, 0.0), growth.Point(2, 2.0, 3.0)], "peak_mb") is None
