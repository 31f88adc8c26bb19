"""PyTorch's few calls that ``benchmarks/gpu_suite.py`` makes for its reference products, on
NumPy: tensors on "cuda" are NumPy arrays, events read ``time.perf_counter``, and the fp32
mode switches are kept so a test can read what was set."""

from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np

__version__ = "2.9.0+numpy-double"
float32, float16 = np.float32, np.float16
bfloat16 = "bfloat16"  # NumPy has none: a product of it fails, as an unsupported one would
_precision = {"fp32": "highest"}


def get_float32_matmul_precision() -> str:
    return _precision["fp32"]


def set_float32_matmul_precision(value: str) -> None:
    _precision["fp32"] = value


def rand(*shape, device: str = "cpu", dtype=float32):
    return np.random.default_rng(0).random(shape).astype(dtype)


def empty(*shape, device: str = "cpu", dtype=float32):
    return np.empty(shape, dtype=dtype)


def matmul(a, b, out=None):
    return np.matmul(a, b, out=out)


class _Event:
    def __init__(self, enable_timing: bool = False) -> None:
        self.at = 0.0

    def record(self) -> None:
        self.at = time.perf_counter()

    def synchronize(self) -> None:
        """The double's work is done when issued."""

    def elapsed_time(self, end: _Event) -> float:
        return (end.at - self.at) * 1e3  # milliseconds, as PyTorch reports


cuda = SimpleNamespace(is_available=lambda: True, Event=_Event)
backends = SimpleNamespace(cuda=SimpleNamespace(matmul=SimpleNamespace(allow_tf32=False)),
                           cudnn=SimpleNamespace(allow_tf32=True))
