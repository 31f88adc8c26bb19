"""Array backends the kernels run on: NumPy on the CPU, CuPy on an NVIDIA GPU.

A backend hides the few differences the suites care about: where random arrays
come from, how a launch is synchronised and timed, how big a working set must be
to leave the caches, and how to describe the machine for a results file.
"""

from __future__ import annotations

import contextlib
import os
import platform
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from explorer.core.hardware.hardware import CPU, GPU
from explorer.kernels import gpuinfo
from explorer.kernels.cpuinfo import CpuInfo, describe_cpu
from explorer.kernels.timing import CpuTimer, Timer

BACKENDS = ("numpy", "cupy")
NUMPY_DTYPES = {"fp64": np.float64, "fp32": np.float32, "fp16": np.float16}


def _software(name: str, device_kind: str) -> dict[str, Any]:
    """What every results file says about the software that measured it."""
    return {"backend": name, "device_kind": device_kind, "python": sys.version.split()[0],
            "numpy": np.__version__, "platform": platform.platform()}


def bfloat16(cp):
    """The bf16 array type: ``cupy.bfloat16`` where a CuPy has it, else ``ml_dtypes.bfloat16``
    (CuPy 14 has no bfloat16 of its own; its bf16 arrays use the ml_dtypes type). Raises
    KeyError with the reason when neither exists."""
    bf16 = getattr(cp, "bfloat16", None)
    if bf16 is not None:
        return bf16
    try:
        import ml_dtypes
    except ImportError:
        ml_dtypes = None
    bf16 = getattr(ml_dtypes, "bfloat16", None)
    if bf16 is None:
        raise KeyError("bf16: neither this CuPy nor ml_dtypes provides bfloat16 "
                       "(pip install ml_dtypes)")
    return bf16


# CuPy's compile errors, matched by name so that nothing here imports CuPy:
# cupy.cuda.compiler.CompileException (NVRTC or nvcc; its text is the compiler's log) and
# cupy_backends.cuda.libs.nvrtc.NVRTCError.
COMPILE_ERRORS = ("CompileException", "NVRTCError")


def describe_failure(exc: BaseException) -> str | None:
    """What a case's failure was when it is the kernel's own and not the device's: "the
    kernel did not compile: <the log's first error line>" for a compile error; None for
    anything else (the caller describes it as it does every other exception)."""
    if not any(cls.__name__ in COMPILE_ERRORS for cls in type(exc).__mro__):
        return None
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    # nvcc's text starts with the command that failed; the log's error line says why.
    first = next((line for line in lines if "error" in line.lower()), lines[0] if lines else "")
    return f"the kernel did not compile: {first[:300]}" if first else "the kernel did not compile"


class BackendUnavailable(RuntimeError):
    """A backend that cannot run here; the message says why and what to do."""


class NumpyBackend:
    name = "numpy"
    device_kind = CPU

    def __init__(self, cpu: CpuInfo | None = None, seed: int = 12345) -> None:
        self.xp = np
        self.cpu = cpu or describe_cpu()
        self.timer: Timer = CpuTimer()
        self._rng = np.random.default_rng(seed)

    # -- arrays --------------------------------------------------------------------------------
    def dtype(self, name: str):
        return NUMPY_DTYPES[name]

    def random(self, shape, dtype: str) -> np.ndarray:
        """Uniform values in [0.5, 1.5): random (never zeros) and safe from overflow in fp16."""
        return (self._rng.random(shape, dtype=np.float64) + 0.5).astype(NUMPY_DTYPES[dtype])

    def scalar(self, value: float, dtype: str):
        return NUMPY_DTYPES[dtype](value)

    def to_host(self, array) -> np.ndarray:
        return np.asarray(array)

    def sync(self) -> None:
        """NumPy calls return when the work is done."""

    # -- sizes ---------------------------------------------------------------------------------
    def streaming_bytes(self) -> int:
        """A working set that cannot stay in the caches: 4× the last-level cache."""
        return 4 * self.cpu.last_level_cache_bytes

    @property
    def cache_bytes(self) -> int:
        """The size an intensity-sweep block may have to stay cache-resident (half of L2)."""
        return self.cpu.l2_bytes_per_core // 2

    def release(self) -> None:
        """Nothing to free beyond Python's garbage."""

    def activate(self):
        """The CPU needs no device selection."""
        return contextlib.nullcontext()

    def warm_up(self) -> None:
        """NumPy has nothing to load; each kernel's own warm-up launches suffice."""

    def describe(self) -> dict[str, Any]:
        return {**_software(self.name, self.device_kind), "cpu": self.cpu.to_dict()}

    @property
    def label(self) -> str:
        return f"NumPy on {self.cpu.model} ({self.cpu.threads} threads, {self.cpu.blas})"


class CudaEventTimer:
    """Regions bracketed by CUDA events on the current stream: GPU time, not Python time."""

    method = "CUDA events around each region (cupy.cuda.Event), after warm-up"

    def __init__(self, cp) -> None:
        self._cp = cp

    def region(self, kernel: Callable[[], object], inner: int) -> float:
        start, stop = self._cp.cuda.Event(), self._cp.cuda.Event()
        start.record()
        for _ in range(inner):
            kernel()
        stop.record()
        stop.synchronize()
        return self._cp.cuda.get_elapsed_time(start, stop) * 1e-3 / inner


class CupyBackend:
    name = "cupy"
    device_kind = GPU

    def __init__(self, device: int = 0, seed: int = 12345) -> None:
        info = gpuinfo.detect_gpu(device)
        if isinstance(info, gpuinfo.Unavailable):
            raise BackendUnavailable(info.reason)
        import cupy as cp  # detect_gpu succeeded: CuPy imports and the device works

        self.xp = cp
        self.gpu = info
        self.device = cp.cuda.Device(device)
        self.device.use()
        self.timer: Timer = CudaEventTimer(cp)
        self._rng = cp.random.default_rng(seed)

    def dtype(self, name: str):
        cp = self.xp
        table = {"fp64": cp.float64, "fp32": cp.float32, "fp16": cp.float16}
        if name == "bf16":
            return bfloat16(cp)
        return table[name]

    def random(self, shape, dtype: str):
        values = self._rng.random(shape, dtype=self.xp.float32) + 0.5
        return values.astype(self.dtype(dtype))

    def scalar(self, value: float, dtype: str):
        """A host scalar of the array type: CuPy kernels take it by value."""
        return np.dtype(self.dtype(dtype)).type(value)

    def to_host(self, array) -> np.ndarray:
        return self.xp.asnumpy(array)

    def sync(self) -> None:
        self.xp.cuda.get_current_stream().synchronize()

    def streaming_bytes(self) -> int:
        """Far beyond L2 (read from the device): 8× L2, at least 512 MiB."""
        return max(8 * self.gpu.l2_bytes, 512 << 20)

    @property
    def cache_bytes(self) -> int:
        return self.gpu.l2_bytes // 2

    def release(self) -> None:
        self.xp.get_default_memory_pool().free_all_blocks()

    def healthy(self) -> bool:
        """Whether the GPU still answers after a case failed: an illegal access or a lost
        device breaks the context for every later call (the run stops, keeping what it
        measured); an out-of-memory case does not. Runtime calls only: a kernel launched
        here would need a compile, and a compile that fails (no CUDA headers, an NVRTC
        error) is that case's fault, not a dead device."""
        try:
            with self.device:
                runtime = self.xp.cuda.runtime
                runtime.deviceSynchronize()  # returns a sticky error of the context
                runtime.memGetInfo()
        except Exception:
            return False
        return True

    def activate(self):
        """Select this backend's GPU on the calling thread (CuPy's current device is
        per thread)."""
        return self.device

    def warm_up(self, seconds: float = 0.5) -> None:
        """Busy products for ``seconds`` so clocks leave idle and cuBLAS is loaded before
        the first kernel is timed."""
        cp = self.xp
        with self.device:
            a = cp.ones((2048, 2048), dtype=cp.float32)
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                for _ in range(10):
                    a @ a
                self.sync()
            del a
            self.release()

    def describe(self) -> dict[str, Any]:
        return {
            **_software(self.name, self.device_kind),
            "gpu": self.gpu.to_dict(),
            "cublas": self._cublas_version(),
            # Variables that change what an "fp32" product computes.
            "environment": {name: os.environ.get(name) for name in ("CUPY_TF32", "NVIDIA_TF32_OVERRIDE")},
            "cpu": describe_cpu().to_dict(),
        }

    def _cublas_version(self) -> str | None:
        try:
            from cupy_backends.cuda.libs import cublas

            with self.device:
                version = cublas.getVersion(self.xp.cuda.device.get_cublas_handle())
            return f"{version // 10000}.{version // 100 % 100}.{version % 100}"
        except Exception:  # the version is a description, not a requirement
            return None

    @property
    def label(self) -> str:
        return f"CuPy {self.gpu.cupy_version} on {self.gpu.name} (CUDA {self.gpu.runtime_version})"


def open_backend(name: str, device: int = 0):
    """The backend called ``name``; raises BackendUnavailable with the reason it cannot run."""
    if name == "numpy":
        return NumpyBackend()
    if name == "cupy":
        return CupyBackend(device)
    raise BackendUnavailable(f"unknown backend {name!r}: choose {' or '.join(BACKENDS)}")
