"""The GPU backend's CuPy-facing details, rehearsed with fake ``cupy``/``ml_dtypes``/``torch``
modules (no GPU, no CuPy needed): where bf16 arrays get their type, that a kernel which
does not compile is not taken for a dead device, that compiled modules are kept per
device, and that the PyTorch reference runs fp32 products in the mode asked for."""

import contextlib
import importlib
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from explorer.kernels import cuda_sources
from explorer.kernels.backends import CupyBackend, bfloat16, describe_failure
from explorer.kernels.cases import Case, Prepared
from explorer.kernels.runner import drive, run
from explorer.kernels.suites import gemm
from explorer.kernels.timing import CpuTimer, TimingPlan

ROOT = Path(__file__).resolve().parents[2]
NVRTC_LOG = ('/tmp/tmpabc/kern.cu(2): catastrophic error: cannot open source file "cuda_fp16.h"\n'
             '1 catastrophic error detected in the compilation of "/tmp/tmpabc/kern.cu".\n')


class CompileException(Exception):  # named as cupy.cuda.compiler names it
    pass


class NVRTCError(RuntimeError):  # named as cupy_backends.cuda.libs.nvrtc names it
    pass


class CUDARuntimeError(RuntimeError):
    pass


def fake_cupy(**extra) -> SimpleNamespace:
    """A CuPy 14 stand-in: float types, no ``bfloat16`` unless given."""
    def zeros(*_args, **_kwargs):  # an array that sums, of any type
        return SimpleNamespace(sum=lambda: 0)

    return SimpleNamespace(float16="f2", float32="f4", float64="f8", zeros=zeros, **extra)


def backend_on(cp) -> CupyBackend:
    """A CupyBackend over ``cp`` without probing a device."""
    backend = object.__new__(CupyBackend)
    backend.xp = cp
    backend.device = contextlib.nullcontext()
    return backend


# -- bf16 -----------------------------------------------------------------------------------

def test_bf16_comes_from_ml_dtypes_when_cupy_has_none(monkeypatch):
    bf16 = object()
    monkeypatch.setitem(sys.modules, "ml_dtypes", SimpleNamespace(bfloat16=bf16))
    backend = backend_on(fake_cupy())
    assert backend.dtype("bf16") is bf16
    assert backend.dtype("fp16") == "f2"
    assert gemm.supported(backend, "bf16") is None  # the full preset measures it


def test_bf16_is_skipped_with_the_reason_when_neither_provides_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "ml_dtypes", None)  # ``import ml_dtypes`` fails
    backend = backend_on(fake_cupy())
    with pytest.raises(KeyError, match="neither this CuPy nor ml_dtypes provides bfloat16"):
        backend.dtype("bf16")
    assert "neither this CuPy nor ml_dtypes provides bfloat16" in gemm.supported(backend, "bf16")


def test_a_cupy_bfloat16_is_used_first(monkeypatch):
    monkeypatch.setitem(sys.modules, "ml_dtypes", SimpleNamespace(bfloat16="from ml_dtypes"))
    assert bfloat16(fake_cupy(bfloat16="from cupy")) == "from cupy"


# -- health and compile failures ------------------------------------------------------------

def cupy_that_cannot_compile(calls: list[str], runtime_fault: Exception | None = None):
    """Runtime calls answer (or raise ``runtime_fault``); anything that needs a kernel
    compile raises CompileException."""
    def runtime_call(name, value=None):
        def call():
            calls.append(name)
            if runtime_fault is not None:
                raise runtime_fault
            return value
        return call

    def compile_needed(*args, **kwargs):
        raise CompileException(NVRTC_LOG)

    runtime = SimpleNamespace(deviceSynchronize=runtime_call("deviceSynchronize"),
                              memGetInfo=runtime_call("memGetInfo", (1 << 30, 2 << 30)))
    pool = SimpleNamespace(free_all_blocks=lambda: None)
    return fake_cupy(cuda=SimpleNamespace(runtime=runtime), arange=compile_needed,
                     RawModule=compile_needed, get_default_memory_pool=lambda: pool)


def test_a_device_whose_compiler_fails_is_still_healthy():
    calls: list[str] = []
    backend = backend_on(cupy_that_cannot_compile(calls))
    assert backend.healthy()
    assert calls == ["deviceSynchronize", "memGetInfo"]  # runtime calls only, no kernel


def test_a_sticky_runtime_error_is_unhealthy():
    fault = CUDARuntimeError("cudaErrorIllegalAddress: an illegal memory access was encountered")
    backend = backend_on(cupy_that_cannot_compile([], runtime_fault=fault))
    assert not backend.healthy()


def test_a_case_that_does_not_compile_is_skipped_and_the_run_goes_on(monkeypatch):
    backend = backend_on(cupy_that_cannot_compile([]))
    backend.timer = CpuTimer()
    monkeypatch.setattr(backend, "warm_up", lambda: None, raising=False)
    monkeypatch.setattr(backend, "describe", lambda: {"backend": "fake"}, raising=False)

    def case(kernel: str) -> Case:
        def prepare() -> Prepared:
            if kernel == "fp16":
                backend.xp.RawModule(code="#include <cuda_fp16.h>")
            return Prepared(lambda: None, lambda: None, lambda: None)
        return Case("intensity", kernel, "fp32", {"n": 1}, 1000, 100, prepare)

    monkeypatch.setattr("explorer.kernels.runner.plan_cases",
                        lambda b, names, preset: [case(k) for k in ("a", "fp16", "b")])
    results = drive(run(backend, ["intensity"], "smoke", load=None,
                        timing=TimingPlan(warmup=1, min_regions=2, max_regions=2, target_s=0.0)))
    assert [p.kernel for p in results.points] == ["a", "b"] and not results.cancelled
    assert not [n for n in results.notes if "no longer works" in n]
    [skip] = results.skipped
    assert skip["kernel"] == "fp16" and 'cannot open source file "cuda_fp16.h"' in skip["reason"]


def test_describe_failure_names_a_compile_error_by_its_first_error_line():
    assert describe_failure(CompileException(NVRTC_LOG)) == (
        'the kernel did not compile: /tmp/tmpabc/kern.cu(2): catastrophic error: '
        'cannot open source file "cuda_fp16.h"')
    nvcc = CompileException("`nvcc` command returns non-zero exit status. \ncommand: nvcc ...\n"
                            "return-code: 1\nstdout/stderr: \nkern.cu(3): error: expected a \";\"\n")
    assert describe_failure(nvcc) == 'the kernel did not compile: kern.cu(3): error: expected a ";"'
    assert describe_failure(NVRTCError("NVRTC_ERROR_COMPILATION (6)")) == (
        "the kernel did not compile: NVRTC_ERROR_COMPILATION (6)")

    class CompileValueError(CompileException):  # a subclass counts too
        pass

    assert describe_failure(CompileValueError("")) == "the kernel did not compile"
    assert describe_failure(CUDARuntimeError("cudaErrorIllegalAddress")) is None
    assert describe_failure(MemoryError()) is None


# -- compiled modules per device ------------------------------------------------------------

def test_compiled_modules_are_kept_per_device(monkeypatch):
    monkeypatch.setattr(cuda_sources, "_modules", {})
    current = {"device": 0}
    built: list[dict] = []

    class RawModule:
        def __init__(self, **kwargs):
            self.device = current["device"]
            built.append({"device": self.device, **kwargs})

    cp = SimpleNamespace(RawModule=RawModule,
                         cuda=SimpleNamespace(runtime=SimpleNamespace(getDevice=lambda: current["device"])))
    first = cuda_sources.module(cp)
    assert cuda_sources.module(cp) is first and len(built) == 1  # cached on its device
    current["device"] = 1
    second = cuda_sources.module(cp)
    assert second is not first and second.device == 1  # another device builds its own
    fp16 = cuda_sources.module(cp, "fp16")
    assert built[-1]["code"] == cuda_sources.FP16_SOURCE and fp16.device == 1
    assert built[-1]["name_expressions"][0] == cuda_sources.template_name("fp16", 1)
    current["device"] = 0
    assert cuda_sources.module(cp) is first
    assert [b["device"] for b in built] == [0, 1, 1]


# -- the PyTorch reference's fp32 mode ------------------------------------------------------

def fake_torch(with_precision: bool = True):
    seen: list[tuple] = []
    matmul = SimpleNamespace(allow_tf32=False)
    torch = SimpleNamespace(backends=SimpleNamespace(cuda=SimpleNamespace(matmul=matmul),
                                                     cudnn=SimpleNamespace(allow_tf32=True)))
    state = {"precision": "medium"}
    if with_precision:
        torch.get_float32_matmul_precision = lambda: state["precision"]
        torch.set_float32_matmul_precision = lambda value: state.__setitem__("precision", value)

    def mode() -> tuple:
        return (state["precision"] if with_precision else None,
                torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)

    class Event:
        def __init__(self, enable_timing=False):
            pass

        def record(self):
            pass

        def synchronize(self):
            pass

        def elapsed_time(self, other):
            return 2.0

    torch.cuda = SimpleNamespace(Event=Event)
    torch.matmul = lambda a, b, out=None: seen.append(mode())
    return torch, mode, seen


@pytest.fixture
def gpu_suite(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    return importlib.import_module("gpu_suite")


@pytest.mark.parametrize(("tf32", "expected"), [(True, ("high", True, True)),
                                                (False, ("highest", False, False))])
def test_the_torch_reference_runs_in_the_mode_asked_and_restores_it(gpu_suite, tf32, expected):
    torch, mode, seen = fake_torch()
    before = mode()
    seconds = gpu_suite.torch_timer(torch, None, None, None, allow_tf32=tf32)()
    assert seconds == pytest.approx(2e-3)
    assert seen and set(seen) == {expected}  # every product, warm-ups included
    assert mode() == before


def test_an_older_torch_without_the_precision_setting_gets_both_flags(gpu_suite):
    torch, mode, _ = fake_torch(with_precision=False)
    with gpu_suite.torch_fp32_mode(torch, allow_tf32=True):
        assert mode() == (None, True, True)
    assert mode() == (None, False, True)


def test_bf16_whose_arrays_fail_is_skipped_with_the_reason():
    """CuPy 14 has the type through ml_dtypes but its arrays need NumPy >= 2.1.2: a GEMM case
    that cannot make one is skipped saying why, not run into a failure."""
    import types

    from explorer.kernels.suites import gemm

    def zeros(*_args, **_kwargs):
        raise TypeError("bfloat16 needs NumPy 2.1.2")

    backend = types.SimpleNamespace(device_kind="gpu", xp=types.SimpleNamespace(zeros=zeros),
                                    dtype=lambda name: "bfloat16")
    reason = gemm.supported(backend, "bf16")
    assert reason == "bf16 arrays do not work here: TypeError: bfloat16 needs NumPy 2.1.2"
