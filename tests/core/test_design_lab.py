"""From CPU to GPU, one design choice at a time: each stage moves the numbers it claims."""

from dataclasses import replace

import pytest

from explorer.core.design_lab import LAB_ID, STAGES, Lab, crossing_batch, lanes
from explorer.core.littles_law import NoLatencyError
from explorer.core.session import WhatIf


@pytest.fixture
def lab(catalog, models):
    return Lab(catalog["xeon-platinum-8480"], catalog["a100-80gb-sxm"], "llama-3-8b", models["llama-3-8b"])


def at(lab, stage, **changes):
    return replace(lab, stage=stage, **changes)


def step_time(lab):
    return lab.analysis().totals.time_s


def test_the_start_is_the_catalogue_cpu(lab):
    assert lab.device() is lab.cpu and lab.session().hardware == ("xeon-platinum-8480",)
    assert lab.params().dtype == "fp32" and lab.params().batch == 1
    assert "56 cores × 32 fp32 lanes × 2 FLOP (a fused multiply-add) × 2 GHz = 7.17 TFLOP/s" in lab.text()


def test_many_simple_cores_raise_the_roof_but_not_the_decode_step(lab):
    assert lanes(lab.gpu)[:1] == (108,) and lanes(lab.gpu)[1] == pytest.approx(128, rel=1e-3)
    cores = at(lab, 1)
    device = cores.device()
    assert device.id == LAB_ID and device.peak_flops("fp32") == 19.5e12
    assert device.bandwidth_bytes_per_s == lab.cpu.bandwidth_bytes_per_s  # still DDR
    assert device.peak("bf16", "matrix") is None  # no tensor cores yet
    assert step_time(cores) == pytest.approx(step_time(lab), rel=0.01)  # memory-bound
    assert "108 SMs × 64 fp32 lanes" in cores.text() and "2.7×" in cores.text()
    assert cores.session().hardware == (LAB_ID, "xeon-platinum-8480")


def test_bytes_in_flight_set_the_bandwidth(lab):
    overlap = at(lab, 2, in_flight_bytes=16 * 1024)
    assert overlap.effective_bandwidth() == pytest.approx(16384 / 406e-9)
    assert overlap.needed_in_flight() == pytest.approx(307.2e9 * 406e-9)
    memory_time = overlap.analysis().totals.memory_time_s
    assert memory_time == pytest.approx(overlap.analysis().totals.bytes / (16384 / 406e-9))
    assert "40.4 GB/s of its 307 GB/s" in overlap.text() and "122 KiB" in overlap.text()
    saturated = at(lab, 2, in_flight_bytes=1 << 20)
    assert saturated.effective_bandwidth() == lab.cpu.bandwidth_bytes_per_s


def test_hbm_pays_only_with_enough_in_flight(lab):
    starved = at(lab, 3, in_flight_bytes=16 * 1024)
    fed = at(lab, 3, in_flight_bytes=1 << 20)
    assert starved.effective_bandwidth() == pytest.approx(16384 / 406e-9)
    assert fed.effective_bandwidth() == 2039e9
    assert step_time(lab) / step_time(fed) == pytest.approx(2039 / 307.2, rel=0.02)
    assert "808 KiB" in fed.text() and "6.6× the CPU's DDR" in fed.text()


def test_tensor_cores_do_not_speed_up_a_memory_bound_step_but_lower_precision_does(lab):
    hbm, matrix = at(lab, 3, in_flight_bytes=1 << 20), at(lab, 4, in_flight_bytes=1 << 20)
    assert matrix.device().peak_flops("bf16", "matrix") == 312e12
    assert step_time(matrix) == pytest.approx(step_time(hbm), rel=1e-9)
    assert "16× the fp32 vector roof" in matrix.text()
    low = at(lab, 5, in_flight_bytes=1 << 20)
    assert low.params().dtype == "bf16"
    assert step_time(matrix) / step_time(low) == pytest.approx(2.0, rel=0.03)


def test_batching_lands_on_the_catalogue_gpu(lab):
    final = at(lab, 6, in_flight_bytes=1 << 20, batch=64)
    assert final.device() is lab.gpu and final.shown() == lab.gpu
    assert final.session().hardware == ("a100-80gb-sxm", "xeon-platinum-8480")
    assert final.session().what_ifs == ()  # enough in flight: the datasheet roof, no what-if
    starved = at(lab, 6, in_flight_bytes=64 * 1024)
    assert starved.session().what_ifs == (("a100-80gb-sxm", WhatIf(in_flight_bytes=65536)),)
    single = at(lab, 5, in_flight_bytes=1 << 20)
    ratio = final.analysis().totals.tokens_per_s / single.analysis().totals.tokens_per_s
    assert ratio > 20
    assert f"{final.analysis().totals.tokens_per_s:,.0f} tokens/s" in final.text()
    assert "catalogue's NVIDIA A100 80 GB SXM4" in final.text()
    short = at(lab, 6, in_flight_bytes=1 << 20, context=128)
    crossing = crossing_batch(short)
    assert crossing is not None
    assert not at(short, 6, batch=crossing).analysis().totals.memory_time_s > \
        at(short, 6, batch=crossing).analysis().totals.compute_time_s


def test_every_stage_has_a_text_and_a_valid_session(lab):
    for stage in range(len(STAGES)):
        s = at(lab, stage)
        assert s.text() and s.session().params == s.params()


def test_the_lab_needs_a_measured_latency_and_a_cpu(catalog, models):
    with pytest.raises(NoLatencyError, match="H100"):
        Lab(catalog["xeon-platinum-8480"], catalog["h100-sxm"], "gpt2", models["gpt2"])
    with pytest.raises(ValueError, match="from a CPU to a GPU"):
        Lab(catalog["a100-40gb-sxm"], catalog["a100-80gb-sxm"], "gpt2", models["gpt2"])
