"""Bandwidth from each cache level (hierarchical roofs, as Nsight Compute, Intel Advisor and
the cache-aware roofline draw them).

On the CPU each level gets a working set of a quarter of its size per thread (the level's
capacity divided among the threads that share it): an in-place scale ``x = x·1`` (NumPy
multiplies; the values stay the same, so the check is exact) is repeated over it, each
pass reading and writing every element from that level. It runs on one thread and on one
per core, each over its own array; the best is the level's ceiling. Bytes: 2 elements per
index per pass (STREAM's scale convention), all from the cache, never main memory, so a
cache point is never flagged as faster than the memory.

These are the rates NumPy reaches from each level: on a CPU they can be limited by NumPy's
own loop (one multiply per element) as much as by the cache, and they say so by being close
to each other.

L1 is not measured: one NumPy call costs about a microsecond, longer than a pass over L1
takes, so the call, not the cache, would be timed. On a GPU, raw kernels read L2 and shared
memory (``cache_gpu``).
"""

from __future__ import annotations

from functools import partial

import numpy as np

from explorer.core.hardware.hardware import GPU
from explorer.kernels.cases import Case, OnThreads, Prepared, Preset, Skip, threads_for, within
from explorer.kernels.cpuinfo import CacheKind
from explorer.kernels.suites import cache_gpu

SUITE = "cache"
PASS_BYTES = 32 << 20  # bytes moved per thread per launch: long enough to time, short enough to repeat
CONVENTION = "scale in place: 2 elements per index per pass, from the cache level"


def _prepare(backend, n: int, threads: int) -> Prepared:
    arrays = [backend.random(n, "fp32") for _ in range(threads)]
    originals = [a.copy() for a in arrays]
    one = np.float32(1.0)
    passes = passes_for(n)

    def part(x) -> None:
        for _ in range(passes):
            np.multiply(x, one, out=x)

    def check() -> str | None:
        return within(np.concatenate(arrays)[::97], np.concatenate(originals)[::97], 0.0, "scale by 1")

    launch = OnThreads(part, [(x,) for x in arrays], "cache")
    return Prepared(launch, check, close=launch.close)


def passes_for(n: int) -> int:
    return max(1, PASS_BYTES // (2 * n * 4))


def cases(backend, preset: Preset) -> list[Case | Skip]:
    if backend.device_kind == GPU:
        return cache_gpu.cases(backend, preset)
    cpu = backend.cpu
    levels = sorted({c.level for c in cpu.caches if c.kind != CacheKind.INSTRUCTION and c.level >= 2})
    out: list[Case | Skip] = [Skip(SUITE, "scale L1", "fp32", "a NumPy call (about 1 µs) takes longer than "
                                                                "a pass over L1: the call would be timed")]
    thread_counts = sorted({1, threads_for(backend)})
    for level in levels:
        cache = next(c for c in cpu.caches if c.level == level and c.kind != CacheKind.INSTRUCTION)
        sharing = max(1, cache.shared_by)
        for threads in thread_counts:
            per_thread = cache.size_bytes // min(sharing, threads) // 4
            n = max(1024, per_thread // 4 // (64 if preset == Preset.SMOKE else 1))
            moved = 2 * n * 4 * passes_for(n) * threads
            out.append(Case(SUITE, f"scale L{level}", "fp32", {"n": n}, moved // 8, moved,
                            partial(_prepare, backend, n, threads), CONVENTION,
                            {"level": level, "threads": threads}, dram_traffic=False))
    return out
