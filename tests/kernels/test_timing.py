"""Timing: statistics, region sizing and cancel, with a deterministic fake timer."""

import pytest

from explorer.kernels.timing import Cancelled, CancelToken, CpuTimer, Timing, TimingPlan, measure


class FakeTimer:
    method = "fake"

    def __init__(self, seconds_per_launch):
        self.seconds = seconds_per_launch
        self.regions = []

    def region(self, kernel, inner):
        for _ in range(inner):
            kernel()
        self.regions.append(inner)
        return self.seconds


def test_timing_statistics():
    t = Timing.from_samples([1.0, 2.0, 3.0, 4.0, 5.0], inner=3)
    assert (t.median_s, t.regions, t.launches_per_region) == (3.0, 5, 3)
    assert t.p20_s == pytest.approx(1.8) and t.p80_s == pytest.approx(4.2)
    assert t.spread == pytest.approx((4.2 - 1.8) / 3.0)


def test_short_launches_are_grouped_into_long_enough_regions():
    timer = FakeTimer(10e-6)  # 10 µs per launch: 100 launches make a 1 ms region
    launches = []
    plan = TimingPlan(warmup=2, min_regions=5, max_regions=50, min_region_s=1e-3, target_s=0.01)
    result = measure(lambda: launches.append(1), timer, plan)
    assert timer.regions[0] == 1  # the probe
    assert set(timer.regions[1:]) == {100}
    assert result.launches_per_region == 100
    assert result.regions == 10  # 0.01 s target at 1 ms per region
    assert len(launches) == 2 + 1 + 100 * 10


def test_long_launches_are_timed_one_by_one_and_capped():
    timer = FakeTimer(0.5)
    plan = TimingPlan(warmup=1, min_regions=3, max_regions=4, target_s=100.0)
    result = measure(lambda: None, timer, plan)
    assert result.launches_per_region == 1 and result.regions == 4


def test_cancel_between_launches():
    token = CancelToken()
    count = []

    def kernel():
        count.append(1)
        if len(count) == 5:
            token.cancel()

    with pytest.raises(Cancelled):
        measure(kernel, FakeTimer(1.0), TimingPlan(warmup=2, min_regions=10, max_regions=10), token)
    assert len(count) == 5  # stopped at the first check after the cancel


def test_cpu_timer_measures_real_time():
    import time

    seconds = CpuTimer().region(lambda: time.sleep(0.002), 3)
    assert 0.0019 < seconds < 0.05
