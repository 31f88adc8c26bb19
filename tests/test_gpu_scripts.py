"""Every GPU script's planning and reporting, run here under the CuPy double
(tests/fakes/cupy_double: NumPy arrays, CUDA events that read perf_counter, compiled CUDA
that raises "no GPU"): a first run on a GPU may fail only where a GPU is truly needed."""

import argparse
import json
import sys
from pathlib import Path

import pytest

from explorer.core.hardware.catalog import load_catalog
from explorer.kernels import gpuinfo
from explorer.kernels.backends import CupyBackend
from explorer.kernels.reference import Reference, match_device
from explorer.kernels.results import load_results
from tests.fakes import torch_double

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
try:
    import gpu_probe
    import gpu_suite
    import ncu_check
    import timer_agreement
finally:
    sys.path.pop(0)


@pytest.fixture
def gpu(cupy_double, monkeypatch):
    """The GPU backend over the double, with working sets of 64 KiB (not 512 MiB) and no
    half-second warm-up: sizes only, the code paths are a GPU's."""
    monkeypatch.setattr(CupyBackend, "streaming_bytes", lambda self: 64 << 10)
    monkeypatch.setattr(CupyBackend, "warm_up", lambda self, seconds=0.5: None)
    return CupyBackend(0)


def test_the_double_is_a_gpu_to_the_app_and_refuses_compiled_cuda(gpu, cupy_double):
    info = gpuinfo.detect_gpu(0)
    assert isinstance(info, gpuinfo.GpuInfo) and info.name == "NVIDIA H100 80GB HBM3"
    assert info.compute_capability == "9.0" and info.cupy_version.endswith("numpy-double")
    assert isinstance(gpuinfo.detect_gpu(1), gpuinfo.Unavailable)  # one device, as said
    assert gpu.timer.region(lambda: None, 10) >= 0.0  # CUDA events, read by perf_counter
    kernel = cupy_double.RawModule(code="__global__ void k() {}").get_function("k")
    with pytest.raises(cupy_double.NoGpu, match="the CuPy double has no GPU: the CUDA kernel 'k'"):
        kernel((1,), (1,), ())
    with pytest.raises(cupy_double.NoGpu, match="'copy'"):
        cupy_double.RawKernel("extern \"C\" __global__ void copy() {}", "copy")((1,), (1,), ())


def test_the_double_refuses_a_function_its_module_does_not_define(cupy_double):
    """A renamed kernel or a template instance left out of name_expressions fails on a GPU
    at get_function: the double fails there too, so such drift shows in the test suite."""
    module = cupy_double.RawModule(code="template<int N> __global__ void chain(float* x) {}",
                                   name_expressions=("chain<4>",))
    module.get_function("chain<4>")
    with pytest.raises(RuntimeError, match="not among the module's name_expressions"):
        module.get_function("chain<8>")
    with pytest.raises(RuntimeError, match="no kernel named 'triad'"):
        module.get_function("triad")
    with cupy_double.cuda.Device(0):
        pass
    assert cupy_double.cuda.runtime.getDevice() == 0


def test_the_probe_runs_and_says_the_ncu_check_was_not_run(gpu, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(ncu_check, "NCU_PLACES", ())
    assert gpu_probe.main(["--ncu"]) == ncu_check.NOT_RUN
    out = capsys.readouterr().out
    assert "driver API 12080; CUDA runtime 12080; devices 1" in out
    assert "NVML not usable" in out and "foreign: 0" in out
    assert "==CHECK== NOT RUN: ncu was not found" in out


def test_what_ncu_profiles_runs_and_writes_its_counts(gpu, tmp_path):
    facts = tmp_path / "facts.json"
    ncu_check.launch(facts, elements=1 << 12, side=64)
    assert json.loads(facts.read_text()) == {"triad_bytes": 3 * (1 << 12) * 4, "product_flops": 2 * 64**3}


def test_the_suite_judges_a_bench_file_and_fails_only_at_the_raw_kernels(gpu, monkeypatch, tmp_path, capsys):
    results = gpu_suite._suite_results(argparse.Namespace(results=None, preset="smoke", no_load_check=True),
                                       gpu, None, tmp_path / "smoke.json")
    skipped = [s["reason"] for s in results.skipped]
    assert results.points and skipped  # the double measures what NumPy computes
    assert all("no GPU" in reason or "bfloat16" in reason for reason in skipped), skipped
    monkeypatch.setitem(sys.modules, "torch", None)  # no PyTorch: its references are skipped
    out = tmp_path / "references.json"
    monkeypatch.setattr(sys, "argv", ["gpu_suite.py", "--results", str(tmp_path / "smoke.json"),
                                      "--out", str(out), "--rounds", "3"])
    assert gpu_suite.main() == 0
    report = json.loads(out.read_text())
    assert report["datasheet"] == "h100-sxm" and report["fractions_of_datasheet"]
    assert report["references"]["bandwidth"] == {
        "error": "NoGpu: the CuPy double has no GPU: the CUDA kernel 'triad_f4' needs one to run"}
    assert report["references"]["gemm"] == []
    assert "GEMM versus torch.matmul skipped: PyTorch is not installed" in capsys.readouterr().out
    assert load_results(tmp_path / "smoke.json").points == results.points


def test_the_gemm_references_run_each_precision_against_torch(gpu, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "torch", torch_double)
    rows = {row["dtype"]: row for row in gpu_suite.gemm_references(gpu, rounds=3, size=64)}
    assert {"fp32", "tf32", "fp16"} <= set(rows) and rows["fp32"]["ratio_median"] > 0
    assert rows["tf32"]["torch"] == torch_double.__version__
    assert torch_double.get_float32_matmul_precision() == "highest"  # the mode is restored
    assert torch_double.backends.cuda.matmul.allow_tf32 is False
    assert "bf16" not in rows or "error" in rows["bf16"]  # NumPy has no bf16: said, not fatal
    reference = Reference.from_hardware(load_catalog()["h100-sxm"])
    assert gpu_suite._fractions(load_results_of(gpu), load_catalog()["h100-sxm"], reference) == []
    assert "GEMM fp32 64³: ours / torch.matmul" in capsys.readouterr().out


def load_results_of(backend):
    """A run without points: what the fractions of an empty run are."""
    from explorer.kernels.runner import results_of

    return results_of(backend, ["stream"], "smoke", [], None, cancelled=False)


def test_the_timer_agreement_compares_events_with_cupyx(gpu, monkeypatch, capsys):
    monkeypatch.setattr(timer_agreement, "PRESET", "smoke")
    monkeypatch.setattr(timer_agreement, "PLAN", timer_agreement.TimingPlan(1, 3, 3, target_s=0.0))
    assert timer_agreement.main([]) == 0  # the CPU's comparison, then the GPU's
    out = capsys.readouterr().out
    assert "ours / timeit" in out and "CPU median ratio" in out
    assert "ours / cupyx.profiler.benchmark" in out and "GPU median ratio" in out


def test_the_datasheet_is_found_by_the_double_s_device_name():
    assert match_device("NVIDIA H100 80GB HBM3", load_catalog()).id == "h100-sxm"


def test_gpu_energy_is_read_over_a_second_with_the_counter_s_step_found(gpu, monkeypatch):
    """NVML's counter (tests/fakes/nvml_double) moves every 100 ms: the meter finds that step
    at run time and reads windows of 1 s at least, each power within ±10 %."""
    from explorer.kernels.energy import NvmlMeter, meter_for
    from tests.fakes import nvml_double

    monkeypatch.setitem(sys.modules, "pynvml", nvml_double)
    meter = meter_for(gpu)
    assert isinstance(meter, NvmlMeter)
    assert meter.step.seconds == pytest.approx(0.1, abs=0.03)
    assert meter.step.joules == pytest.approx(30.0, rel=0.35)
    assert meter.window_s >= 1.0
    token = meter.start()
    assert meter.stop(token) is None  # a window shorter than a second is not read
