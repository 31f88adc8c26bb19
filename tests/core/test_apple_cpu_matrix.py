"""The Apple M4 Max CPU's roofline bound against CPU GEMMs measured by others.

ANEForge's roofline suite (sbryngelson/ANEForge, contributor "n0madic") timed square fp32
GEMMs on the CPU of an M4 Max MacBook Pro, file
bench/results/rooflines/roofline-apple-m4-max-Mac16_6-c77b1414be16-d11ec8da.json at commit
e8f208aed0cc950a569f435b042a1f6d01c74dca,
https://github.com/sbryngelson/ANEForge/blob/e8f208aed0cc950a569f435b042a1f6d01c74dca/bench/results/rooflines/roofline-apple-m4-max-Mac16_6-c77b1414be16-d11ec8da.json
(machine: '"model_identifier": "Mac16,6"', '"chip": "Apple M4 Max"', '"p_cores": 10',
'"e_cores": 4', '"gpu_cores": 32', '"ram_gb": 36'; the CPU GEMMs are '"dtype": "fp32"'):

    N      gflop              lat_ms               gflops
    4096   137.438953472      45.89279200081364    2994.783003604647
    6144   463.856467968      136.13524999891524   3407.3207929004143
    8192   1099.511627776     328.4929170004034    3347.139529875007

A 10-P-core M4 Max is the binned part: Eclectic Light ("Inside M4 chips: P cores",
https://eclecticlight.co/2024/11/11/inside-m4-chips-p-cores/): "M4 Max, with 12 P and 4 E
cores, also available in a 'binned' variant with only 10 active P cores" and "All CPU cores
are arranged in clusters of up to 6": its ten P-cores need both P-clusters, so it has the
matrix units of the catalogue's 12-P-core part, at the same clocks. A bound for the
catalogue's part is a bound for it.

The bound is the app's own: the product as ``ops.linear`` costs it, under the roofs
``terms.op_roofs`` picks for fp32 on the catalogue's apple-m4-max-cpu, timed by
``terms.compute_time`` and the main-memory roof. A measured time below it would mean the
bound is not one (before the M4 Max CPU listed its SME matrix units, fp32 stopped at the
NEON peak, 1,916.8 GFLOP/s, and every one of these runs beat it).
"""

import pytest

from explorer.core.analysis.terms import compute_time, op_roofs
from explorer.core.model import ops as op

# (N, lat_ms, gflops) as the file gives them, fp32 A (N×N) @ B (N×N) on the CPU.
ANEFORGE_CPU_GEMMS = ((4096, 45.89279200081364, 2994.783003604647),
                      (6144, 136.13524999891524, 3407.3207929004143),
                      (8192, 328.4929170004034, 3347.139529875007))


def _bound_s(hardware, n: int) -> float:
    cost = op.linear(n, n, n, act_bytes=4, weight_bytes=4)  # fp32: 4 bytes a value
    gemm = op.Op.of("gemm", op.Role.FC1, op.MATRIX, cost)
    roofs = op_roofs(hardware, "fp32")
    return max(float(compute_time(gemm, roofs)), float(gemm.bytes) / roofs.bandwidth_bytes_per_s)


@pytest.mark.parametrize(("n", "lat_ms", "gflops"), ANEFORGE_CPU_GEMMS)
def test_measured_m4_max_cpu_gemms_are_not_faster_than_the_bound(catalog, n, lat_ms, gflops):
    hw = catalog["apple-m4-max-cpu"]
    assert 2 * n**3 / (lat_ms * 1e-3) == pytest.approx(gflops * 1e9, rel=1e-9)  # the file's own arithmetic
    assert lat_ms * 1e-3 >= _bound_s(hw, n), (n, lat_ms)


def test_the_fp32_bound_is_the_matrix_units_and_the_measurement_needs_both_p_clusters(catalog):
    """The fastest measured CPU GEMM (3,407 GFLOP/s at N=6144) is above what one P-cluster's
    SME unit and the E-cluster's give together (2 × ... counted once): Accelerate used both
    P-cluster units, which is what the catalogue's two-unit formula counts."""
    hw = catalog["apple-m4-max-cpu"]
    roof = op_roofs(hw, "fp32").matrix
    assert roof.unit == "matrix"
    one_p_cluster = 512 * 4.51e9  # one P-cluster SME unit: 16 × 16 fp32 FMAs a cycle
    e_cluster = 360e9  # the E-cluster SME unit as measured on an M4 iPad
    fastest = max(g for _, _, g in ANEFORGE_CPU_GEMMS) * 1e9
    assert one_p_cluster + e_cluster < fastest <= roof.flops_per_s
    assert roof.flops_per_s == pytest.approx(2 * one_p_cluster + e_cluster)


def test_llama_cpp_products_on_the_m4_max_cpu_keep_the_neon_roofs(catalog):
    """The SME roofs raise the bound's roofs of every precision; llama.cpp's products run on
    NEON (engine-units.yaml), so its expected times keep the vector peaks. The int8 and bf16
    vector roofs are below the SME units' since cpufp measured SMMLA at SDOT's rate of
    products (7.67 TOP/s for SDOT on every pipe against SME's 9.94) and BFMMLA below FMLA
    (bf16 then runs converted to fp32: 1.92 TFLOP/s against SME's 4.98). No vector share
    applies: the device lists every precision on its vector units."""
    from explorer.core.analysis.engine_units import product_peak, read_units

    hw = catalog["apple-m4-max-cpu"]
    assert not any(hw.id in share.devices for share in read_units().shares)
    for precision in ("fp32", "fp16", "bf16", "int8"):
        roof = op_roofs(hw, precision).matrix
        vector = hw.peak(precision, "vector")
        assert product_peak(hw, roof, "llama.cpp", 32) == vector, precision
        assert roof.flops_per_s == max(vector.flops_per_s, hw.peak_flops(precision, "matrix")), precision
    assert all(op_roofs(hw, p).matrix.unit == "matrix" for p in ("fp32", "fp16", "bf16", "int8"))
