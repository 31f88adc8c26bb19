"""Costing workloads on devices: totals, memory fit, precision fallbacks, batch sweeps."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.core.analysis.analysis import analyze
from explorer.core.analysis.memory import max_batch_that_fits
from explorer.core.analysis.sweep import batch_sweep, default_batches
from explorer.core.model.workload import Phase, WorkloadParams


def test_batch_1_decode_time_is_weights_over_bandwidth(models, catalog):
    # Decode at batch 1 streams every weight once per token (the embedding table excepted:
    # a lookup reads one row): time ≈ weight bytes / bandwidth.
    # Llama 3 70B in bf16: (141.1 GB − 2.1 GB of embedding) / 4.8 TB/s on an H200 ≈ 29 ms.
    model = models["llama-3-70b"]
    a = analyze(model, WorkloadParams(context=128), catalog["h200-sxm"])
    t = a.totals
    assert t.weight_bytes == 70_553_706_496 * 2
    streamed = t.weight_bytes - model.vocab * model.d_model * 2
    assert t.time_s == pytest.approx(streamed / 4.8e12, rel=0.005)
    assert t.memory_time_s > 100 * t.compute_time_s
    assert t.tokens_per_s == pytest.approx(1 / t.time_s)


def test_kv_cache_of_llama2_7b_at_4096_tokens_is_2_gib(models, catalog):
    # NVIDIA's "Mastering LLM Techniques: Inference Optimization": Llama 2 7B, batch 1,
    # 4096 tokens, 16-bit: 1 × 4096 × 2 × 32 × 4096 × 2 bytes ≈ 2 GB.
    a = analyze(models["llama-2-7b"], WorkloadParams(context=4096, dtype="fp16"), catalog["a100-40gb-sxm"])
    assert a.totals.kv_bytes_per_token == 524_288
    assert a.totals.kv_cache_bytes == 2 * 2**30
    t = a.totals
    assert t.memory_required_bytes == t.weight_bytes + 2 * 2**30 + t.activation_bytes
    # Decode's largest live activations: the LM head's input row and its 32000 logits.
    assert t.activation_bytes == (4096 + 32000) * 2


def test_does_not_fit_is_reported(models, catalog):
    a = analyze(models["llama-3-70b"], WorkloadParams(), catalog["h100-sxm"])
    assert not a.totals.fits_in_memory
    # 90% of the 81,559 MiB an H100 reports (nvidia-smi), not the nominal 80 GiB.
    assert a.totals.memory_budget_bytes == pytest.approx(0.9 * 81_559 * 2**20)
    assert any("has 71.7 GiB to give (90% of 79.6 GiB usable)" in note for note in a.notes)


def test_totals_equal_the_sum_of_rows(models, catalog):
    a = analyze(models["llama-3-70b"], WorkloadParams(batch=8, context=2048), catalog["h200-sxm"])
    rows = a.rows
    assert len(rows) == 80 * 14 + 3
    assert rows.names[1] == "layers.0.attn_norm" and rows.names[-1] == "lm_head"
    assert rows.layers[0] == -1 and rows.layers[-2] == -1 and rows.layers[-3] == 79
    assert int(rows.flops.sum()) == a.totals.flops
    assert int(rows.bytes.sum()) == a.totals.bytes
    assert rows.time_s.sum() == pytest.approx(a.totals.time_s)


def test_matrix_ops_use_the_precision_peak_and_vector_ops_fp32(models, catalog):
    a = analyze(models["llama-3-8b"], WorkloadParams(), catalog["h100-sxm"])
    peaks = {o.name: p for o, p in zip(a.ops, a.peaks, strict=True)}
    assert peaks["q_proj"] == pytest.approx(989.4e12)
    assert peaks["attn_norm"] == pytest.approx(66.9e12)


def test_missing_precision_falls_back_with_a_note(models, catalog):
    a = analyze(models["llama-3-8b"], WorkloadParams(dtype="fp8"), catalog["a100-80gb-sxm"])
    assert a.roofs.matrix.precision == "fp16"
    assert a.roofs.matrix.flops_per_s == pytest.approx(312e12)
    assert "has no fp8 arithmetic" in a.notes[0]
    # Weights are still stored in 1 byte each.
    assert a.totals.weight_bytes == 8_030_261_248


def test_fp8_on_a_cpu_converts_to_its_fastest_16_bit_unit(models, catalog):
    # A Xeon 8480+ has no fp8: its fastest 16-bit peak is AMX bf16 (56 cores × 1024 FLOP ×
    # 3.8 GHz = 217.9 TFLOP/s), not the AVX-512 fp16 vector peak (56 × 2 × 32 × 2 × 3.8 GHz =
    # 27.2 TFLOP/s) that an fp16-first fallback used to pick.
    a = analyze(models["llama-3-8b"], WorkloadParams(dtype="fp8"), catalog["xeon-platinum-8480"])
    assert (a.roofs.matrix.label, a.roofs.matrix.flops_per_s) == ("bf16 matrix",
                                                                  pytest.approx(56 * 1024 * 3.8e9))
    # fp16 itself stays on the fp16 vector units: AMX on Sapphire Rapids has no fp16.
    b = analyze(models["llama-3-8b"], WorkloadParams(dtype="fp16"), catalog["xeon-platinum-8480"])
    assert b.roofs.matrix.label == "fp16 vector"


def test_cpu_bf16_uses_amx_where_present(models, catalog):
    a = analyze(models["llama-3-8b"], WorkloadParams(phase="prefill", seq=512),
                catalog["xeon-platinum-8480"])
    assert a.roofs.matrix.unit == "matrix"
    b = analyze(models["llama-3-8b"], WorkloadParams(phase="prefill", seq=512), catalog["epyc-9654"])
    # Zen 4 has no matrix units: bf16 runs as AVX512_BF16 dot products, 2 products per fp32
    # lane at the FMA rate: 96 cores × 2 × 8 lanes × 2 × 2 FLOP × 3.7 GHz = 22.7 TFLOP/s.
    assert b.roofs.matrix.label == "bf16 vector"
    assert b.roofs.matrix.flops_per_s == pytest.approx(96 * 2 * 8 * 2 * 2 * 3.7e9)
    assert b.totals.time_s > a.totals.time_s


def test_cpu_int8_uses_vnni_without_matrix_units(models, catalog):
    # Raptor Lake has AVX-VNNI but no bf16 arithmetic: int8 runs as VPDPBUSD (4 products per
    # 32-bit lane), bf16 is converted to fp32.
    i9 = catalog["core-i9-13900k"]
    a = analyze(models["llama-3-8b"], WorkloadParams(phase="prefill", seq=512, dtype="int8"), i9)
    # 8 P × 2 × 8 lanes × 4 × 2 OP × 5.8 GHz + 16 E × 2 × 4 lanes × 4 × 2 OP × 4.3 GHz = 10.34 TOP/s
    assert a.roofs.matrix.label == "int8 vector"
    assert a.roofs.matrix.flops_per_s == pytest.approx(8 * 2 * 8 * 4 * 2 * 5.8e9 + 16 * 2 * 4 * 4 * 2 * 4.3e9)
    b = analyze(models["llama-3-8b"], WorkloadParams(phase="prefill", seq=512, dtype="bf16"), i9)
    assert b.roofs.matrix.label == "fp32 vector"
    assert "has no bf16 arithmetic" in b.notes[0]


def test_ryzen_bf16_bound_is_below_ik_llama_measurement(models, catalog):
    """A roof is a bound no real run beats: ik_llama.cpp measured Llama 3.1 8B bf16 prompt
    processing at 263.15 t/s on a Ryzen 9 7950X with 16 threads (PR 142, "BF16_R16 - 16
    interleaved bf16 rows", https://github.com/ikawrakow/ik_llama.cpp/pull/142: "llama 8B
    BF16_R16 | 14.96 GiB | 8.03 B | CPU | 16 | pp512 | 263.15 ± 0.19"), about 4.3 TFLOP/s,
    above the 2.3 TFLOP/s the catalogue once gave bf16 (the FP32 rate at base clock). The
    bound (AVX512_BF16 at the 5.7 GHz maximum boost: 16 × 2 × 8 × 2 × 2 FLOP × 5.7 GHz =
    5.84 TFLOP/s) must take at most the measured 512 / 263 s."""
    a = analyze(models["llama-3-8b"], WorkloadParams(phase=Phase.PREFILL, seq=512, dtype="bf16"),
                catalog["ryzen-9-7950x"])
    assert a.roofs.matrix.flops_per_s == pytest.approx(16 * 2 * 8 * 2 * 2 * 5.7e9)
    assert a.totals.time_s <= 512 / 263


def test_prefill_is_compute_bound_and_decode_memory_bound(models, catalog):
    model, h100 = models["llama-2-7b"], catalog["h100-sxm"]
    prefill = analyze(model, WorkloadParams(phase="prefill", seq=2048), h100)
    decode = analyze(model, WorkloadParams(phase="decode", context=2048), h100)
    assert prefill.totals.compute_time_s > prefill.totals.memory_time_s
    assert decode.totals.memory_time_s > decode.totals.compute_time_s
    assert prefill.totals.items_per_step == 2048


def test_cnn_counts_images(models, catalog):
    a = analyze(models["resnet-50"], WorkloadParams(batch=64), catalog["a100-80gb-sxm"])
    assert a.totals.item_unit == "images"
    assert a.totals.items_per_step == 64
    assert a.totals.kv_cache_bytes == 0


def test_cnn_memory_counts_activations_so_huge_batches_do_not_fit(models, catalog):
    # The largest ResNet-50 activations are the stem's: 3×224² in and 64×112² out, then the
    # first stage's 256×56² outputs; per image in bf16 this is a few MB.
    model, h100 = models["resnet-50"], catalog["h100-sxm"]
    per_image = analyze(model, WorkloadParams(batch=1), h100).totals.activation_bytes
    assert 1e6 < per_image < 1e7
    limit = max_batch_that_fits(model, WorkloadParams(), h100)
    assert limit == int((0.9 * 81_559 * 2**20 - 25_557_032 * 2) // per_image)
    assert not analyze(model, WorkloadParams(batch=limit + 1), h100).totals.fits_in_memory


def test_context_beyond_the_trained_maximum_is_noted(models, catalog):
    a = analyze(models["gpt2"], WorkloadParams(context=4096), catalog["t4"])
    assert any("trained context of 1,024" in n for n in a.notes)


def test_max_batch_that_fits_hand_computed(models, catalog):
    # H200: (90% of the 143,771 MiB it reports − 16.06 GB of bf16 weights) / (1024 tokens ×
    # 128 KiB of KV cache + 264,704 bytes of LM-head input and logits) = 889.5 sequences; the
    # nominal 141 GiB would give 1,006.
    model, params, h200 = models["llama-3-8b"], WorkloadParams(context=1024), catalog["h200-sxm"]
    expected = int((0.9 * 143_771 * 2**20 - 8_030_261_248 * 2) // (1024 * 131_072 + (4096 + 128_256) * 2))
    assert max_batch_that_fits(model, params, h200) == expected == 889
    # The whole usable memory (a share of 1) gives 1,001.5.
    assert max_batch_that_fits(model, WorkloadParams(context=1024, memory_fraction=1.0), h200) == 1001
    at_limit = analyze(model, WorkloadParams(context=1024, batch=expected), h200)
    beyond = analyze(model, WorkloadParams(context=1024, batch=expected + 1), h200)
    assert at_limit.totals.fits_in_memory and not beyond.totals.fits_in_memory
    assert max_batch_that_fits(models["llama-3-70b"], params, catalog["l4"]) == 0


def test_default_batches():
    assert default_batches(930) == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 930]
    assert default_batches(64) == [1, 2, 4, 8, 16, 32, 64]
    assert default_batches(0) == []


def test_batch_sweep_turns_decode_from_memory_to_compute_bound(models, catalog):
    # Short context, so the cache stays small and the weights' reuse decides.
    model, h200 = models["llama-3-8b"], catalog["h200-sxm"]
    sweep = batch_sweep(model, WorkloadParams(context=128), h200)
    assert sweep.batch[0] == 1 and sweep.batch[-1] == sweep.max_batch
    assert sweep.memory_bound[0] and not sweep.memory_bound[-1]
    assert np.all(np.diff(sweep.tokens_per_s) > 0)
    assert np.all(np.diff(sweep.time_s) >= 0)
    assert np.all(np.diff(sweep.intensity) > 0)


def test_batch_sweep_agrees_with_single_analyses(models, catalog):
    model, hw, params = models["llama-2-13b"], catalog["a100-80gb-sxm"], WorkloadParams(context=512)
    sweep = batch_sweep(model, params, hw, batches=[1, 7, 33])
    for i, b in enumerate([1, 7, 33]):
        single = analyze(model, WorkloadParams(context=512, batch=b), hw).totals
        assert sweep.time_s[i] == pytest.approx(single.time_s, rel=1e-12)
        assert sweep.flops[i] == pytest.approx(single.flops, rel=1e-12)
        assert sweep.bytes[i] == pytest.approx(single.bytes, rel=1e-12)


@settings(max_examples=30, deadline=None)
@given(batch=st.integers(1, 2048), seq=st.integers(1, 8192),
       phase=st.sampled_from(["prefill", "decode"]), attention=st.sampled_from(["naive", "fused"]))
def test_step_time_lies_between_the_bounds(models, catalog, batch, seq, phase, attention):
    params = WorkloadParams(batch=batch, seq=seq, context=seq, phase=phase, attention=attention)
    t = analyze(models["llama-3-8b"], params, catalog["h100-sxm"]).totals
    assert t.time_s >= max(t.compute_time_s, t.memory_time_s) * (1 - 1e-12)
    assert t.time_s <= (t.compute_time_s + t.memory_time_s) * (1 + 1e-12)


def test_a_prompt_after_a_cached_prefix_costs_what_the_whole_prompt_costs_beyond_the_prefix(models, catalog):
    """Causal attention over a 1,536-token cached prefix and a 512-token prompt computes the
    pairs the 2,048-token prompt computes beyond the first 1,536 tokens' own; the projections
    and the MLP work on the 512 new tokens only, and the KV cache holds all 2,048."""
    from explorer.core.analysis.analysis import analyze
    from explorer.core.model.workload import WorkloadError, WorkloadParams

    model, h100 = models["llama-3-8b"], catalog["h100-sxm"]

    def ops(**p):
        a = analyze(model, WorkloadParams(phase="prefill", **p), h100)
        return {o.role.value: o.flops * o.count for o in a.ops}, a

    whole, _ = ops(seq=2048)
    first, _ = ops(seq=1536)
    rest, a = ops(seq=512, prefix=1536)
    assert rest["attn_score"] == whole["attn_score"] - first["attn_score"]
    assert rest["attn_value"] == whole["attn_value"] - first["attn_value"]
    pairs = 2048 * 2049 // 2 - 1536 * 1537 // 2
    assert rest["attn_value"] == 32 * 2 * 32 * pairs * 128  # layers × 2 FLOPs × heads × pairs × head_dim
    short, _ = ops(seq=512)
    assert rest["q_proj"] == short["q_proj"] and rest["down_proj"] == short["down_proj"]
    assert a.totals.kv_cache_bytes == 2048 * 131072 and a.totals.items_per_step == 512
    with pytest.raises(WorkloadError, match="prefix applies to a prefill"):
        WorkloadParams(phase="decode", prefix=10)
