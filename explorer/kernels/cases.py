"""A kernel case: one measurement, declared before anything is allocated.

Suites build lists of ``Case`` (cheap: sizes and formulas only). The runner
calls ``prepare()`` right before timing, which allocates arrays and returns the
launch callable plus a ``check`` that compares the result with a reference.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np


class Preset(StrEnum):
    """How big a kernel run's sizes are, and how long each case is timed."""

    SMOKE = "smoke"  # working sets that stay in the caches: the kernels run, no main-memory rate
    QUICK = "quick"
    FULL = "full"


PRESETS = tuple(preset.value for preset in Preset)  # plain strings: what people type and files hold


@dataclass
class Prepared:
    """What the runner times (``launch``), how it verifies the work (``check``), and what
    frees resources beyond memory (``close``, always called, also after a cancel)."""

    launch: Callable[[], object]
    check: Callable[[], str | None]  # None when the result matches the reference, else why not
    close: Callable[[], None] = lambda: None
    outputs: tuple = ()  # the arrays the check reads (exposed for inspection and tests)


@dataclass(frozen=True)
class Case:
    suite: str
    kernel: str
    dtype: str
    size: dict[str, int]
    flops: int
    bytes: int
    prepare: Callable[[], Prepared] = field(compare=False, repr=False)
    convention: str = ""  # how bytes are counted, when not obvious
    param: dict[str, int] = field(default_factory=dict)  # the swept knob (threads, blocks, k, …)
    dram_traffic: bool = True  # bytes are memory traffic (not only compulsory traffic)

    @property
    def label(self) -> str:
        size = "×".join(str(v) for v in self.size.values())
        knob = " ".join(f"{k}={v}" for k, v in self.param.items())
        return f"{self.suite}/{self.kernel} {self.dtype} {size} {knob}".strip()


@dataclass(frozen=True)
class Skip:
    """A case a backend cannot run, with the reason."""

    suite: str
    kernel: str
    dtype: str
    reason: str


def threads_for(backend) -> int:
    """Threads for a CPU kernel: one per core NumPy may use (the CPU description's count)."""
    return max(1, backend.cpu.threads)


def split(n: int, parts: int) -> list[tuple[int, int]]:
    """``range(n)`` cut into ``parts`` contiguous pieces of nearly equal size, as (start,
    end) pairs (empty pieces left out)."""
    bounds = np.linspace(0, n, parts + 1).astype(int)
    return [(lo, hi) for lo, hi in itertools.pairwise(bounds.tolist()) if hi > lo]


class OnThreads:
    """A launch that runs ``work(*part)`` for every part, one thread each (inline when there
    is a single part; NumPy releases the GIL inside its calls), with ``close`` for the
    threads. CPU kernels use it to take every core, as STREAM and frameworks do."""

    def __init__(self, work: Callable[..., object], parts: list[tuple], name: str) -> None:
        self.work, self.parts = work, parts
        from concurrent.futures import ThreadPoolExecutor  # (not at start-up: the kernel panel lists presets)

        self.pool = ThreadPoolExecutor(len(parts), f"explorer-{name}") if len(parts) > 1 else None

    def __call__(self) -> None:
        if self.pool is None:
            for part in self.parts:
                self.work(*part)
            return
        for future in [self.pool.submit(self.work, *part) for part in self.parts]:
            future.result()

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True)


def square_side_beyond_cache(backend, itemsize: int, minimum: int) -> int:
    """Side of a square matrix (a multiple of 1024) larger than the backend's streaming
    working set, so reading it once per launch comes from main memory, not a cache."""
    side = minimum
    while side * side * itemsize < backend.streaming_bytes():
        side += 1024
    return side


def sample_indices(n: int, count: int = 64) -> list[int]:
    """Evenly spread indices for spot checks (first, last and in between)."""
    if n <= count:
        return list(range(n))
    step = (n - 1) / (count - 1)
    return sorted({round(i * step) for i in range(count)})


def relative_error(got, expected) -> float:
    """Largest deviation relative to the largest expected magnitude (a normwise error, so
    values that should be near zero, like normalised activations, do not blow it up)."""
    import numpy as np

    got = np.asarray(got, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    if not expected.size:
        return 0.0
    if not np.all(np.isfinite(got)):
        return float("inf")
    scale = max(float(np.max(np.abs(expected))), 1e-30)
    return float(np.max(np.abs(got - expected))) / scale


def within(got, expected, tolerance: float, what: str) -> str | None:
    error = relative_error(got, expected)
    if error <= tolerance:
        return None
    return f"{what}: relative error {error:.2g} exceeds {tolerance:.0e}"


# Tolerances for spot checks, by precision (sums of many terms in low precision drift).
TOLERANCE = {"fp64": 1e-9, "fp32": 1e-4, "tf32": 1e-2, "fp16": 2e-2, "bf16": 5e-2}
