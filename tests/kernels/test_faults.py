"""Faults rehearsed with a fake GPU backend (no GPU needed): out of memory at allocation, an
error in the middle of a kernel, a result that fails its check, a device that disappears,
a cancel during warm-up. Each run ends cleanly, keeps the points measured before, says why
it is partial, and frees what it allocated, so the next run works."""

import contextlib

from explorer.kernels.cases import Case, Prepared
from explorer.kernels.runner import drive, run
from explorer.kernels.timing import CancelToken, CpuTimer, TimingPlan


class OutOfMemoryError(Exception):  # named as CuPy names it
    pass


class CUDARuntimeError(RuntimeError):
    pass


class FakeGpu:
    """A backend whose cases allocate and free "device memory" (a counter), and whose
    faults are scripted per case."""

    name, device_kind, label = "fake", "gpu", "fake GPU"
    timer = CpuTimer()

    def __init__(self, faults: dict[str, str] | None = None, warm_up=lambda: None) -> None:
        self.faults = faults or {}
        self.allocated = 0
        self.released = 0
        self.broken = False  # a sticky fault: every later kernel fails
        self._warm_up = warm_up

    def warm_up(self) -> None:
        self._warm_up()

    def activate(self):
        if self.broken:
            raise CUDARuntimeError("cudaErrorNoDevice: no CUDA-capable device is detected")
        return contextlib.nullcontext()

    def release(self) -> None:
        self.released += 1

    def healthy(self) -> bool:
        return not self.broken

    def describe(self) -> dict:
        return {"backend": "fake"}

    def case(self, kernel: str) -> Case:
        def prepare() -> Prepared:
            fault = self.faults.get(kernel)
            if fault == "oom":
                raise OutOfMemoryError("out of memory allocating 80 GB")
            self.allocated += 1
            launches = {"n": 0}

            def launch():
                launches["n"] += 1
                if fault == "illegal" and launches["n"] > 2:
                    self.broken = True
                    raise CUDARuntimeError("cudaErrorIllegalAddress: an illegal memory access")
                if fault == "vanish" and launches["n"] > 2:
                    self.broken = True
                    raise CUDARuntimeError("cudaErrorDevicesUnavailable: the device is gone")

            def close():
                self.allocated -= 1

            check = (lambda: "fp32 product: relative error 0.5 exceeds 1e-04") if fault == "wrong" else \
                (lambda: None)
            return Prepared(launch, check, close)

        return Case("gemm", kernel, "fp32", {"n": 1}, 1000, 100, prepare)


def run_fake(backend, kernels, cancel=None, monkeypatch=None):
    monkeypatch.setattr("explorer.kernels.runner.plan_cases",
                        lambda b, names, preset: [backend.case(k) for k in kernels])
    return drive(run(backend, ["gemm"], "smoke", cancel=cancel,
                     timing=TimingPlan(warmup=1, min_regions=2, max_regions=2, target_s=0.0)))


def test_out_of_memory_skips_that_case_and_the_run_goes_on(monkeypatch):
    gpu = FakeGpu({"big": "oom"})
    results = run_fake(gpu, ["a", "big", "b"], monkeypatch=monkeypatch)
    assert [p.kernel for p in results.points] == ["a", "b"] and not results.cancelled
    assert results.skipped[0]["kernel"] == "big"
    assert results.skipped[0]["reason"] == "not enough memory for this size"
    assert gpu.allocated == 0 and gpu.released == 3


def test_a_fault_that_breaks_the_device_stops_the_run_and_keeps_what_was_measured(monkeypatch):
    for fault in ("illegal", "vanish"):
        gpu = FakeGpu({"bad": fault})
        results = run_fake(gpu, ["a", "b", "bad", "c", "d"], monkeypatch=monkeypatch)
        assert [p.kernel for p in results.points] == ["a", "b"]
        assert results.cancelled  # partial
        [note] = [n for n in results.notes if "stopped" in n]
        assert "the device no longer works (CUDARuntimeError: cudaError" in note
        assert "the 2 points measured before are kept" in note
        assert results.skipped[-1]["kernel"] == "bad"
        assert gpu.allocated == 0  # the failed case was freed although the device is gone
        fresh = FakeGpu()  # the next run (a reset or another device) works
        assert len(run_fake(fresh, ["a", "b"], monkeypatch=monkeypatch).points) == 2


def test_a_result_that_fails_its_check_is_kept_and_flagged(monkeypatch):
    results = run_fake(FakeGpu({"w": "wrong"}), ["w", "ok"], monkeypatch=monkeypatch)
    wrong, ok = results.points
    assert wrong.check == "fp32 product: relative error 0.5 exceeds 1e-04" and not wrong.trusted
    assert ok.trusted and results.best_flops()["fp32"].kernel == "ok"  # never a ceiling


def test_a_cancel_during_warm_up_measures_nothing(monkeypatch):
    token = CancelToken()
    gpu = FakeGpu(warm_up=token.cancel)  # the user cancels while cuBLAS loads
    results = run_fake(gpu, ["a", "b"], cancel=token, monkeypatch=monkeypatch)
    assert results.cancelled and results.points == () and gpu.allocated == 0
