"""STREAM's loops compiled by numba, where the ``numba`` extra is installed: each kernel is
one fused loop over the arrays, split between every core by numba's parallel range (as
STREAM's own OpenMP loop is), so the triad reads ``b`` and ``c`` and writes ``a`` once,
with no second pass and no Python between blocks. On this project's machines it reaches
what a C/OpenMP triad does, where NumPy in cache-sized blocks reaches about three
quarters (``benchmarks/cpu_triad_vs_c.py``). Without numba the kernel lab runs NumPy
(``suites.stream``) and nothing else changes; each point's convention says which ran.

numba is found without being imported (``available``): importing it takes about half a
second, which only a run that uses it pays. Compiled loops are cached on disk by numba, so
only the first run on a machine compiles them (about a second a kernel and type)."""

from __future__ import annotations

import importlib.util
from functools import cache


@cache
def version() -> str | None:
    """numba's version where it is installed, else None (found, not imported)."""
    if importlib.util.find_spec("numba") is None:
        return None
    from importlib import metadata  # (not at start-up: it imports the email package)

    try:
        return metadata.version("numba")
    except metadata.PackageNotFoundError:
        return None


def available() -> bool:
    return version() is not None


@cache
def _loops() -> dict:
    """The four STREAM loops, compiled on first call of each (lazily, per argument types)."""
    from numba import njit, prange

    @njit(parallel=True, cache=True)
    def copy(a, b, c, q):  # one signature for all four: (a, b, c, q)
        for i in prange(a.size):
            c[i] = a[i]

    @njit(parallel=True, cache=True)
    def scale(a, b, c, q):
        for i in prange(c.size):
            b[i] = q * c[i]

    @njit(parallel=True, cache=True)
    def add(a, b, c, q):
        for i in prange(a.size):
            c[i] = a[i] + b[i]

    @njit(parallel=True, cache=True)
    def triad(a, b, c, q):
        for i in prange(a.size):
            a[i] = b[i] + q * c[i]

    return {"copy": copy, "scale": scale, "add": add, "triad": triad}


class CompiledKernel:
    """``kernel`` over the whole arrays as one numba loop on ``threads`` threads; callable
    (one launch), with ``close`` (nothing to release: numba's threads are its own)."""

    def __init__(self, kernel: str, a, b, c, q, threads: int) -> None:
        import numba

        self._loop = _loops()[kernel]
        self._args: tuple = (a, b, c, q)
        # numba.config sets its attributes at import, from the environment: no stub knows them.
        self.threads = max(1, min(threads, numba.config.NUMBA_NUM_THREADS))  # type: ignore[attr-defined]
        self._set_threads = numba.set_num_threads

    def __call__(self) -> None:
        self._set_threads(self.threads)
        self._loop(*self._args)

    def close(self) -> None:
        self._args = ()
