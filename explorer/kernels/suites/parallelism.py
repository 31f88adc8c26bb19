"""Bandwidth versus the parallelism in flight (Little's law: bandwidth = bytes in flight /
latency). High-bandwidth memory only pays off when enough requests are outstanding.

- GPU: a float4 grid-stride copy launched with 1 … many blocks of 256 threads; each
  thread keeps 16 bytes in flight per load.
- CPU: a copy split over 1 … N threads (NumPy releases the GIL inside ``copyto``).
Bytes: one read and one write per element.
"""

from __future__ import annotations

import os
from functools import partial

import numpy as np

from explorer.core.hardware.hardware import GPU
from explorer.kernels import cuda_sources
from explorer.kernels.cases import Case, OnThreads, Prepared, Preset, sample_indices, split, within

SUITE = "parallelism"
THREADS_PER_BLOCK = 256


def _prepare_gpu(backend, n: int, blocks: int) -> Prepared:
    cp = backend.xp
    src, dst = backend.random(n, "fp32"), cp.zeros(n, dtype=cp.float32)
    kernel = cuda_sources.module(cp).get_function("copy_f4")
    n4 = np.uint64(n // 4)

    def launch():
        kernel((blocks,), (THREADS_PER_BLOCK,), (src, dst, n4))

    idx = sample_indices(n)
    return Prepared(launch, lambda: within(backend.to_host(dst[idx]), backend.to_host(src[idx]),
                                           0.0, "copy"))


def _prepare_cpu(backend, n: int, threads: int) -> Prepared:
    src, dst = backend.random(n, "fp32"), np.zeros(n, dtype=np.float32)
    launch = OnThreads(np.copyto, [(dst[lo:hi], src[lo:hi]) for lo, hi in split(n, threads)], "copy")
    idx = sample_indices(n)
    return Prepared(launch, lambda: within(dst[idx], src[idx], 0.0, "copy"), close=launch.close)


def cases(backend, preset: Preset) -> list[Case]:
    gpu = backend.device_kind == GPU
    working_set = backend.streaming_bytes() if preset != Preset.SMOKE else 2 << 20
    n = working_set // 2 // 4 // 4 * 4  # two fp32 arrays, a multiple of 4 elements
    out = []
    if gpu:
        sms = backend.gpu.sm_count
        top = 32 * sms if preset == Preset.FULL else 8 * sms
        counts = sorted({1, 2, 4, 8, 16, 32, sms // 2 or 1, sms, 2 * sms, 4 * sms, top} |
                        ({64, 128, 256, 512} if preset == Preset.FULL else set()))
        for blocks in (c for c in counts if c <= top):
            in_flight = blocks * THREADS_PER_BLOCK * 16
            out.append(Case(SUITE, "copy", "fp32", {"n": n}, 0, 2 * n * 4,
                            partial(_prepare_gpu, backend, n, blocks),
                            f"one read and one write per element; {in_flight} bytes in flight",
                            {"blocks": blocks}))
        return out
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    counts = sorted({1, 2, 4, 8, 16, 32, 64, cpus} & set(range(1, cpus + 1)))
    if preset == Preset.SMOKE:
        counts = counts[:2]
    for threads in counts:
        out.append(Case(SUITE, "copy", "fp32", {"n": n}, 0, 2 * n * 4,
                        partial(_prepare_cpu, backend, n, threads),
                        "one read and one write per element", {"threads": threads}))
    return out


def in_flight_bytes(point) -> float | None:
    """Bytes a GPU point of this suite keeps in flight (one 16-byte load per thread at a
    time: an upper bound for a copy); None for CPU points, which vary threads instead."""
    if point.suite != SUITE or "blocks" not in point.param:
        return None
    return float(point.param["blocks"] * THREADS_PER_BLOCK * 16)
