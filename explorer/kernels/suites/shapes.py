"""Matrix products of many shapes, for calibrating the expected time (``kernels.calibrate``):
few (2) to many rows M over a matrix that does not fit the caches (from memory-bound to
compute-bound), dot products of short to long depth K, and a tiny product whose time is
the cost of a launch. Counted like ``gemm``: FLOPs 2·m·n·k; A and B read once, C written
once.

The held-out shapes (kernels ``rows-held-out`` and ``depth-held-out``) are never used by a
fit: a calibration is checked by predicting their times (tests/kernels/test_calibrate.py).
"""

from __future__ import annotations

from explorer.core.hardware.hardware import GPU
from explorer.kernels.cases import Case, Preset, Skip, square_side_beyond_cache
from explorer.kernels.suites.gemm import ITEMSIZE, prepare_product, supported

SUITE = "shapes"
# M, over an N × K matrix beyond the caches. One row is left out: BLAS libraries run it as
# a matrix-vector product, another kernel (on a CPU it skips the packing a product pays).
ROWS = (4, 16, 72, 200, 520, 1024)  # some not a multiple of a tile: the fit can tell the tile
DEPTHS = (32, 128, 512, 2048, 8192)  # K, at M = N = the depth sweep's side
HELD_OUT = "-held-out"  # the suffix of the kernels a fit leaves out
HELD_OUT_ROWS = (2, 24, 96, 400)
HELD_OUT_DEPTHS = (64, 1024, 4096)


def dtype_for(backend) -> str | Skip:
    """The precision a calibration measures: bf16 on a GPU (fp16, then fp32, where it
    cannot), fp32 on a CPU (NumPy's fastest BLAS precision)."""
    for dtype in (("bf16", "fp16", "fp32") if backend.device_kind == GPU else ("fp32",)):
        if supported(backend, dtype) is None:
            return dtype
    return Skip(SUITE, "rows", "bf16", "no matrix-product precision works on this device")


def _sizes(backend, preset: Preset, itemsize: int) -> tuple[int, int]:
    """(N = K of the rows sweep, M = N of the depth sweep)."""
    gpu = backend.device_kind == GPU
    if preset == Preset.SMOKE:
        return 256, 64
    wide = square_side_beyond_cache(backend, itemsize, 8192 if gpu else 2048)
    return wide, (8192 if gpu else 512) if preset == Preset.QUICK else (16384 if gpu else 1024)


def cases(backend, preset: Preset) -> list[Case | Skip]:
    """The rows sweep, then the depth sweep, each in order of size with its held-out shapes
    among the others (a machine whose speed drifts during the run shifts both alike), then
    the launch."""
    dtype = dtype_for(backend)
    if isinstance(dtype, Skip):
        return [dtype]
    wide, square = _sizes(backend, preset, ITEMSIZE[dtype])
    rows = sorted([(m, "rows") for m in ROWS] + [(m, "rows" + HELD_OUT) for m in HELD_OUT_ROWS])
    depths = sorted([(k, "depth") for k in DEPTHS] + [(k, "depth" + HELD_OUT) for k in HELD_OUT_DEPTHS])
    return [*(_product(backend, kernel, dtype, m, wide, wide) for m, kernel in rows),
            *(_product(backend, kernel, dtype, square, square, k) for k, kernel in depths),
            _product(backend, "launch", dtype, 8, 8, 8)]  # too small to take any time: a launch


def _product(backend, kernel: str, dtype: str, m: int, n: int, k: int) -> Case:
    return Case(SUITE, kernel, dtype, {"m": m, "n": n, "k": k}, 2 * m * n * k,
                (m * k + k * n + m * n) * ITEMSIZE[dtype], lambda: prepare_product(backend, dtype, m, n, k),
                "A and B read once, C written once", dram_traffic=False)

