"""``cupyx.profiler.benchmark`` of the double: each call's time by ``time.perf_counter``
(the double's work is done when issued, so host time is its "GPU" time)."""

from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np


def benchmark(func, args=(), n_repeat: int = 10000, n_warmup: int = 10, **_kwargs):
    for _ in range(n_warmup):
        func(*args)
    times = []
    for _ in range(n_repeat):
        start = time.perf_counter()
        func(*args)
        times.append(time.perf_counter() - start)
    seconds = np.array([times])
    return SimpleNamespace(cpu_times=seconds[0], gpu_times=seconds)


profiler = SimpleNamespace(benchmark=benchmark)
