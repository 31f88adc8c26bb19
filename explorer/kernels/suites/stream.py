"""STREAM: copy, scale, add, triad over arrays far larger than the caches.

Bytes follow the STREAM convention: copy and scale move 2 elements per index, add and
triad 3, whatever extra traffic the hardware does (write-allocate). No temporaries: every
NumPy call writes into an existing array (``out=``); on the GPU each kernel is one fused
elementwise kernel.

On the CPU, as STREAM itself runs, every core takes part: the arrays are split into one
contiguous part per thread (NumPy's ufuncs release the GIL), and each thread walks its part
in blocks small enough to stay in the cache. NumPy has no fused multiply-add, so the
triad is two in-place passes (``a = c·q``, then ``a += b``); within a block the second pass
reads ``a`` from the cache, so main memory sees what a fused loop moves. Where numba is
installed (the ``numba`` extra, ``kernels.compiled``) each kernel is one fused loop on
every core instead, as STREAM's C is; the point's convention says which ran.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from explorer.core.hardware.hardware import CPU, GPU
from explorer.kernels import compiled
from explorer.kernels.cases import (
    TOLERANCE,
    Case,
    OnThreads,
    Prepared,
    Preset,
    sample_indices,
    split,
    threads_for,
    within,
)

SUITE = "stream"
Q = 3.0
# (elements moved per index, FLOPs per index)
KERNELS = {"copy": (2, 0), "scale": (2, 1), "add": (3, 1), "triad": (3, 2)}
CONVENTION = "STREAM: copy 2, scale 2, add 3, triad 3 elements per index"


def _kernels_gpu(cp):
    return {
        "copy": cp.ElementwiseKernel("T a", "T c", "c = a", "stream_copy"),
        "scale": cp.ElementwiseKernel("T c, T q", "T b", "b = q * c", "stream_scale"),
        "add": cp.ElementwiseKernel("T a, T b", "T c", "c = a + b", "stream_add"),
        "triad": cp.ElementwiseKernel("T b, T c, T q", "T a", "a = b + q * c", "stream_triad"),
    }


def _prepare(backend, kernel: str, dtype: str, n: int, fused: bool | None = None) -> Prepared:
    """The kernel's arrays and launch; on the CPU one numba loop when ``fused`` (None: where
    numba is installed), else NumPy in cache-sized blocks on every core."""
    xp = backend.xp
    a, b, c = (backend.random(n, dtype) for _ in range(3))
    q = backend.scalar(Q, dtype)  # by value: not read from memory per element
    if backend.device_kind == GPU:
        k = _kernels_gpu(xp)
        launches = {
            "copy": lambda: k["copy"](a, c),
            "scale": lambda: k["scale"](c, q, b),
            "add": lambda: k["add"](a, b, c),
            "triad": lambda: k["triad"](b, c, q, a),
        }
    elif compiled.available() if fused is None else fused:
        launches = {kernel: compiled.CompiledKernel(kernel, a, b, c, q, threads_for(backend))}
    else:
        launches = {kernel: ThreadedKernel(backend, kernel, a, b, c, q)}  # its threads: this one only
    idx = sample_indices(n)

    def check():
        backend.sync()
        ha, hb, hc = (backend.to_host(x[idx]).astype("float64") for x in (a, b, c))
        expected = {"copy": (hc, ha), "scale": (hb, Q * hc), "add": (hc, ha + hb),
                    "triad": (ha, hb + Q * hc)}[kernel]
        return within(*expected, TOLERANCE[dtype], kernel)

    output = {"copy": c, "scale": b, "add": c, "triad": a}[kernel]
    launch = launches[kernel]
    return Prepared(launch, check, outputs=(output,), close=getattr(launch, "close", lambda: None))


def _block(a, b, c, q, kernel: str) -> None:
    """One block of one kernel, in place (NumPy, no temporaries)."""
    if kernel == "copy":
        np.copyto(c, a)
    elif kernel == "scale":
        np.multiply(c, q, out=b)
    elif kernel == "add":
        np.add(a, b, out=c)
    else:
        np.multiply(c, q, out=a)
        np.add(a, b, out=a)  # reads the block of a just written, from the cache


def _walk(blocks, q, kernel: str) -> None:
    """One thread's part: its blocks, one after the other."""
    for a, b, c in blocks:
        _block(a, b, c, q, kernel)


class ThreadedKernel:
    """``kernel`` over the whole arrays on ``threads`` threads, each walking its own part
    (``parts``: its blocks) in cache-sized blocks; callable (one launch), with ``close``."""

    def __init__(self, backend, kernel: str, a, b, c, q) -> None:
        self.threads = threads_for(backend)
        block = block_elements(backend, a.itemsize)
        self.parts = [[(a[s:e], b[s:e], c[s:e]) for s, e in _blocks(lo, hi, block)]
                      for lo, hi in split(len(a), self.threads)]
        # A plain function, not a bound method: no cycle keeps the threads after the case.
        self._run = OnThreads(_walk, [(blocks, q, kernel) for blocks in self.parts], "stream")

    def __call__(self) -> None:
        self._run()

    def close(self) -> None:
        self._run.close()


def block_elements(backend, itemsize: int) -> int:
    """Elements per block: every thread's three blocks together fill a quarter of the
    last-level cache (the triad's second pass finds its block there), and a block is never
    smaller than a third of one core's L2 (fewer NumPy calls: each costs about a µs)."""
    cpu = backend.cpu
    share = cpu.last_level_cache_bytes // 4 // (3 * threads_for(backend))
    return max(4096, cpu.l2_bytes_per_core // 3, share) // itemsize


def _blocks(lo: int, hi: int, block: int):
    return [(s, min(s + block, hi)) for s in range(lo, hi, block)]


def cpu_method() -> str:
    """How the CPU kernels run here, for a point's convention."""
    if compiled.available():
        return f"one fused loop compiled by numba {compiled.version()}"
    return "NumPy in cache-sized blocks"


def cases(backend, preset: Preset) -> list[Case]:
    dtype = "fp32" if preset != Preset.FULL else "fp64"
    itemsize = 4 if dtype == "fp32" else 8
    working_set = backend.streaming_bytes() if preset != Preset.SMOKE else 3 << 20
    n = working_set // (3 * itemsize)
    names = ["triad"] if preset == Preset.QUICK else list(KERNELS)
    param = {"threads": threads_for(backend)} if backend.device_kind == CPU else {}
    convention = CONVENTION + (f"; {param['threads']} threads, {cpu_method()}" if param else "")
    out = []
    for name in names:
        moved, flops = KERNELS[name]
        out.append(Case(SUITE, name, dtype, {"n": n}, flops * n, moved * n * itemsize,
                        partial(_prepare, backend, name, dtype, n), convention, dict(param)))
    return out
