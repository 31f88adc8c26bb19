"""The GPU cache levels of the ``cache`` suite: planned from the device (L2 size, SMs) on
any machine, the kernels' CUDA compiled by nvcc where it is installed, and run for real on
a GPU (gpu marker)."""

import shutil
import subprocess
from types import SimpleNamespace

import pytest

from explorer.kernels.results import cache_label
from explorer.kernels.suites import cache, cache_gpu


def fake_gpu():
    gpu = SimpleNamespace(l2_bytes=50 << 20, sm_count=132)
    return SimpleNamespace(device_kind="gpu", gpu=gpu, xp=None)


def test_cases_are_sized_from_the_device():
    *sweep, shared = cache.cases(fake_gpu(), "quick")
    l2 = sweep[-1]
    assert l2.kernel == "read L2" and l2.param == {"level": 2, "l2_eighths": 4, "passes": 64}
    assert [c.size["n"] * 4 for c in sweep] == [50 << 17, 50 << 18, 25 << 20]  # 1/8, 1/4, 1/2
    assert l2.bytes == (25 << 20) * 64 and l2.flops == l2.bytes // 4  # one add per value read
    assert shared.param["level"] == 0 and shared.bytes == 4 * 132 * 32 * 1024 * 256
    assert not l2.dram_traffic and not shared.dram_traffic  # cache-resident by design
    assert cache_label(0) == "shared memory" and cache_label(2) == "L2"


def test_the_kernels_compile(tmp_path):
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed: the CUDA source is compiled on a GPU machine only")
    source = tmp_path / "cache.cu"
    source.write_text(cache_gpu.SOURCE)
    done = subprocess.run([nvcc, "-ptx", "-arch=sm_80", str(source), "-o", str(tmp_path / "cache.ptx")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    ptx = (tmp_path / "cache.ptx").read_text()
    assert "ld.global.cg" in ptx  # L2, not L1
    assert "ld.volatile.shared" in ptx  # every pass reads shared memory again


@pytest.mark.gpu
def test_the_cache_levels_on_a_gpu(cupy_backend):
    from explorer.kernels.runner import drive, run

    results = drive(run(cupy_backend, ["cache"], "smoke"))
    assert {p.kernel for p in results.points} == {"read L2", "read shared"}
    assert all(p.check is None for p in results.points)
    levels = results.cache_bandwidths()
    assert set(levels) == {0, 2} and levels[0].value > levels[2].value  # shared memory beats L2
