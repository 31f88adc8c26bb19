"""This machine's roofs follow its instruction-set flags: /proc/cpuinfo texts of a Zen 4, a
Sapphire Rapids, a Graviton3 (Neoverse V1) and an Alder Lake without AVX-512
(tests/data/cpuinfo/README.md says where each comes from)."""

from pathlib import Path

import pytest

from explorer.kernels.cpu_roofs import CpuFlags, core_rates
from explorer.kernels.cpuinfo import describe_cpu

DATA = Path(__file__).resolve().parents[1] / "data" / "cpuinfo"


def describe(name: str, logical: int, max_khz: int, tmp_path, monkeypatch):
    sys_cpu = tmp_path / "sys"
    (sys_cpu / "cpu0" / "cpufreq").mkdir(parents=True)
    (sys_cpu / "cpu0" / "cpufreq" / "cpuinfo_max_freq").write_text(f"{max_khz}\n")
    monkeypatch.setattr("os.cpu_count", lambda: logical)
    cpu = describe_cpu(str(DATA / name), str(sys_cpu))
    return cpu, {p.precision: p for p in cpu.peaks}


def test_sapphire_rapids_gets_amx_roofs_as_the_catalogue_has_them(tmp_path, monkeypatch, catalog):
    cpu, peaks = describe("sapphire-rapids-8480.txt", 112, 3_800_000, tmp_path, monkeypatch)
    assert cpu.physical_cores == 56 and {"amx_bf16", "amx_int8", "amx_tile"} <= set(cpu.simd)
    xeon = catalog["xeon-platinum-8480"]
    assert peaks["bf16"].flops_per_s == pytest.approx(56 * 1024 * 3.8e9)
    assert peaks["bf16"].flops_per_s == pytest.approx(xeon.peak_flops("bf16", "matrix"))
    assert peaks["int8"].flops_per_s == pytest.approx(xeon.peak_flops("int8", "matrix"))
    assert peaks["bf16"].unit == "matrix"
    assert peaks["bf16"].formula.startswith("56 cores × 1024 BF16 FLOP per cycle per core (AMX) × 3.80 GHz")
    assert "2048 INT8 operations per cycle per core (AMX)" in peaks["int8"].formula
    assert peaks["fp32"].flops_per_s == pytest.approx(xeon.peak_flops("fp32", "vector"))


def test_zen4_runs_avx512_as_two_halves_with_bf16_and_vnni(tmp_path, monkeypatch, catalog):
    cpu, peaks = describe("zen4-epyc-9754.txt", 256, 3_100_000, tmp_path, monkeypatch)
    assert cpu.physical_cores == 128
    clock = 128 * 3.1e9
    assert peaks["fp32"].flops_per_s == pytest.approx(clock * 2 * 8 * 2)  # not 16 lanes
    assert peaks["bf16"].flops_per_s == pytest.approx(clock * 2 * 8 * 2 * 2)
    assert peaks["int8"].flops_per_s == pytest.approx(clock * 2 * 8 * 4 * 2)
    assert peaks["bf16"].unit == "vector" and "AVX512_BF16" in peaks["bf16"].formula
    assert "8 FP32 lanes × 2 BF16 products × 2 FLOP" in peaks["bf16"].formula
    assert "two 256-bit halves" in peaks["fp32"].formula and "AVX512_VNNI" in peaks["int8"].formula
    # the catalogue's EPYC 9654 (Zen 4 too) counts its roofs per core and cycle the same way
    epyc = catalog["epyc-9654"]
    per_core_cycle = epyc.peak_flops("bf16") / (96 * 3.7e9)
    assert peaks["bf16"].flops_per_s / clock == pytest.approx(per_core_cycle)


def test_graviton3_counts_four_128_bit_units_with_bfmmla_and_smmla(tmp_path, monkeypatch):
    cpu, peaks = describe("graviton3-neoverse-v1.txt", 64, 2_600_000, tmp_path, monkeypatch)
    assert cpu.physical_cores == 64 and {"bf16", "i8mm", "asimddp", "sve"} <= set(cpu.simd)
    clock = 64 * 2.6e9
    assert peaks["fp64"].flops_per_s == pytest.approx(clock * 4 * 2 * 2)
    assert peaks["fp32"].flops_per_s == pytest.approx(clock * 4 * 4 * 2)
    # BFMMLA: 2×4 by 4×2 bf16, 16 products per 128 bits; SMMLA: 2×8 by 8×2 int8, 32 products
    assert peaks["bf16"].flops_per_s == pytest.approx(clock * 4 * 16 * 2)
    assert peaks["int8"].flops_per_s == pytest.approx(clock * 4 * 32 * 2)
    assert "128-bit, SVE, Neoverse V1" in peaks["fp32"].formula and "BFMMLA" in peaks["bf16"].formula
    assert "SMMLA" in peaks["int8"].formula


def test_grace_follows_its_flags_to_the_catalogues_neoverse_v2_roofs(tmp_path, monkeypatch, catalog):
    cpu, peaks = describe("grace-neoverse-v2.txt", 72, 3_438_000, tmp_path, monkeypatch)
    assert cpu.physical_cores == 72 and {"sve2", "i8mm", "bf16", "asimddp"} <= set(cpu.simd)
    grace = catalog["nvidia-grace"]
    for precision in ("fp64", "fp32", "bf16", "int8"):
        assert peaks[precision].flops_per_s == pytest.approx(grace.peak_flops(precision, "vector")), precision
    assert peaks["int8"].flops_per_s == pytest.approx(72 * 4 * 64 * 3.438e9)  # 63.4 TOP/s
    assert "128-bit, SVE2, Neoverse V2" in peaks["int8"].formula


def test_arm_roofs_follow_bf16_i8mm_and_dot_product_flags():
    def rates(*flags, part="0xd4f"):
        return {r.precision: r.per_cycle for r in core_rates(CpuFlags(frozenset({"fp", "asimd", *flags}),
                                                                       part=part))}
    v2 = rates("asimddp", "bf16", "i8mm", "sve", "sve2")
    assert v2 == {"fp64": 16, "fp32": 32, "bf16": 128, "int8": 256}
    assert rates("asimddp", "bf16", "i8mm") == v2  # SVE2 on 128-bit pipes adds no rate
    assert rates("asimddp") == {"fp64": 16, "fp32": 32, "int8": 128}  # SDOT: 16 products
    assert rates() == {"fp64": 16, "fp32": 32}  # widened to fp32
    # Cortex-A76 (Raspberry Pi 5): two units, SDOT, no bf16 or i8mm, as the catalogue has it
    a76 = rates("asimddp", "asimdhp", part="0xd0b")
    assert a76 == {"fp64": 8, "fp32": 16, "int8": 64}


def test_a_cpu_without_avx512_has_no_bf16_roof_and_an_avx_vnni_int8_roof(tmp_path, monkeypatch):
    cpu, peaks = describe("alder-lake-i5-12400.txt", 12, 4_400_000, tmp_path, monkeypatch)
    assert cpu.physical_cores == 6 and "avx512f" not in cpu.simd
    assert "bf16" not in peaks  # widened to fp32: no roof of its own
    clock = 6 * 4.4e9
    assert peaks["fp32"].flops_per_s == pytest.approx(clock * 2 * 8 * 2)
    assert peaks["int8"].flops_per_s == pytest.approx(clock * 2 * 8 * 4 * 2)
    assert "AVX-VNNI" in peaks["int8"].formula and "4.40 GHz" in peaks["int8"].formula


def test_the_clock_scales_every_roof(tmp_path, monkeypatch):
    _, slow = describe("sapphire-rapids-8480.txt", 112, 1_900_000, tmp_path / "a", monkeypatch)
    _, fast = describe("sapphire-rapids-8480.txt", 112, 3_800_000, tmp_path / "b", monkeypatch)
    assert all(fast[p].flops_per_s == pytest.approx(2 * slow[p].flops_per_s) for p in fast)


def test_flags_alone():
    plain = {r.precision for r in core_rates(CpuFlags(frozenset({"sse2", "avx", "avx2", "fma"})))}
    assert plain == {"fp64", "fp32"}  # no VNNI, no BF16: no int8 or bf16 roof
    arm = core_rates(CpuFlags(frozenset({"fp", "asimd"}), part="0xd0b"))  # Cortex-A76: two units
    assert next(r for r in arm if r.precision == "fp32").per_cycle == 2 * 4 * 2
    tile_less = {r.precision: r for r in core_rates(CpuFlags(frozenset({"avx512f", "amx_bf16"})))}
    assert "bf16" not in tile_less  # AMX needs its tiles (amx_tile)
