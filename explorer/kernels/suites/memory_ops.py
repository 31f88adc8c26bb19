"""Memory-bound ops of a transformer at realistic sizes: softmax, layer norm, GELU.

FLOPs and bytes come from the workload engine's conventions (core/ops.py): each reads
its input and writes its output once (layer norm also reads its scale and shift). Both
backends run them unfused, as a framework does in eager mode: several passes per op
(max, subtract, exp, sum, divide; GELU is nine elementwise calls), so the bytes per
second reported are compulsory traffic, a lower bound on what moves. On the CPU the rows
are split among one thread per core, as a framework's CPU kernels use every core (each
thread runs the same passes over its rows; NumPy releases the GIL inside each call).
"""

from __future__ import annotations

from functools import partial

import numpy as np

from explorer.core.hardware.hardware import CPU, GPU
from explorer.core.model import ops
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

SUITE = "memory-bound-ops"
ITEMSIZE = {"fp32": 4, "fp16": 2}


def _reference(kernel: str, x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> np.ndarray:
    if kernel == "softmax":
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    if kernel == "layernorm":
        mean = x.mean(axis=-1, keepdims=True)
        var = x.var(axis=-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-5) * gamma + beta
    return 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x**3)))


def _prepare(backend, kernel: str, dtype: str, rows: int, cols: int) -> Prepared:
    xp = backend.xp
    x = backend.random((rows, cols), dtype)
    y = xp.empty_like(x)
    gamma, beta = backend.random(cols, dtype), backend.random(cols, dtype)

    def softmax(x, y):
        xp.subtract(x, x.max(axis=-1, keepdims=True), out=y)
        xp.exp(y, out=y)
        xp.divide(y, y.sum(axis=-1, keepdims=True), out=y)

    def layernorm(x, y):
        mean = x.mean(axis=-1, keepdims=True)
        xp.subtract(x, mean, out=y)
        var = xp.square(y).mean(axis=-1, keepdims=True)
        xp.divide(y, xp.sqrt(var + 1e-5), out=y)
        xp.multiply(y, gamma, out=y)
        xp.add(y, beta, out=y)

    def gelu(x, y):
        xp.multiply(x, x, out=y)
        xp.multiply(y, x, out=y)
        xp.multiply(y, 0.044715, out=y)
        xp.add(y, x, out=y)
        xp.multiply(y, 0.7978845608028654, out=y)
        xp.tanh(y, out=y)
        xp.add(y, 1, out=y)
        xp.multiply(y, x, out=y)
        xp.multiply(y, 0.5, out=y)

    body = {"softmax": softmax, "layernorm": layernorm, "gelu": gelu}[kernel]
    # Rows are independent: the CPU splits them over its cores; a GPU runs them as one part.
    parts = split(rows, threads_for(backend)) if backend.device_kind == CPU else [(0, rows)]
    launch = OnThreads(body, [(x[lo:hi], y[lo:hi]) for lo, hi in parts], "memory-ops")

    rows_checked = sample_indices(rows, 4)

    def check():
        backend.sync()
        host = backend.to_host(x[rows_checked]).astype(np.float64)
        g = backend.to_host(gamma).astype(np.float64)
        b = backend.to_host(beta).astype(np.float64)
        return within(backend.to_host(y[rows_checked]), _reference(kernel, host, g, b),
                      max(TOLERANCE[dtype], 1e-5), kernel)

    return Prepared(launch, check, launch.close)


def cost(kernel: str, rows: int, cols: int, itemsize: int) -> ops.Cost:
    if kernel == "softmax":
        return ops.attention_softmax(1, 1, rows, cols, itemsize)
    if kernel == "layernorm":
        return ops.norm(rows, cols, "layernorm", itemsize, itemsize)
    return ops.elementwise(rows * cols, ops.ACTIVATION_FLOPS_PER_ELEMENT["gelu"], 1, itemsize)


def cases(backend, preset: Preset) -> list[Case]:
    gpu = backend.device_kind == GPU
    dtype = "fp32"
    if preset == Preset.SMOKE:
        shapes = {"softmax": (64, 512), "layernorm": (64, 512), "gelu": (64, 512)}
    else:
        # Softmax over the scores of 32 heads × 512 queries × 4096 keys; norm and GELU
        # over 4096 tokens of a 4096-wide model (MLP width 11008 for GELU).
        scale = 1 if gpu or preset == Preset.FULL else 4
        shapes = {"softmax": (32 * 512 // scale, 4096), "layernorm": (4096 // scale, 4096),
                  "gelu": (4096 // scale, 11008)}
    names = ("softmax",) if preset == Preset.QUICK else tuple(shapes)
    out = []
    for name in names:
        rows, cols = shapes[name]
        flops, moved = cost(name, rows, cols, ITEMSIZE[dtype])[:2]
        out.append(Case(SUITE, name, dtype, {"rows": rows, "cols": cols}, flops, moved,
                        partial(_prepare, backend, name, dtype, rows, cols),
                        "input read once, output written once (the unfused passes move more)",
                        {} if gpu else {"threads": threads_for(backend)}, dram_traffic=False))
    return out
