"""Each kernel checks its own result against a reference: correct runs pass, corrupted fail."""

import numpy as np
import pytest

from explorer.kernels import suites
from explorer.kernels.cases import Case
from explorer.kernels.suites import gemm, intensity, stream


@pytest.mark.parametrize("suite", list(suites.SUITES))
def test_every_smoke_kernel_passes_its_check(numpy_backend, suite):
    for case in suites.SUITES[suite].cases(numpy_backend, "smoke"):
        if not isinstance(case, Case):
            continue
        prepared = case.prepare()
        try:
            for _ in range(3):
                prepared.launch()
            assert prepared.check() is None, case.label
        finally:
            prepared.close()


def test_a_wrong_stream_result_is_caught(numpy_backend):
    prepared = stream._prepare(numpy_backend, "triad", "fp32", 4096)
    prepared.launch()
    assert prepared.check() is None
    prepared.outputs[0][0] += 1.0  # a = b + q·c no longer holds at the first index
    assert "relative error" in prepared.check()


def test_intensity_check_follows_every_launch(numpy_backend):
    prepared = intensity._prepare(numpy_backend, "fp32", 10_000, 8)
    for _ in range(7):
        prepared.launch()
    assert prepared.check() is None
    # The closed form after 56 passes differs from after 64: a skipped launch would show.
    x0 = np.array([0.5, 1.4])
    assert not np.allclose(intensity.expected_after(x0, 56), intensity.expected_after(x0, 64), rtol=1e-3)


def test_gemm_spot_check_detects_a_wrong_product(numpy_backend):
    a = numpy_backend.random((64, 64), "fp32")
    b = numpy_backend.random((64, 64), "fp32")
    c = a @ b
    assert gemm.spot_check(numpy_backend, a, b, c, "fp32") is None
    c[-1, -1] *= 1.01
    assert "fp32 product" in gemm.spot_check(numpy_backend, a, b, c, "fp32")


def test_random_data_is_never_zero(numpy_backend):
    x = numpy_backend.random(100_000, "fp16")
    assert x.min() >= 0.5 and x.max() <= 1.5 and len(np.unique(x)) > 100


def test_fp16_chain_freezes_as_hardware_rounding_does():
    # In fp16, a step x → 0.999·x + 0.001 near 1 is below half an ulp: values stop moving,
    # far from the float64 closed form (which tends to 1). The check follows the rounding.
    x0 = np.array([0.5, 0.75, 1.25, 1.4990234375])
    frozen = intensity.expected_after_fp16(x0, 100_000)
    assert np.array_equal(frozen, intensity.expected_after_fp16(x0, 2_000))
    assert np.max(np.abs(frozen - intensity.expected_after(x0, 100_000))) > 0.05
    one_step = intensity.expected_after_fp16(x0, 1)
    assert np.array_equal(one_step, (np.float16(0.999) * x0.astype(np.float16).astype(np.float64)
                                     + float(np.float16(0.001))).astype(np.float16))


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("kernel", ["copy", "scale", "add", "triad"])
def test_stream_on_several_threads_in_blocks_computes_every_element(numpy_backend, threads, kernel,
                                                                    monkeypatch):
    """Every core takes part, each over its part in blocks: an uneven split (3 threads,
    blocks of 4096, 20,011 elements) still computes every element once."""
    from dataclasses import replace

    from explorer.kernels.backends import NumpyBackend

    monkeypatch.setattr(stream, "block_elements", lambda backend, itemsize: 4096)
    backend = NumpyBackend(cpu=replace(numpy_backend.cpu, threads=threads))
    prepared = stream._prepare(backend, kernel, "fp32", 20_011, fused=False)
    try:
        parts = prepared.launch.parts
        sizes = [[len(a) for a, _, _ in part] for part in parts]
        assert sizes == ([[4096] * 4 + [3627]] if threads == 1 else  # 6670, 6670 and 6671 each
                         [[4096, 2574], [4096, 2574], [4096, 2575]])
        prepared.launch()
        assert prepared.check() is None
    finally:
        prepared.close()


@pytest.mark.parametrize("kernel", ["copy", "scale", "add", "triad"])
@pytest.mark.parametrize("dtype", ["fp32", "fp64"])
def test_stream_compiled_by_numba_computes_every_element_on_every_core(numpy_backend, kernel, dtype):
    pytest.importorskip("numba", reason="numba is not installed: pip install 'roofline-explorer[numba]'")
    from explorer.kernels.compiled import CompiledKernel

    prepared = stream._prepare(numpy_backend, kernel, dtype, 20_011, fused=True)
    try:
        assert isinstance(prepared.launch, CompiledKernel)
        assert prepared.launch.threads == numpy_backend.cpu.threads
        prepared.launch()
        assert prepared.check() is None
        output = prepared.outputs[0]
        before = output.copy()
        prepared.launch()  # the same inputs: the same result, every element written
        np.testing.assert_array_equal(output, before)
    finally:
        prepared.close()


@pytest.mark.parametrize("found", [False, True])
def test_stream_records_its_thread_count_and_what_ran(numpy_backend, monkeypatch, found):
    from explorer.kernels import compiled, suites

    monkeypatch.setattr(compiled, "version", lambda: "0.68.1" if found else None)
    cases = [c for c in suites.SUITES["stream"].cases(numpy_backend, "quick")]
    assert [c.param for c in cases] == [{"threads": numpy_backend.cpu.threads}]
    method = "one fused loop compiled by numba 0.68.1" if found else "NumPy in cache-sized blocks"
    assert cases[0].convention.endswith(f"; {numpy_backend.cpu.threads} threads, {method}")


@pytest.mark.parametrize("kernel", ["softmax", "layernorm", "gelu"])
def test_memory_bound_ops_split_over_threads_compute_every_row(numpy_backend, kernel):
    """Rows split among three threads (64 rows: 21, 21, 22) give the reference result."""
    from dataclasses import replace

    from explorer.kernels.backends import NumpyBackend
    from explorer.kernels.suites import memory_ops

    backend = NumpyBackend(cpu=replace(numpy_backend.cpu, threads=3))
    prepared = memory_ops._prepare(backend, kernel, "fp32", 64, 512)
    try:
        prepared.launch()
        assert prepared.check() is None
    finally:
        prepared.close()
    [case] = [c for c in memory_ops.cases(backend, "full") if c.kernel == kernel]
    assert case.param == {"threads": 3}
