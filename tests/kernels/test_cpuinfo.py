"""The local CPU as the OS describes it, read from fake /proc and /sys trees."""

from pathlib import Path

import pytest

from explorer.kernels.cpuinfo import ClockSource, cpu_model, describe_cpu, flop_per_cycle
from explorer.kernels.reference import Reference

CPUINFO = """processor\t: 0
model name\t: Intel(R) Xeon(R) Platinum 8480+
cpu MHz\t\t: 2000.000
siblings\t: 4
cpu cores\t: 2
flags\t\t: fpu sse2 avx avx2 fma avx512f avx512_bf16 amx_bf16 amx_tile

processor\t: 1
"""


@pytest.fixture
def fake_system(tmp_path, monkeypatch):
    proc = tmp_path / "cpuinfo"
    proc.write_text(CPUINFO)
    sys_cpu = tmp_path / "sys"
    for index, (level, kind, size, shared) in enumerate(
            [(1, "Data", "48K", "0-1"), (1, "Instruction", "32K", "0-1"), (2, "Unified", "2048K", "0-1"),
             (3, "Unified", "105M", "0-3")]):
        d = sys_cpu / "cpu0" / "cache" / f"index{index}"
        d.mkdir(parents=True)
        for name, value in (("level", level), ("type", kind), ("size", size), ("shared_cpu_list", shared)):
            (d / name).write_text(f"{value}\n")
    monkeypatch.setattr("os.cpu_count", lambda: 4)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "3")
    return str(proc), str(sys_cpu)


def test_describe_from_the_os(fake_system):
    cpu = describe_cpu(*fake_system)
    assert cpu.model == "Intel(R) Xeon(R) Platinum 8480+"
    assert cpu.physical_cores == 2  # 4 logical CPUs, 2 cores per 4 siblings
    assert cpu.simd == ("sse2", "avx", "avx2", "fma", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile")
    assert cpu.last_level_cache_bytes == 105 * 2**20
    assert cpu.l2_bytes_per_core == 2 * 2**20
    assert cpu.threads == 3
    assert cpu.max_clock_hz == 2.0e9


def test_the_model_read_alone_is_the_descriptions(fake_system, tmp_path):
    """The hardware list's row reads the model alone (start-up reads no caches or clock)."""
    assert cpu_model(fake_system[0]) == describe_cpu(*fake_system).model == "Intel(R) Xeon(R) Platinum 8480+"
    missing = str(tmp_path / "none")
    assert cpu_model(missing) == describe_cpu(missing, missing).model


def test_derived_peak_is_labelled_with_its_formula(fake_system):
    cpu = describe_cpu(*fake_system)
    fp32 = next(p for p in cpu.peaks if p.precision == "fp32")
    # 2 cores × (2 FMA pipes × 16 lanes × 2 FLOP) × 2.0 GHz
    assert fp32.flops_per_s == pytest.approx(2 * 64 * 2.0e9)
    assert fp32.derived and "AVX-512" in fp32.formula and "2 cores" in fp32.formula
    assert cpu.to_dict()["derived_peaks"][0]["derived"] is True


def test_simd_width_rules():
    assert flop_per_cycle(("avx2", "fma"), "fp64")[0] == 16
    assert flop_per_cycle(("sse2",), "fp32")[0] == 16


def test_missing_files_give_unknowns_not_errors(tmp_path):
    cpu = describe_cpu(str(tmp_path / "none"), str(tmp_path / "none"))
    assert cpu.caches == () and cpu.last_level_cache_bytes == 32 << 20
    assert cpu.model  # platform fallback or "unknown CPU"


def test_a_peak_at_the_reported_clock_is_no_ceiling_for_a_measurement(fake_system):
    """Without cpufreq (a virtual machine, WSL) the clock is /proc/cpuinfo's "cpu MHz", which
    the cores may boost beyond by a factor the OS does not give: this machine's 2 cores
    measured a 6144-square fp32 product at 200 GFLOP/s over a peak derived at 2.60 GHz of
    166, and a laptop's base clock may be a third of its turbo. Compute rates are not judged
    against such a peak; with cpufreq's maximum clock the datasheet tolerance holds."""
    cpu = describe_cpu(*fake_system)
    fp32 = next(p for p in cpu.peaks if p.precision == "fp32")
    assert cpu.clock_source == ClockSource.CURRENT and "boost may run faster" in fp32.formula
    assert cpu.to_dict()["clock_source"] == "current"
    reference = Reference.from_cpu(cpu)
    assert reference.suspect("fp32", 1.2 * fp32.flops_per_s, 0) is None
    assert reference.suspect("fp32", 3.4 * fp32.flops_per_s, 0) is None
    assert "not judged against it" in reference.source


def test_a_peak_at_cpufreqs_maximum_clock_is_a_ceiling(fake_system):
    proc, sys_cpu = fake_system
    (Path(sys_cpu) / "cpu0" / "cpufreq").mkdir()
    (Path(sys_cpu) / "cpu0" / "cpufreq" / "cpuinfo_max_freq").write_text("3800000\n")
    cpu = describe_cpu(proc, sys_cpu)
    fp32 = next(p for p in cpu.peaks if p.precision == "fp32")
    assert cpu.clock_source == ClockSource.MAXIMUM and cpu.max_clock_hz == 3.8e9
    assert fp32.flops_per_s == pytest.approx(2 * 64 * 3.8e9) and "highest clock" in fp32.formula
    assert "not real" in Reference.from_cpu(cpu).suspect("fp32", 1.2 * fp32.flops_per_s, 0)
