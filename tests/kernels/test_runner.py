"""The run generator: progress, cancel, failures of single cases, suspect flags, end to end."""

import pytest

from explorer.kernels.cases import Case, Prepared
from explorer.kernels.reference import Reference
from explorer.kernels.runner import Progress, drive, run
from explorer.kernels.timing import CancelToken


def test_smoke_suite_end_to_end(numpy_backend):
    reports = []
    results = drive(run(numpy_backend, ["smoke"]), reports.append)
    assert not results.cancelled
    suites = {p.suite for p in results.points}
    assert suites == {"stream", "cache", "intensity", "gemm", "decode-batch", "attention", "parallelism",
                      "memory-bound-ops", "shapes"}
    assert all(p.check is None for p in results.points)
    assert all(p.time_p20_s <= p.time_median_s <= p.time_p80_s for p in results.points)
    assert results.best_bandwidth() is None and "fp32" in results.best_flops()  # no cache rate as memory's
    assert not any(p.dram_traffic for p in results.points if p.suite in ("stream", "parallelism"))
    assert results.machine["cpu"]["model"]
    assert any("smoke preset" in n for n in results.notes)
    # Progress: total fixed, done never decreasing, from 0 to the end.
    assert {r.total for r in reports} == {len(results.points)}  # (L1 is a Skip, not a case)
    done = [r.done for r in reports]
    assert done == sorted(done) and done[0] == 0 and done[-1] == reports[0].total
    assert reports[-1].current == "" and reports[-1].fraction == 1.0
    assert reports[1].eta_s is not None and reports[1].point is not None


def test_eta():
    p = Progress(done=2, total=10, current="x", elapsed_s=4.0)
    assert p.eta_s == pytest.approx(16.0) and p.fraction == pytest.approx(0.2)
    assert Progress(0, 10, "x", 0.0).eta_s is None


def test_cancel_before_start_returns_partial_results(numpy_backend):
    token = CancelToken()
    generator = run(numpy_backend, ["stream"], "smoke", cancel=token)
    reports = [next(generator), next(generator)]  # first case measured
    token.cancel()
    results = drive(generator)
    assert results.cancelled
    assert len(results.points) == 1
    assert reports[1].point is not None


def test_a_cancel_is_honoured_at_the_next_timed_region(numpy_backend, monkeypatch):
    """The mechanism behind "cancel within a second": a timed region lasts about
    ``min_region_s`` (1 ms) of launches, and no region starts after a cancel. Counted in
    launches and regions, not wall time (a busy machine must not fail this)."""
    from explorer.kernels import runner

    token = CancelToken()
    seen = {"launches": 0, "regions after the cancel": 0, "measured": 0}
    real_measure = runner.measure

    class CountingTimer:
        def __init__(self, timer):
            self.timer = timer

        def region(self, kernel, n):
            if token.cancelled:
                seen["regions after the cancel"] += 1
            return self.timer.region(kernel, n)

    def measure(kernel, timer, plan, cancel):
        seen["measured"] += 1

        def launch():
            seen["launches"] += 1
            if seen["launches"] == 5:  # during the first case's warm-up or first region
                token.cancel()
            return kernel()

        return real_measure(launch, CountingTimer(timer), plan, cancel)

    monkeypatch.setattr(runner, "measure", measure)
    results = drive(run(numpy_backend, ["stream", "intensity"], "quick", cancel=token))
    assert results.cancelled and results.points == ()
    assert seen["regions after the cancel"] == 0 and seen["measured"] == 1  # no later case starts
    assert runner.TIMING["quick"].min_region_s <= 0.01  # so a region in progress ends quickly


class Broken:
    """A backend-independent case whose preparation fails."""


def test_a_failing_case_is_skipped_with_its_reason(numpy_backend, monkeypatch):
    def plan(backend, names, preset):
        def boom():
            raise RuntimeError("cuBLAS exploded")

        ok = Case("stream", "fine", "fp32", {"n": 1}, 1, 8,
                  lambda: Prepared(lambda: None, lambda: None))
        return [Case("stream", "broken", "fp32", {"n": 1}, 1, 8, boom), ok]

    monkeypatch.setattr("explorer.kernels.runner.plan_cases", plan)
    results = drive(run(numpy_backend, ["stream"], "smoke"))
    assert [p.kernel for p in results.points] == ["fine"]
    assert results.skipped == ({"suite": "stream", "kernel": "broken", "dtype": "fp32",
                                "reason": "RuntimeError: cuBLAS exploded"},)


def test_rates_above_the_reference_are_flagged_suspect(numpy_backend):
    slow_machine = Reference("a test ceiling", {"fp32": 1e6}, bandwidth_bytes_per_s=1e6)
    results = drive(run(numpy_backend, ["stream"], "smoke", reference=slow_machine))
    assert results.points and all(p.suspect for p in results.points)
    assert "main-memory bandwidth (a test ceiling)" in results.points[0].suspect
    assert results.best_bandwidth() is None  # suspect points never become ceilings
    assert results.reference == "a test ceiling"


def test_reference_suspect_rules(catalog):
    ref = Reference.from_hardware(catalog["h100-sxm"])
    assert ref.suspect("bf16", 900e12, 1e12) is None
    assert "1.21× the bf16 peak" in ref.suspect("bf16", 1200e12, 1e12)
    assert "main-memory bandwidth" in ref.suspect("fp32", 1e12, 4e12)
    assert ref.suspect("fp32", 1e12, 3.4e12) is None  # within the 5 % tolerance
