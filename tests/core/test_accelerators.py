"""Accelerators without SIMT cores (Google TPUs, Intel Gaudi): a device kind of their own,
their sourced headline figures, and analyses and expected times on each."""

from __future__ import annotations

import pytest

from explorer.core.analysis.analysis import analyze
from explorer.core.analysis.expected import expected_for
from explorer.core.hardware.efficiency import efficiency_for, published
from explorer.core.hardware.hardware import KINDS, DeviceKind, Tier, evaluate_formula, kind_label
from explorer.core.model.workload import WorkloadParams

ACCELERATORS = ("tpu-v5e", "tpu-v5p", "tpu-v6e", "gaudi-2", "gaudi-3")


def test_the_kind_is_listed():
    assert DeviceKind("accelerator") is DeviceKind.ACCELERATOR
    assert DeviceKind.ACCELERATOR in KINDS
    assert kind_label(DeviceKind.ACCELERATOR) == "accelerator"
    assert [kind_label(k) for k in (DeviceKind.CPU, DeviceKind.GPU)] == ["CPU", "GPU"]


# (id, bf16 matrix peak, main memory bytes, its bandwidth, node link's published rate)
HEADLINES = [
    ("tpu-v5e", 197e12, 16e9, 819e9, 400e9),  # Google Cloud TPU v5e page
    ("tpu-v5p", 459e12, 95e9, 2765e9, 1200e9),  # Google Cloud TPU v5p page
    ("tpu-v6e", 918e12, 32e9, 1638e9, 800e9),  # Google Cloud TPU v6e page
    ("gaudi-2", 432e12, 96e9, 2.46e12, 525e9),  # Intel Hot Chips 2024; Intel Gaudi network docs
    ("gaudi-3", 1835e12, 128e9, 3.67e12, 1050e9),
]


@pytest.mark.parametrize(("ident", "bf16", "capacity", "bandwidth", "link"), HEADLINES)
def test_sourced_headline_figures(catalog, ident, bf16, capacity, bandwidth, link):
    hw = catalog[ident]
    assert hw.kind is DeviceKind.ACCELERATOR
    assert hw.peak_flops("bf16", "matrix") == pytest.approx(bf16)
    assert hw.memory_capacity_bytes == pytest.approx(capacity)
    assert hw.bandwidth_bytes_per_s == pytest.approx(bandwidth)
    node = hw.link(Tier.NODE)
    assert node is not None and node.bandwidth_bytes_per_s == pytest.approx(link)
    assert node.direction == "both"
    # The matrix units carry the chip: its vector roof is a small share of its matrix roof.
    assert hw.peak_flops("fp32", "vector") < 0.05 * bf16


def test_int8_and_fp8_peaks(catalog):
    assert catalog["tpu-v5e"].peak_flops("int8") == pytest.approx(393e12)
    assert catalog["tpu-v6e"].peak_flops("int8") == pytest.approx(1836e12)
    assert catalog["gaudi-3"].peak_flops("fp8") == pytest.approx(1835e12)
    assert catalog["gaudi-3"].peak_flops("bf16", "vector") == pytest.approx(28.7e12)


def test_every_derived_number_follows_from_its_formula(catalog):
    for ident in ACCELERATORS:
        hw = catalog[ident]
        numbers = [(p.provenance, p.flops_per_s) for p in hw.peaks]
        numbers += [(m.provenance, m.bandwidth_bytes_per_s) for m in hw.memory]
        numbers += [(x.provenance, x.bandwidth_bytes_per_s) for x in hw.links]
        numbers += [(hw.specs.provenance, hw.specs.boost_clock_hz)]
        for provenance, value in numbers:
            if provenance.derived:
                assert value is not None
                assert evaluate_formula(provenance.formula) == pytest.approx(value, rel=0.005), \
                    (ident, provenance.formula)


def test_gaudi_links_are_a_mesh_of_eight_and_tpu_links_a_torus(catalog):
    for ident in ("gaudi-2", "gaudi-3"):
        node = catalog[ident].link(Tier.NODE)
        assert node is not None and (node.group, node.mesh) == (8, 7)
        network = catalog[ident].link(Tier.NETWORK)
        assert network is not None and network.direction == "each"
    for ident in ("tpu-v5e", "tpu-v5p", "tpu-v6e"):
        node = catalog[ident].link(Tier.NODE)
        assert node is not None and node.group >= 256 and not node.mesh and not node.switch_reduction


def test_each_has_an_efficiency_family(catalog):
    families = published()
    for ident in ACCELERATORS:
        family = efficiency_for(catalog[ident], families)
        assert family is not None and family.covers(catalog[ident]), ident
    gaudi2 = efficiency_for(catalog["gaudi-2"], families)
    assert gaudi2 is not None and gaudi2.gemm == pytest.approx(0.994)
    tpu = efficiency_for(catalog["tpu-v5e"], families)
    assert tpu is not None and tpu.factors["bandwidth"].note.startswith("borrowed from h100: ")


@pytest.mark.parametrize("ident", ACCELERATORS)
def test_llama_3_8b_decode_has_an_analysis_and_an_expected_time(models, catalog, ident):
    hw = catalog[ident]
    a = analyze(models["llama-3-8b"], WorkloadParams(batch=8, context=2048), hw)
    assert a.totals.time_s > 0
    # Decode at batch 8 reads every weight once a step: at least the weights over the bandwidth.
    assert a.totals.time_s >= 16e9 / hw.bandwidth_bytes_per_s * 0.99
    e = expected_for(a)
    assert e is not None and e.band is not None
    assert e.time_s > a.totals.time_s
    assert e.band[0] <= e.time_s <= e.band[1]
