"""Every kernel declares its FLOPs and bytes analytically: checked against hand counts."""

import pytest

from explorer.kernels import suites
from explorer.kernels.cases import Case, Skip
from explorer.kernels.suites import attention, gemm, stream


def cases_by(backend, suite, preset="smoke"):
    return [c for c in suites.SUITES[suite].cases(backend, preset) if isinstance(c, Case)]


def test_stream_counts_the_stream_way(numpy_backend):
    found = {c.kernel: c for c in cases_by(numpy_backend, "stream")}
    n = found["triad"].size["n"]
    assert n == (3 << 20) // 12  # three fp32 arrays in the smoke working set
    assert (found["copy"].flops, found["copy"].bytes) == (0, 8 * n)
    assert (found["scale"].flops, found["scale"].bytes) == (n, 8 * n)
    assert (found["add"].flops, found["add"].bytes) == (n, 12 * n)
    assert (found["triad"].flops, found["triad"].bytes) == (2 * n, 12 * n)


def test_stream_working_set_is_four_times_the_last_level_cache(numpy_backend):
    (triad,) = cases_by(numpy_backend, "stream", "quick")
    assert 3 * triad.size["n"] * 4 >= 4 * numpy_backend.cpu.last_level_cache_bytes * 0.99


def test_intensity_sweep_spans_below_a_quarter_to_many(numpy_backend):
    full = cases_by(numpy_backend, "intensity", "full")
    intensities = [c.flops / c.bytes for c in full]
    assert min(intensities) == pytest.approx(0.125)  # fp64, one multiply-add per element
    assert max(intensities) >= 16
    k4 = next(c for c in cases_by(numpy_backend, "intensity") if c.param["k"] == 4)
    n = k4.size["n"]
    assert (k4.flops, k4.bytes) == (8 * n, 8 * n)  # 2·4 FLOPs, 4 bytes read + 4 written


def test_gemm_counts(numpy_backend):
    square = next(c for c in cases_by(numpy_backend, "gemm") if c.kernel == "square" and c.dtype == "fp32")
    assert square.flops == 2 * 128**3 and square.bytes == 3 * 128 * 128 * 4
    skips = [s for s in suites.SUITES["gemm"].cases(numpy_backend, "full") if isinstance(s, Skip)]
    assert {s.dtype for s in skips} == {"tf32", "fp16", "bf16"}
    assert all(s.reason for s in skips)


def test_memory_bound_gemm_streams_a_matrix_bigger_than_the_caches(numpy_backend):
    skinny = [c for c in cases_by(numpy_backend, "gemm", "quick") if c.kernel == "skinny"]
    assert [c.dtype for c in skinny] == ["fp64", "fp32"]  # fp64 too: CPUs are measured in it
    for case in skinny:
        assert case.size["k"] ** 2 * gemm.ITEMSIZE[case.dtype] >= numpy_backend.streaming_bytes()


def test_decode_batch_intensity_grows_with_batch(numpy_backend):
    found = cases_by(numpy_backend, "decode-batch")
    d = found[0].size["d"]
    for c in found:
        b = c.param["batch"]
        assert c.flops == 2 * b * d * d
        assert c.bytes == (b * d + d * d + b * d) * 4
    intensity = [c.flops / c.bytes for c in found]
    assert intensity == sorted(intensity)


def test_attention_counts_match_the_workload_engine():
    # 2 heads, 64 tokens, head dim 64, fp32, naive: Q·Kᵀ and P·V each 2·2·64²·64 FLOPs,
    # softmax 5 per score; bytes: Q, K, V, O (4 × 2·64·64·4) plus S written, read and
    # rewritten, and P read (4 × 2·64²·4).
    flops, moved = attention.cost(2, 64, 64, 4)
    assert flops == 2 * (2 * 2 * 64 * 64 * 64) + 5 * 2 * 64 * 64
    assert moved == 4 * (2 * 64 * 64 * 4) + 4 * (2 * 64 * 64 * 4)


def test_parallelism_and_memory_ops_counts(numpy_backend):
    for c in cases_by(numpy_backend, "parallelism"):
        assert (c.flops, c.bytes) == (0, 2 * c.size["n"] * 4)
    ops = {c.kernel: c for c in cases_by(numpy_backend, "memory-bound-ops")}
    rows, cols = ops["layernorm"].size["rows"], ops["layernorm"].size["cols"]
    assert ops["layernorm"].flops == 7 * rows * cols
    assert ops["layernorm"].bytes == 2 * rows * cols * 4 + 2 * cols * 4
    assert ops["gelu"].flops == 8 * rows * cols


def test_presets_and_unknown_suites(numpy_backend):
    assert {c.suite for c in suites.plan(numpy_backend, ["smoke"], "quick")} == set(suites.SUITES)
    assert {c.suite for c in suites.plan(numpy_backend, ["gemm"], "smoke")} == {"gemm"}
    with pytest.raises(suites.UnknownSuiteError, match="unknown suite 'gem'"):
        suites.plan(numpy_backend, ["gem"], "quick")


def test_stream_kernels_have_no_temporaries_on_the_cpu(numpy_backend):
    """The triad writes into its output array: no new array per launch."""
    import tracemalloc

    (case,) = [c for c in cases_by(numpy_backend, "stream") if c.kernel == "triad"]
    prepared = stream._prepare(numpy_backend, "triad", "fp32", case.size["n"])
    prepared.launch()
    tracemalloc.start()
    prepared.launch()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < case.size["n"] * 4 / 10  # a temporary would be a whole array
    assert gemm.ITEMSIZE["tf32"] == 4


def test_bytes_in_flight_of_parallelism_points():
    from explorer.kernels.suites.parallelism import in_flight_bytes
    from tests.kernels.test_results import point

    gpu = point(suite="parallelism", kernel="copy", param={"blocks": 108}, flops=0)
    assert in_flight_bytes(gpu) == 108 * 256 * 16
    assert in_flight_bytes(point(suite="parallelism", kernel="copy", param={"threads": 4}, flops=0)) is None
    assert in_flight_bytes(point()) is None


def test_cache_levels_get_working_sets_sized_to_each_level(numpy_backend):
    """A quarter of the level per thread (the level divided among the threads sharing it),
    two elements per index per pass; L1 is a skip with its reason."""
    from explorer.kernels.cases import Skip as SkipCase

    planned = suites.SUITES["cache"].cases(numpy_backend, "quick")
    [l1] = [c for c in planned if isinstance(c, SkipCase)]
    assert "L1" in l1.kernel and "the call would be timed" in l1.reason
    cpu = numpy_backend.cpu
    for case in (c for c in planned if isinstance(c, Case)):
        level = next(c for c in cpu.caches if c.level == case.param["level"] and c.kind != "Instruction")
        threads = case.param["threads"]
        assert case.size["n"] * 4 == level.size_bytes // min(max(1, level.shared_by), threads) // 4
        passes = suites.SUITES["cache"].passes_for(case.size["n"])
        assert case.bytes == 2 * case.size["n"] * 4 * passes * threads
        assert case.flops == case.bytes // 8 and not case.dram_traffic


def test_cache_points_are_their_own_roofs_never_main_memory(numpy_backend):
    from explorer.kernels.results import Point, Results

    def point(level, rate, **kw):
        return Point(suite="cache", kernel=f"scale L{level}", dtype="fp32", size={"n": 1000},
                     param={"level": level, "threads": 1}, flops=1000, bytes=8000,
                     time_median_s=8000 / rate, time_p20_s=8000 / rate, time_p80_s=8000 / rate, **kw)

    stream = Point(suite="stream", kernel="triad", dtype="fp32", size={"n": 1000}, param={}, flops=2000,
                   bytes=12000, time_median_s=1e-6, time_p20_s=1e-6, time_p80_s=1e-6)
    results = Results(machine={}, timer="", preset="quick", suites=("cache",),
                      points=(stream, point(2, 60e9), point(2, 40e9), point(3, 50e9),
                              point(3, 90e9, contended="other programs used 1.00 cores while it ran")))
    assert results.best_bandwidth().value == pytest.approx(12e9)  # main memory: the stream triad
    assert {level: round(c.value / 1e9) for level, c in results.cache_bandwidths().items()} == {2: 60, 3: 50}
