"""Matrix products per precision: square (compute-bound) and skinny (memory-bound).

FLOPs 2·m·n·k; bytes: A, B read once and C written once (the compulsory traffic; a BLAS
moves more when tiles do not fit its caches). TF32 is a GPU matrix-unit mode for fp32
data: CuPy's compute type for fp32 products is set explicitly around every product (TF32
for the tf32 cases, plain FP32 otherwise, whatever CUPY_TF32 says), and the run checks
that TF32 changed the speed of the square product.
"""

from __future__ import annotations

from contextlib import contextmanager
from functools import partial

import numpy as np

from explorer.core.hardware.hardware import CPU, GPU
from explorer.kernels.cases import TOLERANCE, Case, Prepared, Preset, Skip, square_side_beyond_cache, within

SUITE = "gemm"
ITEMSIZE = {"fp64": 8, "fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2}


@contextmanager
def fp32_compute(cp, tf32: bool):
    """CuPy's compute type for fp32 products set to TF32 or plain FP32, restored afterwards."""
    from cupy._core import _routines_linalg as linalg

    previous = linalg.get_compute_type(cp.float32)
    linalg.set_compute_type(cp.float32,
                            linalg.COMPUTE_TYPE_TF32 if tf32 else linalg.COMPUTE_TYPE_FP32)
    try:
        yield
    finally:
        linalg.set_compute_type(cp.float32, previous)


def spot_check(backend, a, b, c, dtype: str, rows=(0, -1), cols=(0, -1)) -> str | None:
    """Compare a few entries of C with float64 dot products computed on the host."""
    backend.sync()
    got, expected = [], []
    for i in rows:
        row = backend.to_host(a[i, :]).astype(np.float64)
        for j in cols:
            col = backend.to_host(b[:, j]).astype(np.float64)
            expected.append(row @ col)
            got.append(float(backend.to_host(c[i, j])))
    return within(got, expected, TOLERANCE[dtype], f"{dtype} product")


def prepare_product(backend, dtype: str, m: int, n: int, k: int) -> Prepared:
    xp = backend.xp
    storage = "fp32" if dtype == "tf32" else dtype
    a, b = backend.random((m, k), storage), backend.random((k, n), storage)
    c = xp.empty((m, n), dtype=a.dtype)
    if backend.device_kind == GPU and storage == "fp32":
        def launch():
            with fp32_compute(xp, tf32=dtype == "tf32"):
                xp.matmul(a, b, out=c)
    else:
        def launch():
            xp.matmul(a, b, out=c)
    return Prepared(launch, lambda: spot_check(backend, a, b, c, dtype))


def supported(backend, dtype: str) -> str | None:
    """None if ``backend`` can run ``dtype`` products, else the reason it cannot."""
    if backend.device_kind == CPU:
        return {
            "tf32": "TF32 is a GPU matrix-unit mode",
            "fp16": "NumPy has no half-precision BLAS (its fp16 matmul is a slow loop)",
            "bf16": "NumPy has no bfloat16 type",
        }.get(dtype)
    if dtype == "bf16":
        try:
            bf16 = backend.dtype("bf16")
        except KeyError as exc:
            return str(exc)
        try:  # the type may exist and arrays of it still fail (CuPy 14 needs NumPy >= 2.1.2)
            backend.xp.zeros(2, dtype=bf16).sum()
        except Exception as exc:
            return f"bf16 arrays do not work here: {type(exc).__name__}: {exc}"
    if dtype == "tf32":
        try:
            from cupy._core import _routines_linalg as linalg

            linalg.COMPUTE_TYPE_TF32  # noqa: B018 - present from CuPy 8 on
        except (ImportError, AttributeError):
            return "this CuPy version has no TF32 compute type"
        major = int(backend.gpu.compute_capability.split(".")[0])
        if major < 8:
            return f"TF32 needs compute capability 8.0 or newer; this GPU is {backend.gpu.compute_capability}"
    return None


def cases(backend, preset: Preset) -> list[Case | Skip]:
    gpu = backend.device_kind == GPU
    # Skinny products stream a matrix too large for the caches: memory-bound by design.
    dtypes: tuple[str, ...]
    if preset == Preset.SMOKE:
        square, skinny, dtypes = 128, (4, 256), ("fp64", "fp32")
    elif preset == Preset.QUICK:
        square = 4096 if gpu else 1024
        dtypes = ("fp32", "tf32", "fp16") if gpu else ("fp64", "fp32")
    else:
        square = 8192 if gpu else 2048
        dtypes = ("fp64", "fp32", "tf32", "fp16", "bf16")
    out: list[Case | Skip] = []
    for dtype in dtypes:
        reason = supported(backend, dtype)
        if reason:
            out.append(Skip(SUITE, "square", dtype, reason))
            continue
        size = ITEMSIZE[dtype]
        if preset != Preset.SMOKE:
            skinny = (16, square_side_beyond_cache(backend, size, 2048))
        shapes = [("square", square, square, square), ("skinny", skinny[0], skinny[1], skinny[1])]
        for kernel, m, n, k in shapes:
            out.append(Case(SUITE, kernel, dtype, {"m": m, "n": n, "k": k}, 2 * m * n * k,
                            (m * k + k * n + m * n) * size,
                            partial(prepare_product, backend, dtype, m, n, k),
                            "A and B read once, C written once", dram_traffic=False))
    return out
