"""Our CPU STREAM triad against a C/OpenMP triad compiled at run time, side by side.

Both run on the same arrays (4× the last-level cache), byte convention STREAM (3 elements
per index). The C loop is compiled with the system compiler at -O3 (-march=native where
supported) with OpenMP and called through ctypes, once with every core's thread (STREAM's
own rule) and once with one thread. Ours is the kernel lab's: where numba is installed (the
``numba`` extra) one fused loop on every core, else one thread per core, each over its part
of the arrays in cache-sized blocks of NumPy; with numba both are measured. Goal: ours ≥
0.85 of C on all cores. The naive NumPy form ``a = b + q * c`` (temporaries, one thread) is
shown for context.

    python benchmarks/cpu_triad_vs_c.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import ctypes
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from common import Ratio, describe, interleaved_ratio, watched

from explorer.kernels import compiled
from explorer.kernels.backends import NumpyBackend
from explorer.kernels.suites import stream
from explorer.kernels.timing import CpuTimer, TimingPlan, measure

C_SOURCE = r"""
#include <stddef.h>
#ifdef _OPENMP
#include <omp.h>
#endif
void set_threads(int n) {
#ifdef _OPENMP
    omp_set_num_threads(n);
#endif
}
void triad(float *restrict a, const float *restrict b, const float *restrict c, float q, long n) {
    #pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) a[i] = b[i] + q * c[i];
}
"""


def compile_triad(workdir: Path):
    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if compiler is None:
        return None, "no C compiler (cc, gcc or clang) on this machine"
    source, library = workdir / "triad.c", workdir / "triad.so"
    source.write_text(C_SOURCE)
    for flags in (["-O3", "-march=native", "-fopenmp"], ["-O3", "-fopenmp"], ["-O3"]):
        result = subprocess.run([compiler, *flags, "-shared", "-fPIC", str(source), "-o", str(library)],
                                capture_output=True, text=True)
        if result.returncode == 0:
            lib = ctypes.CDLL(str(library))
            lib.triad.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_float,
                                  ctypes.c_long]
            lib.set_threads.argtypes = [ctypes.c_int]
            return lib, f"{Path(compiler).name} {' '.join(flags)}"
    return None, f"the compiler failed: {result.stderr.strip()[:200]}"


class Triads:
    """Our triad, NumPy in blocks, the naive form and the C triad on the same arrays, each
    a callable returning seconds per launch (``common.interleaved_ratio`` takes them)."""

    def __init__(self, backend: NumpyBackend, lib, blocks: bool = True) -> None:
        self.n = n = backend.streaming_bytes() // 12
        self.prepared = stream._prepare(backend, "triad", "fp32", n)
        # NumPy in blocks, beside the compiled loop ours is where numba is installed (three
        # more arrays: only when asked for)
        self.blocked = (stream._prepare(backend, "triad", "fp32", n, fused=False)
                        if blocks and compiled.available() else None)
        (self.a,) = self.prepared.outputs  # our kernel reads its own b and c: C gets the same sizes
        self.b, self.c = backend.random(n, "fp32"), backend.random(n, "fp32")
        self.lib, self.threads = lib, stream.threads_for(backend)
        self.plan, self.timer = TimingPlan(warmup=2, min_regions=5, max_regions=9, target_s=0.2), CpuTimer()
        # Both kernels must compute the triad before their speeds mean anything.
        lib.triad(self.a.ctypes.data, self.b.ctypes.data, self.c.ctypes.data, 3.0, n)
        np.testing.assert_allclose(self.a[::4099], (self.b + np.float32(3.0) * self.c)[::4099], rtol=1e-6)
        self.prepared.launch()
        assert self.prepared.check() is None

    def ours(self) -> float:
        return measure(self.prepared.launch, self.timer, self.plan).median_s

    def numpy_blocks(self) -> float:
        if self.blocked is None:
            raise RuntimeError("NumPy in blocks was not prepared (numba is missing, or not asked for)")
        return measure(self.blocked.launch, self.timer, self.plan).median_s

    def c_triad(self, threads: int):
        def timed() -> float:
            self.lib.set_threads(threads)
            return measure(lambda: self.lib.triad(self.a.ctypes.data, self.b.ctypes.data, self.c.ctypes.data,
                                                  3.0, self.n), self.timer, self.plan).median_s
        return timed

    def naive(self) -> float:
        holder = {}

        def launch():
            holder["a"] = self.b + np.float32(3.0) * self.c

        return measure(launch, self.timer, self.plan).median_s

    def close(self) -> None:
        self.prepared.close()
        if self.blocked is not None:
            self.blocked.close()


def ours_over_c(rounds: int) -> Ratio | str:
    """C's time over ours on every core (the goal's figure), or why it cannot be measured."""
    with tempfile.TemporaryDirectory() as tmp:
        lib, how = compile_triad(Path(tmp))
        if lib is None:
            return how
        triads = Triads(NumpyBackend(), lib, blocks=False)
        try:
            return interleaved_ratio(triads.ours, triads.c_triad(triads.threads), rounds)
        finally:
            triads.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        lib, how = compile_triad(Path(tmp))
        if lib is None:
            print(f"skipped: {how}")
            return 0
        t = Triads(NumpyBackend(), lib)
        threads = t.threads
        print(f"triad over 3 × {t.n:,} fp32 ({3 * t.n * 4 / 2**20:.0f} MiB); ours on {threads} threads, "
              f"{stream.cpu_method()}; C: {how}")
        for label, c_threads, goal in ((f"ours vs C on {threads} threads", threads, "goal >= 0.85"),
                                       ("ours vs C on 1 thread", 1, "(context)")):
            print(describe(label, interleaved_ratio(t.ours, t.c_triad(c_threads), args.rounds), goal))
        if t.blocked is not None:
            t.blocked.launch()
            assert t.blocked.check() is None
            ratio = interleaved_ratio(t.numpy_blocks, t.c_triad(threads), args.rounds)
            print(describe(f"NumPy in blocks vs C on {threads} threads", ratio, "(context)"))
        ratio = interleaved_ratio(t.naive, t.c_triad(threads), args.rounds)
        print(describe(f"naive a = b + q*c vs C on {threads} threads", ratio, "(context)"))
        for c_threads in (threads, 1):
            print(f"C triad on {c_threads} thread(s): {3 * t.n * 4 / t.c_triad(c_threads)() / 1e9:.1f} GB/s; "
                  f"ours: {3 * t.n * 4 / t.ours() / 1e9:.1f} GB/s (STREAM convention)")
        t.close()
    return 0


if __name__ == "__main__":
    with watched():
        code = main()
    sys.exit(code)
