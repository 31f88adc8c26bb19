"""Batched decode: (B × d) @ (d × d) for B = 1 … 1024 at the model precision.

At B = 1 the weights are read to do 2 FLOPs per weight (memory-bound); each extra row of
the batch reuses them, so throughput rises with B until the matrix units saturate. The
intensity is B·d / (2·B + d) FLOP/byte in 16-bit (B / (1 + 2B/d)).
"""

from __future__ import annotations

from functools import partial

from explorer.core.hardware.hardware import GPU
from explorer.core.model import ops
from explorer.kernels.cases import Case, Preset, Skip, square_side_beyond_cache
from explorer.kernels.suites import gemm

SUITE = "decode-batch"


def cases(backend, preset: Preset) -> list[Case | Skip]:
    gpu = backend.device_kind == GPU
    dtype = "fp16" if gpu else "fp32"  # NumPy has no half-precision BLAS
    itemsize = gemm.ITEMSIZE[dtype]
    # The weight matrix must not fit in a cache, or batch 1 would not be memory-bound.
    batches: tuple[int, ...]
    if preset == Preset.SMOKE:
        d, batches = 256, (1, 8, 64)
    elif preset == Preset.QUICK:
        d = square_side_beyond_cache(backend, itemsize, 2048)
        batches = (1, 16, 128, 1024) if gpu else (1, 16, 128, 512)
    else:
        d = square_side_beyond_cache(backend, itemsize, 2048)
        batches = tuple(2**i for i in range(11))
    out: list[Case | Skip] = []
    for b in batches:
        cost = ops.linear(b, d, d, itemsize, itemsize)
        out.append(Case(SUITE, "linear", dtype, {"batch": b, "d": d}, cost.flops, cost.bytes,
                        partial(gemm.prepare_product, backend, dtype, b, d, d),
                        "activations and weights read once, output written once",
                        {"batch": b}, dram_traffic=False))
    return out
