"""From CPU to GPU, one design choice at a time: every stage is made of catalogue parts, a
what-if lives only in the stage that introduces it, and each stage's text holds."""

from dataclasses import replace

import pytest

from explorer.core.hardware.littles_law import NoLatencyError
from explorer.core.model.session import WhatIf
from explorer.core.words.design_lab import (
    BATCHING,
    CORES,
    HBM,
    LAB_ID,
    MATRIX,
    OVERLAP,
    PRECISION,
    STAGES,
    Lab,
    like_for_like,
)


@pytest.fixture
def lab(catalog, models):
    return Lab(catalog["xeon-platinum-8480"], catalog["a100-80gb-sxm"], "llama-3-8b", models["llama-3-8b"])


def at(lab, stage, **changes):
    return replace(lab, stage=stage, **changes)


def step_time(lab):
    return lab.analysis().totals.time_s


def test_each_stage_is_made_of_the_catalogue_parts_it_claims(lab, catalog):
    cpu, gpu = catalog["xeon-platinum-8480"], catalog["a100-80gb-sxm"]
    assert at(lab, 0).device() == cpu and at(lab, 0).parts()["compute"] == cpu.id
    for stage in (CORES, HBM, OVERLAP):
        device = at(lab, stage).device()
        assert device.id == LAB_ID
        assert device.peaks == tuple(p for p in gpu.peaks if p.unit == "vector")
        memory = cpu if stage == CORES else gpu
        # The catalogue's memory level itself: no latency borrowed from another chip.
        assert device.memory == (memory.main_memory,)
        assert at(lab, stage).parts()["memory"] == memory.id
    for stage in (MATRIX, PRECISION, BATCHING):
        assert at(lab, stage).device() == gpu and at(lab, stage).shown() == gpu
        assert at(lab, stage).parts() == {"compute": gpu.id, "memory": gpu.id, "what_if": ""}


def test_the_in_flight_cap_lives_only_in_the_latency_hiding_stage(lab):
    starved = 16 * 1024
    for stage in range(len(STAGES)):
        s = at(lab, stage, in_flight_bytes=starved)
        if stage == OVERLAP:
            assert s.session().what_ifs == ((LAB_ID, WhatIf(in_flight_bytes=starved)),)
            assert s.shown().main_memory.provenance.formula.startswith("Little's law")
        else:
            assert s.session().what_ifs == () and s.shown() == s.device()


def test_the_lab_ends_with_the_gpu_faster_than_the_cpu(lab):
    # Today's lab once ended with the A100 capped at 40 GB/s, 6× slower than the CPU.
    final = at(lab, BATCHING, in_flight_bytes=16 * 1024)
    gpu, cpu = final.analysis().totals.time_s, final.cpu_analysis().totals.time_s
    assert final.effective_bandwidth() == 2039e9
    assert gpu < cpu / 6
    assert "the GPU is 6.6× faster" in final.text() and "nothing derived" in final.text()


def test_many_simple_cores_raise_the_roof_but_not_the_decode_step(lab):
    cores = at(lab, CORES)
    assert cores.device().peak_flops("fp32") == 19.5e12
    assert step_time(cores) == pytest.approx(step_time(lab), rel=0.01)  # memory-bound
    text = cores.text()
    # Lanes, not cores, are the like-for-like count: 108 × 64 against 56 × 32.
    assert "108 SMs × 64 fp32 lanes" in text and "6,912 fp32 lanes against the CPU's 1,792" in text
    # 19.5 TFLOP/s against the Xeon's bound 56 × 2 × 16 × 2 FLOP × 3.8 GHz = 13.62 TFLOP/s: 1.43×
    assert "1.4× the CPU's arithmetic" in text and "no faster" in text and "hybrid" in text


def test_hbm_gives_the_bandwidth_ratio(lab):
    hbm = at(lab, HBM)
    assert hbm.effective_bandwidth() == 2039e9
    assert step_time(lab) / step_time(hbm) == pytest.approx(2039 / 307.2, rel=0.02)
    assert "6.6× the CPU's DDR5" in hbm.text() and "6.6× faster than on the CPU" in hbm.text()


def test_little_s_law_arithmetic_is_right_at_every_stage(lab):
    overlap = at(lab, OVERLAP, in_flight_bytes=16 * 1024)
    assert overlap.effective_bandwidth() == pytest.approx(16384 / 406e-9)
    text = overlap.text()
    assert "40.4 GB/s of its 2.04 TB/s" in text and "808 KiB" in text
    assert "unloaded" in text and "at least" in text  # the bytes in flight are a lower bound
    # The side label: 16 KiB ÷ 406 ns is 40.4 GB/s at every stage, never the CPU's 307 GB/s.
    for stage in range(len(STAGES)):
        label = at(lab, stage, in_flight_bytes=16 * 1024).in_flight_text()
        assert "16 KiB in flight ÷ 406 ns latency" in label and "= 40.4 GB/s of 2.04 TB/s" in label
    saturated = at(lab, OVERLAP, in_flight_bytes=1 << 20)
    assert saturated.effective_bandwidth() == 2039e9 and saturated.session().what_ifs == ()


def test_tensor_cores_split_the_unit_gain_from_the_precision_gain(lab, catalog):
    matrix = at(lab, MATRIX)
    vector, tensor = like_for_like(catalog["a100-80gb-sxm"])
    assert (vector.label, tensor.label) == ("fp32 vector", "tf32 matrix")
    text = matrix.text()
    assert "156 TFLOP/s, 8.0× the 19.5 TFLOP/s" in text  # TF32 tensor vs FP32 vector
    assert "312 TFLOP/s, another 2.0×" in text  # bf16 vs TF32 on the same units
    assert "16×" not in text
    assert step_time(matrix) == pytest.approx(step_time(at(lab, HBM)), rel=1e-9)
    low = at(lab, PRECISION)
    assert low.params().dtype == "bf16"
    assert step_time(matrix) / step_time(low) == pytest.approx(2.0, rel=0.03)


def test_batching_reports_the_exact_crossing(lab):
    short = at(lab, BATCHING, context=128)
    text = short.text()
    assert "from batch 213 on the step is compute-bound" in text  # not rounded to 256
    fast = at(short, BATCHING, batch=213).analysis().totals
    slow = at(short, BATCHING, batch=212).analysis().totals
    assert fast.compute_time_s >= fast.memory_time_s and slow.memory_time_s > slow.compute_time_s


def test_every_stage_text_holds(lab):
    for stage in range(len(STAGES)):
        for in_flight in (4096, 16 * 1024, 1 << 20):
            s = at(lab, stage, in_flight_bytes=in_flight)
            assert s.explanation().problems() == [], (stage, in_flight)
            assert s.session().params == s.params()


def test_the_lab_needs_a_measured_latency_and_a_cpu(catalog, models):
    with pytest.raises(NoLatencyError, match="H100"):
        Lab(catalog["xeon-platinum-8480"], catalog["h100-sxm"], "gpt2", models["gpt2"])
    with pytest.raises(ValueError, match="from a CPU to a GPU"):
        Lab(catalog["a100-40gb-sxm"], catalog["a100-80gb-sxm"], "gpt2", models["gpt2"])


def test_a_hybrid_cpu_shows_its_own_formula_and_lanes(catalog, models):
    # Core i9-13900K: 8 P-cores × 2 × 8 lanes + 16 E-cores × 2 × 4 lanes = 256 fp32 lanes.
    lab = Lab(catalog["core-i9-13900k"], catalog["a100-80gb-sxm"], "llama-3-8b", models["llama-3-8b"])
    start, cores = lab.explanation(), at(lab, CORES).explanation()
    # (at the maximum turbo clocks: 5.8 GHz P, 4.3 GHz E)
    assert "8 P-cores × 2 FMA units (256-bit) × 8 FP32 lanes × 2 FLOP × 5.8 GHz + 16 E-cores" in start.text
    assert "core (8 P + 16 E)s" not in start.text
    assert "6,912 fp32 lanes against the CPU's 256" in cores.text
    assert start.problems() == [] and cores.problems() == []


def test_batch_one_and_batches_that_do_not_fit_say_so(lab):
    single = at(lab, BATCHING, batch=1).text()
    assert single.startswith("Decode one sequence at a time") and "sequences at once" not in single
    huge = at(lab, BATCHING, batch=4096, context=4096).explanation()
    assert ", if it fit, delivers" in huge.text and "does not fit in the" in huge.text
    assert huge.problems() == []
