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
from common import describe, interleaved_ratio, watched

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    backend = NumpyBackend()
    with tempfile.TemporaryDirectory() as tmp:
        lib, how = compile_triad(Path(tmp))
        if lib is None:
            print(f"skipped: {how}")
            return 0
        n = backend.streaming_bytes() // 12
        prepared = stream._prepare(backend, "triad", "fp32", n)
        blocked = stream._prepare(backend, "triad", "fp32", n, fused=False) if compiled.available() else None
        (a,) = prepared.outputs
        b, c = backend.random(n, "fp32"), backend.random(n, "fp32")
        # Our kernel reads its own b and c; give C the same sizes and the same output array.
        plan = TimingPlan(warmup=2, min_regions=5, max_regions=9, target_s=0.2)
        timer = CpuTimer()

        def ours() -> float:
            return measure(prepared.launch, timer, plan).median_s

        def numpy_blocks() -> float:
            return measure(blocked.launch, timer, plan).median_s

        def c_triad(threads: int):
            def timed() -> float:
                lib.set_threads(threads)
                return measure(lambda: lib.triad(a.ctypes.data, b.ctypes.data, c.ctypes.data, 3.0, n),
                               timer, plan).median_s
            return timed

        def naive() -> float:
            holder = {}

            def launch():
                holder["a"] = b + np.float32(3.0) * c

            return measure(launch, timer, plan).median_s

        # Both kernels must compute the triad before their speeds mean anything.
        lib.triad(a.ctypes.data, b.ctypes.data, c.ctypes.data, 3.0, n)
        np.testing.assert_allclose(a[::4099], (b + np.float32(3.0) * c)[::4099], rtol=1e-6)
        prepared.launch()
        assert prepared.check() is None
        threads = stream.threads_for(backend)
        print(f"triad over 3 × {n:,} fp32 ({3 * n * 4 / 2**20:.0f} MiB); ours on {threads} threads, "
              f"{stream.cpu_method()}; C: {how}")
        for label, c_threads, goal in ((f"ours vs C on {threads} threads", threads, "goal >= 0.85"),
                                       ("ours vs C on 1 thread", 1, "(context)")):
            print(describe(label, interleaved_ratio(ours, c_triad(c_threads), args.rounds), goal))
        if blocked is not None:
            blocked.launch()
            assert blocked.check() is None
            ratio = interleaved_ratio(numpy_blocks, c_triad(threads), args.rounds)
            print(describe(f"NumPy in blocks vs C on {threads} threads", ratio, "(context)"))
            blocked.close()
        ratio = interleaved_ratio(naive, c_triad(threads), args.rounds)
        print(describe(f"naive a = b + q*c vs C on {threads} threads", ratio, "(context)"))
        for c_threads in (threads, 1):
            print(f"C triad on {c_threads} thread(s): {3 * n * 4 / c_triad(c_threads)() / 1e9:.1f} GB/s; "
                  f"ours: {3 * n * 4 / ours() / 1e9:.1f} GB/s (STREAM convention)")
        prepared.close()
    return 0


if __name__ == "__main__":
    with watched():
        code = main()
    sys.exit(code)
