"""The NVIDIA devices added to the catalogue: derived numbers recomputed, headline figures checked."""

import pytest

from explorer.core.hardware.efficiency import efficiency_for, published
from explorer.core.hardware.hardware import evaluate_formula

NEW = ["a10", "a40", "l40s", "a100-80gb-pcie", "h100-pcie", "h100-nvl", "h200-nvl", "gb200", "gb300",
       "rtx-3090", "rtx-5090", "rtx-6000-ada", "rtx-pro-6000-blackwell",
       "jetson-agx-orin-64gb-maxn", "jetson-agx-orin-64gb-50w", "jetson-agx-orin-64gb-30w",
       "jetson-agx-orin-64gb-15w", "jetson-orin-nano-8gb-15w", "jetson-orin-nano-8gb-25w",
       "jetson-orin-nano-8gb-maxn-super"]


def test_every_new_device_is_present_with_an_expected_time_family(catalog):
    for ident in NEW:
        hw = catalog[ident]
        assert hw.vendor == "NVIDIA" and hw.kind == "gpu"
        assert efficiency_for(hw, published()) is not None, ident


def test_every_derived_number_of_the_new_devices_follows_from_its_formula(catalog):
    checked = 0
    for ident in NEW:
        hw = catalog[ident]
        numbers = [(p.provenance, p.flops_per_s) for p in hw.peaks]
        numbers += [(m.provenance, m.bandwidth_bytes_per_s) for m in hw.memory if m.main]
        numbers += [(x.provenance, x.bandwidth_bytes_per_s) for x in hw.links]
        for provenance, value in numbers:
            if provenance.derived:
                assert evaluate_formula(provenance.formula) == pytest.approx(value, rel=0.005), (
                    ident, provenance.formula)
                checked += 1
    assert checked >= 75


@pytest.mark.parametrize(
    ("ident", "precision", "peak"),
    [
        # Datasheets and whitepapers, dense (half the with-sparsity headline where that is all there is).
        ("h100-pcie", "bf16", 756e12),  # Hopper whitepaper: 756 dense, 1513 sparse
        ("h100-pcie", "fp8", 1513e12),
        ("h100-nvl", "bf16", 1671e12 / 2),
        ("h200-nvl", "fp8", 3341e12 / 2),
        ("a100-80gb-pcie", "bf16", 312e12),
        ("a10", "bf16", 125e12),
        ("a40", "fp16", 149.7e12),
        ("l40s", "fp8", 733e12),
        ("rtx-6000-ada", "fp8", 1457e12 / 2),
        ("rtx-3090", "bf16", 71e12),  # FP32 accumulate, half rate on GeForce
        ("rtx-5090", "bf16", 209.5e12),
        ("gb200", "bf16", 2.5e15),  # 10 PFLOP/s sparse per superchip ÷ 2 GPUs ÷ 2
        ("gb300", "fp8", 5e15),
    ],
)
def test_headline_peaks(catalog, ident, precision, peak):
    assert catalog[ident].peak_flops(precision) == pytest.approx(peak, rel=1e-3)


def test_headline_memory(catalog):
    assert catalog["h100-pcie"].bandwidth_bytes_per_s == 2.0e12
    assert catalog["a100-80gb-pcie"].bandwidth_bytes_per_s == 1.935e12
    assert catalog["h200-nvl"].memory_capacity_bytes == 141 * 2**30
    assert catalog["h100-nvl"].memory_capacity_bytes == 94 * 2**30
    assert catalog["l40s"].bandwidth_bytes_per_s == 864e9
    assert catalog["rtx-5090"].bandwidth_bytes_per_s == 1.792e12
    assert catalog["rtx-pro-6000-blackwell"].memory_capacity_bytes == 96 * 2**30
    assert catalog["jetson-agx-orin-64gb-maxn"].bandwidth_bytes_per_s == pytest.approx(204.8e9)
    assert catalog["jetson-orin-nano-8gb-25w"].bandwidth_bytes_per_s == 102e9


def test_jetson_power_modes_scale_with_the_gpu_clock_and_sms(catalog):
    maxn = catalog["jetson-agx-orin-64gb-maxn"]
    # Half the technical brief's 170 sparse INT8 TOPS of the GPU at MAXN.
    assert maxn.peak_flops("int8") == pytest.approx(85e12, rel=0.01)
    for mode, sms, mhz in (("50w", 16, 828.75), ("30w", 8, 624.75), ("15w", 6, 420.75)):
        hw = catalog[f"jetson-agx-orin-64gb-{mode}"]
        assert hw.specs.cores == sms
        scaled = maxn.peak_flops("fp16") * sms / 16 * mhz / 1301
        assert hw.peak_flops("fp16") == pytest.approx(scaled, rel=1e-3)
    # Orin Nano: 67 sparse INT8 TOPS at 1020 MHz (Super), 40 at 625 MHz.
    assert catalog["jetson-orin-nano-8gb-maxn-super"].peak_flops("int8") == pytest.approx(67e12 / 2, rel=0.01)
    assert catalog["jetson-orin-nano-8gb-15w"].peak_flops("int8") == pytest.approx(40e12 / 2, rel=0.03)
