"""GPU cache levels for the ``cache`` suite: L2 and shared memory, with CuPy raw kernels
(CuPy's own element-wise kernels would time the launch and DRAM as much as the level).

- L2: every thread reads its share of a buffer half the size of L2 over and over with
  ``__ldcg`` (cached in L2, not L1), float4 at a time; after the first pass the buffer is
  L2-resident. Bytes: the buffer times the passes (reads only).
- Shared memory: each block fills a 32 KiB tile once, then reads it over and over through
  a volatile pointer (the compiler may not keep the values in registers). Bytes: blocks ×
  tile × passes.

Both sum what they read (the buffer and the tile hold ones) into one double, so the check
is exact: the sum must equal the count of values read. The levels are cache-resident by
design: never compared with the device's memory bandwidth."""

from __future__ import annotations

from explorer.kernels.cases import Case, Prepared

SUITE = "cache"
THREADS = 256
TILE_FLOATS = 8192  # 32 KiB of shared memory per block: under the 48 KiB every GPU gives a block
CONVENTION_L2 = "reads from L2: the buffer (half the L2) times the passes"
CONVENTION_SHARED = "reads from shared memory: blocks × 32 KiB × passes"

SOURCE = r"""
extern "C" __global__ void read_l2(const float4* __restrict__ x, long long n4, int passes,
                                   double* total) {
    float acc = 0.0f;
    long long stride = (long long)blockDim.x * gridDim.x;
    for (int p = 0; p < passes; ++p) {
        for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
            float4 v = __ldcg(&x[i]);
            acc += (v.x + v.y) + (v.z + v.w);
        }
    }
    atomicAdd(total, (double)acc);
}

extern "C" __global__ void read_shared(int passes, double* total) {
    __shared__ float tile[8192];
    for (int i = threadIdx.x; i < 8192; i += blockDim.x) tile[i] = 1.0f;
    __syncthreads();
    volatile float* t = tile;
    float acc = 0.0f;
    for (int p = 0; p < passes; ++p) {
        for (int i = threadIdx.x; i < 8192; i += blockDim.x) acc += t[i];
    }
    atomicAdd(total, (double)acc);
}
"""


def _module(xp):
    return xp.RawModule(code=SOURCE)


def _prepare_l2(backend, n4: int, passes: int) -> Prepared:
    xp = backend.xp
    kernel = _module(xp).get_function("read_l2")
    data = [xp.ones(4 * n4, dtype=xp.float32)]
    total = [xp.zeros(1, dtype=xp.float64)]
    blocks = 4 * backend.gpu.sm_count
    launches = [0]

    def launch() -> None:
        kernel((blocks,), (THREADS,), (data[0], xp.int64(n4), xp.int32(passes), total[0]))
        launches[0] += 1

    def check() -> str | None:
        expected = 4.0 * n4 * passes * launches[0]
        got = float(total[0].get()[0])
        return None if got == expected else f"L2 read sum {got:.6g}, expected {expected:.6g}"

    def close() -> None:
        data.clear()
        total.clear()

    return Prepared(launch, check, close)


def _prepare_shared(backend, blocks: int, passes: int) -> Prepared:
    xp = backend.xp
    kernel = _module(xp).get_function("read_shared")
    total = [xp.zeros(1, dtype=xp.float64)]
    launches = [0]

    def launch() -> None:
        kernel((blocks,), (THREADS,), (xp.int32(passes), total[0]))
        launches[0] += 1

    def check() -> str | None:
        expected = float(TILE_FLOATS) * passes * blocks * launches[0]
        got = float(total[0].get()[0])
        return None if got == expected else f"shared-memory read sum {got:.6g}, expected {expected:.6g}"

    return Prepared(launch, check, total.clear)


def cases(backend, preset: str) -> list[Case]:
    """An L2 case and a shared-memory case (smaller in the smoke preset)."""
    gpu = backend.gpu
    n4 = max(1024, gpu.l2_bytes // 2 // 16)  # float4 elements in half the L2
    passes = 4 if preset == "smoke" else 64
    l2_bytes = n4 * 16 * passes
    blocks = 4 * gpu.sm_count
    shared_passes = 16 if preset == "smoke" else 256
    shared_bytes = blocks * TILE_FLOATS * 4 * shared_passes
    return [
        Case(SUITE, "read L2", "fp32", {"n": 4 * n4}, l2_bytes // 4, l2_bytes,
             lambda: _prepare_l2(backend, n4, passes), CONVENTION_L2, {"level": 2, "passes": passes},
             dram_traffic=False),
        Case(SUITE, "read shared", "fp32", {"n": TILE_FLOATS * blocks}, shared_bytes // 4, shared_bytes,
             lambda: _prepare_shared(backend, blocks, shared_passes), CONVENTION_SHARED,
             {"level": 0, "passes": shared_passes}, dram_traffic=False),  # 0: shared memory
    ]
