"""The GPU suites' plans, checked with a fake GPU backend (no GPU, no CuPy): the L2 sweep is
sized from the device's own L2, and short launches are timed N at a time between one pair
of CUDA events (the real ``CudaEventTimer`` over a fake ``cupy.cuda``), their time and
their FLOPs and bytes per launch."""

import contextlib
import dataclasses
import inspect
from types import SimpleNamespace

import pytest

from explorer.kernels.backends import CudaEventTimer
from explorer.kernels.cases import Case, Prepared, Skip
from explorer.kernels.results import Point, Results
from explorer.kernels.runner import drive, run
from explorer.kernels.suites import attention, cache, cache_gpu
from explorer.kernels.timing import LAUNCHES_PARAM, TimingPlan, launches_per_region, measure

# An L2 size no catalogue entry has (an H200's is 50 MiB): the plan must take the device's.
DEVICE_L2 = 36 << 20


def fake_gpu_backend(l2_bytes=DEVICE_L2, timer=None):
    gpu = SimpleNamespace(name="NVIDIA H200", l2_bytes=l2_bytes, sm_count=132)
    return SimpleNamespace(name="fake", device_kind="gpu", label="fake GPU", gpu=gpu, xp=None,
                           timer=timer, warm_up=lambda: None, release=lambda: None,
                           activate=contextlib.nullcontext, describe=lambda: {"backend": "fake"})


# -- the L2 sweep ---------------------------------------------------------------------------

def test_the_l2_case_is_a_sweep_over_an_eighth_a_quarter_and_half_the_device_l2():
    planned = cache.cases(fake_gpu_backend(), "quick")
    l2 = [c for c in planned if c.kernel == "read L2"]
    assert len(l2) == 3
    assert [c.size["n"] * 4 for c in l2] == [DEVICE_L2 // 8, DEVICE_L2 // 4, DEVICE_L2 // 2]
    assert [c.param["l2_eighths"] for c in l2] == [1, 2, 4]  # each point says its fraction
    assert len({c.label for c in l2}) == 3  # distinguishable in results
    assert all(c.param["level"] == 2 and not c.dram_traffic for c in l2)
    # Every size reads the same bytes per launch (smaller buffers, more passes).
    assert [c.param["passes"] for c in l2] == [256, 128, 64]
    assert {c.bytes for c in l2} == {(DEVICE_L2 // 2) * 64}
    assert all(c.bytes == c.size["n"] * 4 * c.param["passes"] and c.flops == c.bytes // 4 for c in l2)
    assert [c.kernel for c in planned][-1] == "read shared"


def test_the_l2_sizes_follow_the_device_not_a_catalogue():
    for l2_bytes in (40 << 20, 60 << 20):
        l2 = [c for c in cache_gpu.cases(fake_gpu_backend(l2_bytes), "smoke") if c.kernel == "read L2"]
        assert [c.size["n"] * 4 for c in l2] == [l2_bytes // 8, l2_bytes // 4, l2_bytes // 2]
    source = inspect.getsource(cache_gpu)
    assert "catalog" not in source.replace("a catalogue's figure", "")


def test_a_device_without_an_l2_size_skips_the_sweep():
    planned = cache_gpu.cases(fake_gpu_backend(l2_bytes=0), "quick")
    assert isinstance(planned[0], Skip) and "no L2 size" in planned[0].reason
    assert [c.kernel for c in planned[1:]] == ["read shared"]


def test_the_l2_roof_is_the_plateau_of_the_sweep():
    def point(eighths, seconds):
        return Point("cache", "read L2", "fp32", {"n": eighths}, {"level": 2, "l2_eighths": eighths},
                     0, 10**9, seconds, seconds, seconds)

    # Half the L2 spills (slower); the eighth and the quarter make the plateau.
    results = Results({}, "t", "quick", ("cache",),
                      (point(1, 1.05e-4), point(2, 1.0e-4), point(4, 2.0e-4)))
    assert results.cache_bandwidths()[2].value == pytest.approx(1e13)


# -- many launches between one pair of CUDA events ------------------------------------------

class FakeCuda:
    """``cupy.cuda`` with a simulated stream: each kernel runs ``gpu_s`` on the GPU after
    Python spent ``issue_s`` issuing it; an event stamps when the work before it is done."""

    def __init__(self, gpu_s: float, issue_s: float = 0.0) -> None:
        self.gpu_s, self.issue_s = gpu_s, issue_s
        self.host = 0.0  # Python's clock
        self.free = 0.0  # when the GPU finishes what was issued
        self.launches = 0
        cuda = self

        class Event:
            def record(self):
                self.at = max(cuda.host, cuda.free)

            def synchronize(self):
                cuda.host = max(cuda.host, self.at)

        self.Event = Event

    def get_elapsed_time(self, start, stop) -> float:
        return (stop.at - start.at) * 1e3  # milliseconds, as CUDA reports

    def launch(self) -> None:
        self.host += self.issue_s
        self.free = max(self.host, self.free) + self.gpu_s
        self.launches += 1


def event_timer(cuda: FakeCuda) -> CudaEventTimer:
    return CudaEventTimer(SimpleNamespace(cuda=cuda))


def test_a_20_us_launch_is_timed_50_to_a_window_and_reported_per_launch():
    cuda = FakeCuda(gpu_s=20e-6)
    plan = TimingPlan(warmup=2, min_regions=5, max_regions=5, min_region_s=1e-3)
    timing = measure(cuda.launch, event_timer(cuda), plan)
    assert timing.launches_per_region == 50  # 50 × 20 µs = the 1 ms window
    assert timing.median_s == pytest.approx(20e-6, rel=1e-9)
    assert timing.p20_s == pytest.approx(20e-6, rel=1e-9) and timing.p80_s == pytest.approx(20e-6, rel=1e-9)
    assert cuda.launches == 2 + 1 + 5 * 50  # warm-up, the calibrating launch, five windows
    assert timing.with_launches({"seq": 1024}) == {"seq": 1024, LAUNCHES_PARAM: 50}


def test_python_overhead_is_paid_once_per_window_not_once_per_launch():
    cuda = FakeCuda(gpu_s=20e-6, issue_s=10e-6)  # issuing outpaces the GPU
    timing = measure(cuda.launch, event_timer(cuda), TimingPlan(warmup=1, min_regions=3, max_regions=3))
    # The warm-up launch is still running when the calibrating one is issued: it reads 20 µs.
    assert timing.launches_per_region == 50
    assert timing.median_s == pytest.approx(20e-6 + 10e-6 / 50, rel=1e-9)  # one issue per window


def test_launches_per_window_are_capped():
    plan = TimingPlan()
    assert launches_per_region(0.0, plan) == plan.max_launches == 1000  # an event pair reading 0
    assert launches_per_region(0.2e-6, plan) == 1000
    assert launches_per_region(20e-6, plan) == 50
    assert launches_per_region(5e-3, plan) == 1  # long launches are timed one by one


def test_attention_at_1024_is_timed_many_launches_per_window_with_flops_and_bytes_per_launch(monkeypatch):
    cuda = FakeCuda(gpu_s=20e-6)
    backend = fake_gpu_backend(timer=event_timer(cuda))
    planned = attention.cases(backend, "quick")
    first = planned[0]
    assert (first.dtype, first.size) == ("fp32", {"heads": 32, "seq": 1024, "head_dim": 128})
    assert (first.flops, first.bytes) == attention.cost(32, 1024, 128, 4)  # one launch: one attention

    def simulated(case: Case) -> Case:
        return dataclasses.replace(case, prepare=lambda: Prepared(cuda.launch, lambda: None))

    monkeypatch.setattr("explorer.kernels.runner.plan_cases",
                        lambda b, names, preset: [simulated(first)])
    results = drive(run(backend, ["attention"], "quick", load=None,
                        timing=TimingPlan(warmup=1, min_regions=3, max_regions=3)))
    [point] = results.points
    assert point.time_median_s == pytest.approx(20e-6, rel=1e-9)
    assert (point.flops, point.bytes) == (first.flops, first.bytes)  # not multiplied by N
    assert point.flops_per_s == pytest.approx(first.flops / 20e-6, rel=1e-9)
    assert cuda.launches == 1 + 1 + 3 * 50
