"""Arithmetic-intensity sweep (mixbench style): one kernel family from below 1/4 to
hundreds of FLOP/byte, tracing the roofline empirically.

Each element is read once from memory, goes through K multiply-adds (x = a·x + b), and is
written back once: 2·K FLOPs for 2·itemsize bytes.
- GPU: ``fma_chain<K>`` (cuda_sources), K a compile-time constant.
- CPU: NumPy has no fused multiply-add, so a pass is ``x *= a; x += b`` (2 FLOPs per
  element) over a block small enough to stay in L2; K passes per block, then the next
  block. Only the first read and the last write of a block reach main memory.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from explorer.core.hardware.hardware import GPU
from explorer.kernels import cuda_sources
from explorer.kernels.cases import Case, Prepared, Preset, sample_indices, within

SUITE = "intensity"
A, B = 0.999, 0.001  # x → a·x + b has the fixed point 1: values stay bounded for any K
ITEMSIZE = {"fp64": 8, "fp32": 4, "fp16": 2}
TOLERANCE = {"fp64": 1e-9, "fp32": 1e-3, "fp16": 1e-3}


def expected_after(x0: np.ndarray, passes: int) -> np.ndarray:
    """Closed form of ``passes`` applications of x → A·x + B, in float64."""
    power = A ** passes
    return power * x0 + B * (1 - power) / (1 - A)


def expected_after_fp16(x0: np.ndarray, passes: int) -> np.ndarray:
    """``passes`` fused multiply-adds in half precision, as ``__hfma2`` rounds them: exact
    product and sum (float64 holds them exactly), one rounding to fp16. Near 1 a step is
    below half an fp16 ulp, so values freeze; the loop stops when nothing changes."""
    a = float(np.float16(A))
    b = float(np.float16(B))
    y = np.asarray(x0, dtype=np.float16)
    for _ in range(passes):
        nxt = (a * y.astype(np.float64) + b).astype(np.float16)
        if np.array_equal(nxt, y):
            break
        y = nxt
    return y.astype(np.float64)


def _prepare(backend, dtype: str, n: int, k: int) -> Prepared:
    xp = backend.xp
    x = backend.random(n, dtype)
    idx = sample_indices(n)
    start = backend.to_host(x[idx]).astype(np.float64)
    launches = [0]
    if backend.device_kind == GPU:
        kernel = cuda_sources.module(xp, dtype).get_function(cuda_sources.template_name(dtype, k))
        count = n // 2 if dtype == "fp16" else n
        threads = 256
        blocks = (count + threads - 1) // threads  # one element per thread
        scalar = np.float32 if dtype != "fp64" else np.float64

        def launch():
            kernel((blocks,), (threads,), (x, np.uint64(count), scalar(A), scalar(B)))
            launches[0] += 1
    else:
        block = max(1024, backend.cache_bytes // ITEMSIZE[dtype])
        a, b = backend.scalar(A, dtype), backend.scalar(B, dtype)

        def launch():
            for lo in range(0, n, block):
                view = x[lo:lo + block]
                for _ in range(k):
                    xp.multiply(view, a, out=view)
                    xp.add(view, b, out=view)
            launches[0] += 1

    def check():
        backend.sync()
        got = backend.to_host(x[idx])
        passes = launches[0] * k
        expected = expected_after_fp16(start, passes) if dtype == "fp16" else expected_after(start, passes)
        return within(got, expected, TOLERANCE[dtype], f"{launches[0]} launches × {k} multiply-adds")

    return Prepared(launch, check)


def cases(backend, preset: Preset) -> list[Case]:
    gpu = backend.device_kind == GPU
    dtypes: tuple[str, ...]
    ks: tuple[int, ...]
    if preset == Preset.SMOKE:
        dtypes, ks, working_set = ("fp32",), (1, 4), 2 << 20
    elif preset == Preset.QUICK:
        dtypes, ks = ("fp32",), ((1, 8, 64, 512) if gpu else (1, 4, 16))
        working_set = backend.streaming_bytes() // 2
    else:
        dtypes = ("fp64", "fp32", "fp16") if gpu else ("fp64", "fp32")
        ks = tuple(2**i for i in range(0, 12 if gpu else 7))
        working_set = backend.streaming_bytes() // 2
    out = []
    for dtype in dtypes:
        size = ITEMSIZE[dtype]
        n = working_set // size // 2 * 2
        for k in ks:
            how = ("one read and one write per element" if gpu else
                   "one read and one write per element; each pass is two NumPy calls over an "
                   "L2-sized block, whose call overhead (about 1 µs) is included")
            out.append(Case(SUITE, "fma-chain", dtype, {"n": n}, 2 * k * n, 2 * n * size,
                            partial(_prepare, backend, dtype, n, k),
                            how, {"k": k}))
    return out
