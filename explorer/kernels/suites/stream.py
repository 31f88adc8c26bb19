"""STREAM: copy, scale, add, triad over arrays far larger than the caches.

Bytes follow the STREAM convention: copy and scale move 2 elements per index, add and
triad 3, whatever extra traffic the hardware does (write-allocate) or NumPy does (the
triad is two in-place passes, since NumPy has no fused multiply-add). No temporaries:
every NumPy call writes into an existing array (``out=``); on the GPU each kernel is one
fused elementwise kernel.
"""

from __future__ import annotations

from explorer.kernels.cases import TOLERANCE, Case, Prepared, sample_indices, within

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


def _prepare(backend, kernel: str, dtype: str, n: int) -> Prepared:
    xp = backend.xp
    a, b, c = (backend.random(n, dtype) for _ in range(3))
    q = backend.scalar(Q, dtype)  # by value: not read from memory per element
    if backend.device_kind == "gpu":
        k = _kernels_gpu(xp)
        launches = {
            "copy": lambda: k["copy"](a, c),
            "scale": lambda: k["scale"](c, q, b),
            "add": lambda: k["add"](a, b, c),
            "triad": lambda: k["triad"](b, c, q, a),
        }
    else:
        def triad():
            xp.multiply(c, q, out=a)
            xp.add(a, b, out=a)

        launches = {
            "copy": lambda: xp.copyto(c, a),
            "scale": lambda: xp.multiply(c, q, out=b),
            "add": lambda: xp.add(a, b, out=c),
            "triad": triad,
        }
    idx = sample_indices(n)

    def check():
        backend.sync()
        ha, hb, hc = (backend.to_host(x[idx]).astype("float64") for x in (a, b, c))
        expected = {"copy": (hc, ha), "scale": (hb, Q * hc), "add": (hc, ha + hb),
                    "triad": (ha, hb + Q * hc)}[kernel]
        return within(*expected, TOLERANCE[dtype], kernel)

    output = {"copy": c, "scale": b, "add": c, "triad": a}[kernel]
    return Prepared(launches[kernel], check, outputs=(output,))


def cases(backend, preset: str) -> list[Case]:
    dtype = "fp32" if preset != "full" else "fp64"
    itemsize = 4 if dtype == "fp32" else 8
    working_set = backend.streaming_bytes() if preset != "smoke" else 3 << 20
    n = working_set // (3 * itemsize)
    names = ["triad"] if preset == "quick" else list(KERNELS)
    out = []
    for name in names:
        moved, flops = KERNELS[name]
        out.append(Case(SUITE, name, dtype, {"n": n}, flops * n, moved * n * itemsize,
                        lambda name=name: _prepare(backend, name, dtype, n), CONVENTION))
    return out
