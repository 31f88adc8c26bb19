"""Naive attention softmax(Q·Kᵀ)·V versus sequence length: time and bytes grow with L².

The score matrix is materialised, as in the workload engine's ``naive`` attention, and
FLOPs and bytes come from the same formulas (core/ops.py). On CuPy each head is a 2-D
product: batched (3-D) fp16 ``cupy.matmul`` runs in FP32 and batched bf16 fails, so a
loop over 2-D GEMMs is what reaches the matrix units. That loop costs Python time per
head (about 10 µs a call; the per-head views are made once, in ``_prepare``), so the GPU
lengths start at 1024 tokens. A launch there is well under a millisecond of GPU work: the
timer groups N launches between one pair of CUDA events (``timing.measure``: N from a
calibrating launch, the point's ``launches_per_timing``) and divides by N; FLOPs and
bytes are those of one launch. Grouping hides the gaps between launches only while the
GPU work of a launch outlasts Python's issuing of its ~2 × heads + 6 calls; a point whose
rate falls well below the longer lengths' still times Python. The run checks by timing
that fp16 is not slower than fp32 at the longest length.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from explorer.core.hardware.hardware import GPU
from explorer.core.model import ops
from explorer.kernels.cases import TOLERANCE, Case, Prepared, Preset, within

SUITE = "attention"
ITEMSIZE = {"fp32": 4, "fp16": 2}


def reference(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """One head in float64."""
    s = q @ k.T / np.sqrt(q.shape[-1])
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return (p / p.sum(axis=-1, keepdims=True)) @ v


def _prepare(backend, dtype: str, heads: int, length: int, head_dim: int) -> Prepared:
    xp = backend.xp
    q, k, v = (backend.random((heads, length, head_dim), dtype) for _ in range(3))
    scale = backend.scalar(1 / np.sqrt(head_dim), dtype)
    s = xp.empty((heads, length, length), dtype=q.dtype)
    o = xp.empty_like(q)

    def softmax_in_place(x):
        peak = x.max(axis=-1, keepdims=True)
        xp.subtract(x, peak, out=x)
        xp.exp(x, out=x)
        total = x.sum(axis=-1, keepdims=True)
        xp.divide(x, total, out=x)

    if backend.device_kind == GPU:
        # The 2-D operands of every head, made once: a view costs Python time per launch.
        scores = [(q[h], k[h].T, s[h]) for h in range(heads)]
        values = [(s[h], v[h], o[h]) for h in range(heads)]
        matmul = xp.matmul

        def launch():
            for a, b, out in scores:
                matmul(a, b, out=out)
            xp.multiply(s, scale, out=s)
            softmax_in_place(s)
            for a, b, out in values:
                matmul(a, b, out=out)
    else:
        def launch():
            xp.matmul(q, k.transpose(0, 2, 1), out=s)
            xp.multiply(s, scale, out=s)
            softmax_in_place(s)
            xp.matmul(s, v, out=o)

    def check():
        backend.sync()
        host = [backend.to_host(x[0]).astype(np.float64) for x in (q, k, v)]
        return within(backend.to_host(o[0]), reference(*host), TOLERANCE[dtype], "head 0 output")

    return Prepared(launch, check)


def cost(heads: int, length: int, head_dim: int, itemsize: int) -> tuple[int, int]:
    """FLOPs and bytes of one naive prefill attention (all heads), as the workload engine counts."""
    shape = (1, heads, length, length)
    score = ops.attention_scores(*shape, head_dim, heads, itemsize, itemsize, materialise=True)
    soft = ops.attention_softmax(*shape, itemsize)
    value = ops.attention_values(*shape, head_dim, heads, itemsize, itemsize, materialise=True)
    return score.flops + soft.flops + value.flops, score.bytes + soft.bytes + value.bytes


def cases(backend, preset: Preset) -> list[Case]:
    gpu = backend.device_kind == GPU
    dtypes = ("fp32", "fp16") if gpu else ("fp32",)
    heads, head_dim = (32, 128) if gpu else (8, 64)
    lengths: tuple[int, ...]
    if preset == Preset.SMOKE:
        heads, lengths = 2, (64, 128)
    elif preset == Preset.QUICK:
        lengths = (1024, 2048, 4096) if gpu else (256, 512, 1024)
    else:
        lengths = (1024, 2048, 4096, 8192) if gpu else (256, 512, 1024, 2048)
    out = []
    for dtype in dtypes:
        for length in lengths:
            flops, moved = cost(heads, length, head_dim, ITEMSIZE[dtype])
            out.append(Case(SUITE, "naive", dtype,
                            {"heads": heads, "seq": length, "head_dim": head_dim}, flops, moved,
                            partial(_prepare, backend, dtype, heads, length, head_dim),
                            "score matrix written, read and rewritten by softmax, read by P·V",
                            {"seq": length}))
    return out
