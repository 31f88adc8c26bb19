"""The kernels on a real GPU. Skipped, with the reason, where CuPy or a device is missing."""

import pytest

from explorer.kernels.reference import Reference, match_device
from explorer.kernels.runner import drive, run
from explorer.kernels.suites import gemm, intensity, parallelism

pytestmark = pytest.mark.gpu


def test_smoke_suite_on_the_gpu_passes_every_check(cupy_backend, catalog):
    match = match_device(cupy_backend.gpu.name, catalog)
    reference = Reference.from_hardware(match) if match else None
    results = drive(run(cupy_backend, ["smoke"], reference=reference))
    assert results.points and not results.cancelled
    failed = [(p.suite, p.kernel, p.dtype, p.check) for p in results.points if p.check]
    assert not failed
    assert results.machine["gpu"]["name"] == cupy_backend.gpu.name


@pytest.mark.parametrize("dtype", ["fp64", "fp32", "fp16"])
def test_intensity_kernels_compute_the_closed_form(cupy_backend, dtype):
    prepared = intensity._prepare(cupy_backend, dtype, 1 << 16, 16)
    for _ in range(3):
        prepared.launch()
    assert prepared.check() is None


def test_parallelism_copy_kernel(cupy_backend):
    prepared = parallelism._prepare_gpu(cupy_backend, 1 << 20, 7)
    prepared.launch()
    assert prepared.check() is None


def test_tf32_changes_rounding_and_speed(cupy_backend):
    reason = gemm.supported(cupy_backend, "tf32")
    if reason:
        pytest.skip(reason)
    results = drive(run(cupy_backend, ["gemm"], "quick"))
    notes = [n for n in results.notes if n.startswith("TF32 square")]
    assert notes and "engaged" in notes[0] and "NOT" not in notes[0]


def test_fp16_attention_is_not_slower_than_fp32(cupy_backend):
    results = drive(run(cupy_backend, ["attention"], "quick"))
    note = next(n for n in results.notes if n.startswith("attention at seq"))
    assert "as it should" in note
