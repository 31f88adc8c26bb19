"""Roofline math: hand-computed cases and properties that must hold for any input."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from explorer.core.analysis import roofline

positive = st.floats(min_value=1e-6, max_value=1e18, allow_nan=False, allow_infinity=False)


def test_attainable_hand_computed():
    # H100 bf16: 989.4 TFLOP/s, 3.35 TB/s. At 1 FLOP/byte only 3.35 TFLOP/s are attainable.
    assert roofline.attainable(1.0, 989.4e12, 3.35e12) == pytest.approx(3.35e12)
    assert roofline.attainable(1000.0, 989.4e12, 3.35e12) == pytest.approx(989.4e12)
    assert roofline.ridge_point(989.4e12, 3.35e12) == pytest.approx(295.34, rel=1e-4)


def test_vectorised_over_thousands_of_points_in_one_call():
    intensity = np.logspace(-2, 4, 5000)
    result = roofline.attainable(intensity, 989.4e12, 3.35e12)
    assert result.shape == (5000,)
    assert np.all(np.diff(result) >= 0)
    # Broadcasting over devices: (points, 1) × (devices,)
    grid = roofline.attainable(intensity[:, None], [312e12, 989.4e12], [2.039e12, 3.35e12])
    assert grid.shape == (5000, 2)


def test_predicted_time_and_bound_hand_computed():
    # A 4096×4096 bf16 GEMV: 33.5 MFLOP, 33.6 MB on an H100.
    flops, moved = 2 * 4096 * 4096, (4096 + 4096 * 4096 + 4096) * 2
    time = roofline.predicted_time(flops, moved, 989.4e12, 3.35e12)
    assert time == pytest.approx(moved / 3.35e12)  # ≈ 10.0 µs, memory-bound
    assert roofline.is_memory_bound(flops, moved, 989.4e12, 3.35e12)
    assert list(roofline.bound_labels([True, False])) == ["memory", "compute"]


@given(intensity=positive, peak=positive, bandwidth=positive)
def test_attainable_is_under_both_roofs(intensity, peak, bandwidth):
    value = float(roofline.attainable(intensity, peak, bandwidth))
    assert value <= peak * (1 + 1e-12)
    assert value <= intensity * bandwidth * (1 + 1e-12)
    assert value == pytest.approx(min(peak, intensity * bandwidth))


@given(flops=positive, moved=positive, peak=positive, bandwidth=positive)
def test_time_is_at_least_both_bounds(flops, moved, peak, bandwidth):
    time = float(roofline.predicted_time(flops, moved, peak, bandwidth))
    assert time >= flops / peak * (1 - 1e-12)
    assert time >= moved / bandwidth * (1 - 1e-12)
    # The bound names the larger of the two times, and agrees with the ridge point.
    memory_bound = bool(roofline.is_memory_bound(flops, moved, peak, bandwidth))
    assert memory_bound == (moved / bandwidth > flops / peak)
    intensity = flops / moved
    ridge = float(roofline.ridge_point(peak, bandwidth))
    if abs(intensity / ridge - 1) > 1e-9:
        assert memory_bound == (intensity < ridge)


@given(flops=positive, moved=positive, peak=positive, bandwidth=positive)
def test_performance_at_predicted_time_is_attainable(flops, moved, peak, bandwidth):
    time = float(roofline.predicted_time(flops, moved, peak, bandwidth))
    attainable = float(roofline.attainable(flops / moved, peak, bandwidth))
    assert flops / time == pytest.approx(attainable, rel=1e-9)


def test_ceilings_from_hardware(catalog):
    ceilings = roofline.Ceilings.from_hardware(catalog["h100-sxm"], precisions=("bf16", "fp32"))
    assert [r.label for r in ceilings.compute] == ["bf16 matrix", "fp32 vector"]
    assert ceilings.bandwidth[0].label == "HBM3"
    ridges = ceilings.ridges()
    assert ridges.shape == (2, 1)
    assert ridges[0, 0] == pytest.approx(989.4e12 / 3.35e12)
    assert ceilings.attainable(10.0) == pytest.approx(33.5e12)


def test_segments_meet_at_the_ridge(catalog):
    ceilings = roofline.Ceilings.from_hardware(catalog["a100-80gb-sxm"], precisions=("fp16",))
    segments = ceilings.segments(0.01, 1e4)
    compute = [s for s in segments if s.kind == "compute"]
    bandwidth = [s for s in segments if s.kind == "bandwidth"]
    top = compute[0]
    assert top.x[0] == pytest.approx(312e12 / 2.039e12)
    assert bandwidth[0].x[1] == pytest.approx(top.x[0])
    assert bandwidth[0].y[1] == pytest.approx(top.y[0])
    with pytest.raises(ValueError):
        ceilings.segments(10, 1)


def test_predicted_time_over_several_memory_levels():
    # A device with a 10 TB/s cache and a 1 TB/s main memory, 100 TFLOP/s.
    ceilings = roofline.Ceilings(
        compute=(roofline.Roof("fp16 matrix", 100e12),),
        bandwidth=(roofline.Roof("HBM", 1e12), roofline.Roof("L2", 10e12)),
    )
    flops = np.array([1e9, 1e12, 1e9])
    moved = np.array([[1e9, 1e9],  # 1 ms from HBM
                      [1e6, 1e6],  # 10 ms of arithmetic
                      [1e6, 1e11]])  # 10 ms through the cache
    np.testing.assert_allclose(ceilings.predicted_time(flops, moved), [1e-3, 1e-2, 1e-2])
    assert list(ceilings.limiting_roof(flops, moved)) == ["HBM", "fp16 matrix", "L2"]
    with pytest.raises(ValueError, match="one per bandwidth roof"):
        ceilings.predicted_time(flops, moved[:, :1])


@given(flops=positive, hbm=positive, l2=positive)
def test_several_levels_never_beat_any_single_roof(flops, hbm, l2):
    ceilings = roofline.Ceilings((roofline.Roof("c", 1e14),),
                                 (roofline.Roof("HBM", 3e12), roofline.Roof("L2", 3e13)))
    t = float(ceilings.predicted_time(flops, [hbm, l2]))
    for single in (flops / 1e14, hbm / 3e12, l2 / 3e13):
        assert t >= single * (1 - 1e-12)
