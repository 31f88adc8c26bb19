"""GPU cache levels for the ``cache`` suite: L2 and shared memory, with CuPy raw kernels
(CuPy's own element-wise kernels would time the launch and DRAM as much as the level).

- L2: every thread reads its share of a buffer over and over with ``__ldcg`` (cached in
  L2, not L1), float4 at a time; after the first pass the buffer is L2-resident. The buffer
  is swept over 1/8, 1/4 and 1/2 of the L2 size the device reports (``gpu.l2_bytes``, from
  the CUDA device attributes; never a catalogue's figure), one point each, stated by the
  ``l2_eighths`` param (1, 2, 4): Hopper's L2 is two partitions, and half of it may already
  spill to HBM. The level's roof is the plateau, the best trusted point of the sweep
  (``Results.cache_bandwidths``). Bytes: the buffer times the passes (reads only); smaller
  buffers get more passes, so every point reads the same bytes per launch.
- Shared memory: each block fills a 32 KiB tile once, then reads it over and over through
  a volatile pointer (the compiler may not keep the values in registers). Bytes: blocks ×
  tile × passes.

Both sum what they read (the buffer and the tile hold ones) into one double, so the check
is exact: the sum must equal the count of values read. The levels are cache-resident by
design: never compared with the device's memory bandwidth."""

from __future__ import annotations

from functools import partial

from explorer.kernels.cases import Case, Prepared, Preset, Skip

SUITE = "cache"
THREADS = 256
TILE_FLOATS = 8192  # 32 KiB of shared memory per block: under the 48 KiB every GPU gives a block
L2_EIGHTHS = (1, 2, 4)  # the L2 buffer sizes, in eighths of the device's L2: 1/8, 1/4, 1/2
CONVENTION_L2 = ("reads from L2: the buffer (1/8, 1/4 or 1/2 of the L2, param l2_eighths) times "
                 "the passes; the L2 roof is the best of the three")
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


def l2_cases(backend, preset: Preset) -> list[Case | Skip]:
    """The L2 sweep: one case per buffer size in ``L2_EIGHTHS``, sized from the L2 the device
    reports (``backend.gpu.l2_bytes``)."""
    l2_size = backend.gpu.l2_bytes
    if not l2_size or l2_size <= 0:
        return [Skip(SUITE, "read L2", "fp32", "the device reports no L2 size: the buffers could "
                                               "not be sized to stay in L2")]
    base_passes = 4 if preset == Preset.SMOKE else 64  # passes over half the L2
    out: list[Case | Skip] = []
    for eighths in L2_EIGHTHS:
        n4 = max(1024, l2_size * eighths // 8 // 16)  # float4 elements in eighths/8 of the L2
        passes = base_passes * max(L2_EIGHTHS) // eighths  # the same bytes per launch at every size
        moved = n4 * 16 * passes
        out.append(Case(SUITE, "read L2", "fp32", {"n": 4 * n4}, moved // 4, moved,
                        partial(_prepare_l2, backend, n4, passes), CONVENTION_L2,
                        {"level": 2, "l2_eighths": eighths, "passes": passes}, dram_traffic=False))
    return out


def cases(backend, preset: Preset) -> list[Case | Skip]:
    """The L2 sweep (1/8, 1/4 and 1/2 of the device's L2) and a shared-memory case (smaller
    in the smoke preset)."""
    blocks = 4 * backend.gpu.sm_count
    shared_passes = 16 if preset == Preset.SMOKE else 256
    shared_bytes = blocks * TILE_FLOATS * 4 * shared_passes
    return [
        *l2_cases(backend, preset),
        Case(SUITE, "read shared", "fp32", {"n": TILE_FLOATS * blocks}, shared_bytes // 4, shared_bytes,
             lambda: _prepare_shared(backend, blocks, shared_passes), CONVENTION_SHARED,
             {"level": 0, "passes": shared_passes}, dram_traffic=False),  # 0: shared memory
    ]
