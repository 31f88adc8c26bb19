"""The faults of test_faults.py for real, on a GPU (skipped with the reason elsewhere): an
allocation past the device's memory skips that case, frees what it took and the run goes
on; a kernel that writes outside its memory breaks the CUDA context, so it runs in a
process of its own, where the run stops with the reason and keeps the points before it."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from explorer.kernels.cases import Case, Prepared
from explorer.kernels.runner import drive, run
from explorer.kernels.timing import TimingPlan

pytestmark = pytest.mark.gpu

QUICK = TimingPlan(warmup=1, min_regions=2, max_regions=2, target_s=0.0)
ROOT = Path(__file__).resolve().parents[2]


def _fill_case(xp, kernel: str, elements: int) -> Case:
    """A case that allocates ``elements`` fp32 values on the device and fills them."""
    def prepare() -> Prepared:
        data = [xp.empty(elements, dtype=xp.float32)]  # out of memory here when too big
        return Prepared(lambda: data[0].fill(1.0), lambda: None, data.clear)

    return Case("stream", kernel, "fp32", {"n": elements}, elements, 4 * elements, prepare)


def test_allocation_past_the_device_memory_skips_that_case_and_frees_it(cupy_backend, monkeypatch):
    xp = cupy_backend.xp
    with cupy_backend.device:
        total = xp.cuda.runtime.memGetInfo()[1]
        pool = xp.get_default_memory_pool()
        before = pool.used_bytes()
    cases = [_fill_case(xp, "a", 1 << 20), _fill_case(xp, "huge", 2 * total // 4),
             _fill_case(xp, "b", 1 << 20)]
    monkeypatch.setattr("explorer.kernels.runner.plan_cases", lambda backend, names, preset: cases)
    results = drive(run(cupy_backend, ["stream"], "smoke", timing=QUICK))
    assert [p.kernel for p in results.points] == ["a", "b"] and not results.cancelled
    assert list(results.skipped) == [{"suite": "stream", "kernel": "huge", "dtype": "fp32",
                                      "reason": "not enough memory for this size"}]
    with cupy_backend.device:
        assert pool.used_bytes() == before  # every case freed what it took
    again = drive(run(cupy_backend, ["stream"], "smoke", timing=QUICK))  # the next run works
    assert len(again.points) == 2


ILLEGAL = textwrap.dedent("""
    import json
    from explorer.kernels import runner
    from explorer.kernels.backends import CupyBackend
    from explorer.kernels.cases import Case, Prepared
    from explorer.kernels.timing import TimingPlan

    backend = CupyBackend(0)
    xp = backend.xp
    source = 'extern "C" __global__ void bad(float* p) { p[(size_t)1 << 40] = 1.0f; }'
    bad = xp.RawKernel(source, "bad")

    def case(kernel, wrong):
        def prepare():
            data = [xp.zeros(1024, dtype=xp.float32)]
            if wrong:
                launch = lambda: bad((1,), (1,), (data[0],))
            else:
                launch = lambda: data[0].fill(1.0)
            return Prepared(launch, lambda: None, data.clear)
        return Case("stream", kernel, "fp32", {"n": 1024}, 1024, 4096, prepare)

    cases = [case("a", False), case("b", False), case("bad", True), case("c", False)]
    runner.plan_cases = lambda backend, names, preset: cases
    plan = TimingPlan(warmup=1, min_regions=2, max_regions=2, target_s=0.0)
    results = runner.drive(runner.run(backend, ["stream"], "smoke", timing=plan))
    print(json.dumps({"points": [p.kernel for p in results.points], "cancelled": results.cancelled,
                      "notes": list(results.notes), "skipped": list(results.skipped)}))
""")


def test_an_illegal_address_stops_the_run_and_keeps_the_points_before(cupy_backend):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", ILLEGAL], capture_output=True, text=True, env=env,
                          timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    assert outcome["points"] == ["a", "b"] and outcome["cancelled"]
    assert outcome["skipped"][-1]["kernel"] == "bad"
    assert "illegal" in outcome["skipped"][-1]["reason"].lower()
    [note] = [n for n in outcome["notes"] if "stopped" in n]
    assert "the device no longer works" in note and "the 2 points measured before are kept" in note
