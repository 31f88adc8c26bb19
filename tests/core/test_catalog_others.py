"""The AMD, Apple, x86 and Arm devices added to the catalogue: each derived number recomputed
from its inputs, and headline figures checked against what their sources publish."""

import re

import pytest

from explorer.core.hardware.efficiency import efficiency_for, published
from explorer.core.hardware.hardware import evaluate_formula

GPUS = ["mi250x", "mi325x", "mi355x", "radeon-pro-w7900", "apple-m4-max", "apple-m3-ultra"]
CPUS = ["apple-m4-max-cpu", "apple-m3-ultra-cpu", "xeon-6980p", "epyc-9755", "ryzen-9-9950x",
        "core-ultra-9-285k", "nvidia-grace", "graviton4", "raspberry-pi-5"]
ARM = ["nvidia-grace", "graviton4", "raspberry-pi-5", "apple-m4-max-cpu", "apple-m3-ultra-cpu"]
GB = 2**30
# CPUs with a published memory bandwidth of their own, measured with all their cores, and
# the family whose every other factor they keep
OWN_MEMORY_SHARE_PARENT = {"raspberry-pi-5": "raspberry-pi-5", "nvidia-grace": "nvidia-grace",
                           "graviton4": "graviton4"}


def test_the_added_devices_are_present_with_their_kind(catalog):
    assert {catalog[i].kind for i in GPUS} == {"gpu"}
    assert {catalog[i].kind for i in CPUS} == {"cpu"}


def test_every_derived_number_of_the_added_devices_is_its_formula(catalog):
    checked = 0
    for ident in GPUS + CPUS:
        hw = catalog[ident]
        numbers = [(p.provenance, p.flops_per_s) for p in hw.peaks]
        numbers += [(m.provenance, m.bandwidth_bytes_per_s) for m in hw.memory if m.main]
        numbers += [(x.provenance, x.bandwidth_bytes_per_s) for x in hw.links]
        for provenance, value in numbers:
            assert provenance.url.startswith(("https://", "http://")), ident
            if provenance.derived:
                assert evaluate_formula(provenance.formula) == pytest.approx(value, rel=1e-3), (
                    ident, provenance.formula)
                checked += 1
    assert checked >= 60


def test_cpu_roofs_are_derived_from_cores_units_lanes_and_clock(catalog):
    for ident in CPUS:
        for peak in catalog[ident].peaks:
            assert peak.provenance.derived and "cores" in peak.provenance.formula, (ident, peak.label)


def test_amd_instinct_headlines(catalog):
    # MI325X datasheet: the MI300X's compute, 256 GB HBM3E at 6 TB/s, 1000 W.
    mi325x = catalog["mi325x"]
    assert mi325x.peak_flops("bf16") == pytest.approx(1307.4e12)
    assert mi325x.peak_flops("fp8") == pytest.approx(2614.9e12)
    assert mi325x.bandwidth_bytes_per_s == 6e12 and mi325x.memory_capacity_bytes == 256 * GB
    assert mi325x.specs.tdp_w == 1000
    # MI355X: 2.5 PFLOP/s bf16, 5.0 fp8, 78.6 TFLOP/s fp64, 288 GB at 8 TB/s, 1400 W, 2.4 GHz.
    mi355x = catalog["mi355x"]
    assert mi355x.peak_flops("bf16") == pytest.approx(256 * 4096 * 2.4e9, rel=1e-4)
    assert mi355x.peak_flops("bf16") == pytest.approx(2.5e15, rel=0.01)
    assert mi355x.peak_flops("fp8") == pytest.approx(5.0e15, rel=0.01)
    assert mi355x.peak_flops("fp64") == pytest.approx(78.6e12)
    assert mi355x.bandwidth_bytes_per_s == 8e12 and mi355x.memory_capacity_bytes == 288 * GB
    assert mi355x.specs.tdp_w == 1400
    with pytest.raises(KeyError):
        mi355x.peak_flops("tf32")  # CDNA 4 has no TF32 matrix instructions
    # Infinity Fabric: 7 links of 128 (CDNA 3) and 153.6 GB/s (CDNA 4), one per other GPU of 8.
    assert {x.name: x.bandwidth_bytes_per_s for x in mi325x.links}["Infinity Fabric"] == 896e9
    links = {x.name: x.bandwidth_bytes_per_s for x in mi355x.links}
    assert links["Infinity Fabric"] == pytest.approx(1075.2e9)


def test_mi250x_is_one_gcd_half_of_the_package(catalog):
    # Package (datasheet): 220 CUs, 383 TFLOP/s fp16, 95.7 fp64 matrix, 128 GB at 3.2768 TB/s, 500 W.
    gcd = catalog["mi250x"]
    assert gcd.specs.cores == 220 // 2
    assert 2 * gcd.peak_flops("fp16") == pytest.approx(383e12)
    assert 2 * gcd.peak_flops("fp64", "matrix") == pytest.approx(95.7e12)
    assert 2 * gcd.memory_capacity_bytes == 128 * GB
    assert 2 * gcd.bandwidth_bytes_per_s == pytest.approx(3.2768e12)
    assert 2 * gcd.specs.tdp_w == 500
    (fabric,) = [x for x in gcd.links if x.group]
    assert fabric.group == 2 and fabric.bandwidth_bytes_per_s == 400e9  # 4 links × 50 GB/s each way


def test_radeon_pro_w7900_headlines(catalog):
    w7900 = catalog["radeon-pro-w7900"]
    assert w7900.peak_flops("fp32") == pytest.approx(61.3e12)
    assert w7900.peak_flops("fp16") == pytest.approx(122.6e12)
    assert w7900.peak_flops("bf16") == pytest.approx(96 * 512 * 2.495e9, rel=1e-3)
    assert w7900.bandwidth_bytes_per_s == 864e9 and w7900.memory_capacity_bytes == 48 * GB


def test_apple_memory_and_lanes(catalog):
    # Apple: M4 Max 546 GB/s up to 128 GB; M3 Ultra 819 GB/s up to 512 GB. CPU and GPU share it.
    for gpu, cpu, bandwidth, capacity in (("apple-m4-max", "apple-m4-max-cpu", 546e9, 128),
                                          ("apple-m3-ultra", "apple-m3-ultra-cpu", 819e9, 512)):
        assert catalog[gpu].bandwidth_bytes_per_s == pytest.approx(bandwidth, rel=0.001)
        assert catalog[cpu].bandwidth_bytes_per_s == catalog[gpu].bandwidth_bytes_per_s
        assert catalog[gpu].memory_capacity_bytes == catalog[cpu].memory_capacity_bytes == capacity * GB
    assert catalog["apple-m3-ultra"].peak_flops("fp32") == pytest.approx(80 * 128 * 2 * 1.398e9, rel=1e-3)
    assert catalog["apple-m4-max"].peak_flops("fp32") == pytest.approx(40 * 128 * 2 * 1.678e9, rel=1e-3)
    # 12 P-cores × 4 NEON FMA pipes × 4 lanes × 2 × 4.51 GHz + 4 E-cores × 2 × 4 × 2 × 2.89 GHz
    assert catalog["apple-m4-max-cpu"].peak_flops("fp32", "vector") == pytest.approx(
        12 * 4 * 4 * 2 * 4.51e9 + 4 * 2 * 4 * 2 * 2.89e9)


def test_x86_roofs(catalog):
    # Granite Rapids AMX: 1024 bf16/fp16 FLOP and 2048 int8 OP a cycle per core; 12 × DDR5-6400.
    gnr = catalog["xeon-6980p"]
    assert gnr.peak_flops("bf16", "matrix") == pytest.approx(128 * 1024 * 3.9e9)
    assert gnr.peak_flops("fp16", "matrix") == pytest.approx(128 * 1024 * 3.9e9)
    assert gnr.peak_flops("int8", "matrix") == pytest.approx(128 * 2048 * 3.9e9)
    assert gnr.bandwidth_bytes_per_s == pytest.approx(12 * 6400e6 * 8)
    # Zen 5: two full 512-bit FMA pipes, twice Zen 4's width per clock.
    assert catalog["epyc-9755"].peak_flops("fp32") == pytest.approx(128 * 2 * 16 * 2 * 4.1e9)
    assert catalog["ryzen-9-9950x"].peak_flops("fp32") == pytest.approx(
        2 * catalog["ryzen-9-7950x"].peak_flops("fp32"))
    assert catalog["ryzen-9-9950x"].peak_flops("int8") == pytest.approx(16 * 2 * 16 * 4 * 2 * 5.7e9)
    # Arrow Lake: no AVX-512 and no bf16 arithmetic; Skymont has four 128-bit FMA pipes.
    arl = catalog["core-ultra-9-285k"]
    assert arl.peak("bf16") is None and arl.peak("fp16") is None
    assert arl.peak_flops("fp32") == pytest.approx(8 * 2 * 8 * 2 * 5.7e9 + 16 * 4 * 4 * 2 * 4.6e9)


def test_arm_roofs(catalog):
    # Grace: 4 × 128-bit SVE2 FMA pipes per core, 16 FP64 FLOP a cycle, at the 3438 MHz maximum
    # NVIDIA's Grace benchmarking guide shows (lscpu "CPU max MHz: 3438.0000"). Its FP64 FMA
    # benchmark reports "GOps/sec;53.1929" on one core at 3.334 GHz, so the roof must be at least
    # that per core; NVIDIA's 7.1 TFLOP/s per superchip (about 3.08 GHz) is below the bound.
    grace = catalog["nvidia-grace"]
    assert grace.peak_flops("fp64") == pytest.approx(72 * 4 * 2 * 2 * 3.438e9)
    assert grace.peak_flops("fp64") / 72 >= 53.1929e9
    assert 2 * grace.peak_flops("fp64") >= 7.1e12
    assert 2 * catalog["nvidia-grace"].bandwidth_bytes_per_s == 1e12
    # Graviton4: 12 × DDR5-5600 (AWS: 536.7 GB/s), 96 cores at 2.8 GHz.
    g4 = catalog["graviton4"]
    assert g4.bandwidth_bytes_per_s == pytest.approx(536.7e9, rel=0.002)
    assert g4.peak_flops("fp32") == pytest.approx(96 * 4 * 4 * 2 * 2.8e9)
    # Raspberry Pi 5: 4 × Cortex-A76 at 2.4 GHz (2 × 128-bit NEON), 32-bit LPDDR4X-4267, no bf16.
    pi = catalog["raspberry-pi-5"]
    assert pi.peak_flops("fp32") == pytest.approx(4 * 2 * 4 * 2 * 2.4e9)
    assert pi.bandwidth_bytes_per_s == pytest.approx(4267e6 * 4)
    assert pi.peak("bf16") is None


def test_every_added_device_has_a_family_and_arm_cpus_borrow_x86s(catalog):
    families = published()
    by_id = {f.id: f for f in families}
    expected = {"mi325x": "mi300x", "mi355x": "mi300x", "mi250x": "mi300x", "radeon-pro-w7900": "rtx-4090",
                "apple-m4-max": "apple-gpu", "apple-m3-ultra": "apple-gpu", "xeon-6980p": "x86-cpu",
                "epyc-9755": "x86-cpu", "ryzen-9-9950x": "x86-cpu", "core-ultra-9-285k": "x86-cpu",
                **{ident: "arm-cpu" for ident in ("apple-m4-max-cpu", "apple-m3-ultra-cpu")},
                **OWN_MEMORY_SHARE_PARENT}
    for ident, family in expected.items():
        chosen = efficiency_for(catalog[ident], families)
        assert chosen is not None and chosen.id == family, ident
    arm, x86 = by_id["arm-cpu"], by_id["x86-cpu"]
    assert arm.factors.keys() == x86.factors.keys()
    # the memory shares are an Apple M2 Max's STREAM Triad on 8 threads (184.3 of 409.6 GB/s,
    # tests/core/test_apple_cpu_memory_share.py); every other factor is x86-cpu's, and says so
    measured = {"bandwidth", "gemm_bandwidth", "decode_attention"}
    for name, factor in arm.factors.items():
        if name in measured:
            assert factor.value == 0.45 and "STREAM" in factor.note and "M2 Max" in factor.note
            continue
        assert factor.value == x86.factors[name].value, name
        borrowed = factor.note.startswith("borrowed from x86-cpu: no published measurement on ")
        assert factor.stand_in or borrowed or factor == x86.factors[name], name  # or the same source


def test_cpus_with_their_own_memory_measurement_keep_every_other_factor_of_their_kind(catalog):
    """The Raspberry Pi 5 (a read-only kernel on 4 threads: 11.59 of 17.07 GB/s), Grace (NVIDIA's
    STREAM Triad, 820-972 GB/s of a superchip's 1 TB/s) and Graviton4 (ASCT's all-reads peak on
    64 cores: 465.5 GB/s) each have a family of their own: its three memory shares are that
    measurement, every other factor the x86-cpu or arm-cpu one."""
    by_id = {f.id: f for f in published()}
    memory = {"bandwidth", "gemm_bandwidth", "decode_attention"}
    measured = {"raspberry-pi-5": (11.59e9 / catalog["raspberry-pi-5"].bandwidth_bytes_per_s, "arm-cpu",
                                   "4 threads: 11.59 GB/s"),
                "nvidia-grace": ((820e9 + 972e9) / 2 / 1e12, "arm-cpu", "820,000"),
                "graviton4": (465.5e9 / 537.6e9, "arm-cpu", "'All Reads 465.5'")}
    for ident, (share, parent, quoted) in measured.items():
        own, kind = by_id[ident], by_id[parent]
        assert own.devices == (ident,) and ident not in kind.devices
        assert efficiency_for(catalog[ident], published()) is own
        for name, factor in own.factors.items():
            if name in memory:
                assert factor.value == pytest.approx(share, abs=0.005), (ident, name)
                assert quoted in factor.note, (ident, name)
            else:
                assert factor == kind.factors[name], (ident, name)


def test_arm_roofs_count_the_matrix_multiply_instructions(catalog):
    """BFMMLA: 16 bf16 products per 128-bit instruction; SMMLA: 32 int8 products (SDOT: 16).
    Neoverse V2 issues both to any of its four vector pipes (LLVM's V2 model, from Arm's guide);
    the Cortex-A76 has neither (LLVM's A76 features), so the Pi keeps SDOT and no bf16 roof."""
    grace, g4, pi = catalog["nvidia-grace"], catalog["graviton4"], catalog["raspberry-pi-5"]
    assert grace.peak_flops("int8") == pytest.approx(72 * 4 * 32 * 2 * 3.438e9)  # 63.4 TOP/s
    assert grace.peak_flops("bf16") == pytest.approx(72 * 4 * 16 * 2 * 3.438e9)  # 31.7 TFLOP/s
    assert g4.peak_flops("int8") == pytest.approx(96 * 4 * 32 * 2 * 2.8e9)  # 68.8 TOP/s
    assert g4.peak_flops("bf16") == pytest.approx(96 * 4 * 16 * 2 * 2.8e9)  # 34.4 TFLOP/s
    for hw in (grace, g4):
        assert hw.peak_flops("int8") == pytest.approx(2 * hw.peak_flops("bf16")), hw.id
        assert "MMLA" in hw.peak("int8").provenance.formula and "MMLA" in hw.peak("bf16").provenance.formula
        assert hw.peak_flops("bf16") == pytest.approx(4 * hw.peak_flops("fp32", "vector")), hw.id  # 4× FMA
    assert pi.peak_flops("int8") == pytest.approx(4 * 2 * 16 * 2 * 2.4e9) and pi.peak("bf16") is None


def test_apple_cores_run_smmla_at_sdots_rate_and_bf16_below_fp32(catalog):
    """cpufp on an M4 Max, one P-core: SMMLA 477.42 GOPS, SDOT 472.39, FMLA fp32 118.4 GFLOPS
    (14.8 G instructions a second, as SDOT's 472.39 / 32): SMMLA's 32 products issue half as
    often as SDOT's 16, so the int8 roof is SDOT on every pipe, 16 products a cycle; BFMMLA
    ran at 71.96 GFLOPS, below FMLA, so bf16 runs converted to fp32. All 16 cores measured
    5.47 TOP/s and 1.36 TFLOP/s: 0.71 of either roof, under them both."""
    m4, m3 = catalog["apple-m4-max-cpu"], catalog["apple-m3-ultra-cpu"]
    sdot = 12 * 4 * 16 * 2 * 4.51e9 + 4 * 2 * 16 * 2 * 2.89e9
    assert m4.peak_flops("int8", "vector") == pytest.approx(sdot)  # 7.67 TOP/s
    assert m4.peak_flops("int8", "vector") == pytest.approx(4 * m4.peak_flops("fp32", "vector"))
    assert m4.peak_flops("bf16", "vector") == pytest.approx(m4.peak_flops("fp32", "vector"))
    note = m4.peak("int8", "vector").provenance.note
    measured = re.search(r"all 16 cores measured ([0-9.]+) TOP/s \(SMMLA\), ([0-9.]+) of this roof, as their "
                         r"([0-9.]+) TFLOP/s FMLA", note)
    assert measured is not None
    int8, share, fp32 = (float(g) for g in measured.groups())
    assert int8 * 1e12 / sdot == pytest.approx(share, abs=0.005) and share < 1  # under its roof
    assert fp32 * 1e12 / m4.peak_flops("fp32", "vector") == pytest.approx(share, abs=0.01)
    assert m3.peak_flops("int8", "vector") == pytest.approx(4 * m3.peak_flops("fp32", "vector"))
    assert "SDOT" in m4.peak("int8", "vector").provenance.formula
