"""Workload engine: hand-computed ops, published identities, parameter validation."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.core.model import ops
from explorer.core.model.step_ops import build_ops
from explorer.core.model.workload import WorkloadError, WorkloadParams


def by_name(op_list):
    return {o.name: o for o in op_list}


def test_projection_at_batch_1_decode(models):
    # Llama 2 7B q_proj, (1 × 4096) @ (4096 × 4096) in bf16:
    # FLOPs 2·4096·4096; bytes (input 4096 + weights 4096² + output 4096) × 2.
    q = by_name(build_ops(models["llama-2-7b"], WorkloadParams(phase="decode", batch=1)))["q_proj"]
    assert q.flops == 33_554_432
    assert q.bytes == 33_570_816
    assert q.count == 32 and q.layers == tuple(range(32))
    assert q.flops / q.bytes == pytest.approx(0.99951, rel=1e-4)


def test_prefill_projection(models):
    # 512 prompt tokens: (512 × 4096) @ (4096 × 4096): intensity 409.6 FLOP/byte in bf16.
    params = WorkloadParams(phase="prefill", batch=1, seq=512)
    q = by_name(build_ops(models["llama-2-7b"], params))["q_proj"]
    assert q.flops == 2 * 512 * 4096 * 4096 == 17_179_869_184
    assert q.bytes == (512 * 4096 + 4096 * 4096 + 512 * 4096) * 2 == 41_943_040
    assert q.flops / q.bytes == pytest.approx(409.6)


def test_attention_over_a_kv_cache_naive(models):
    # Llama 2 7B decode, one sequence, 4096 cached tokens, bf16, per layer:
    # scores: 2 × 32 heads × 4096 keys × 128 dims; reads Q (4096 values), K (4096 × 4096),
    # writes S (32 × 4096).
    params = WorkloadParams(phase="decode", batch=1, context=4096, attention="naive")
    o = by_name(build_ops(models["llama-2-7b"], params))
    assert o["attn_score"].flops == 2 * 32 * 4096 * 128 == 33_554_432
    assert o["attn_score"].bytes == (4096 + 4096 * 4096 + 32 * 4096) * 2 == 33_824_768
    assert o["attn_softmax"].flops == 5 * 32 * 4096
    assert o["attn_softmax"].bytes == 2 * 32 * 4096 * 2
    assert o["attn_value"].flops == 33_554_432
    assert o["attn_value"].bytes == (32 * 4096 + 4096 * 4096 + 4096) * 2
    # Decode attention reads the whole cache for one query: intensity ≈ 1 FLOP/byte.
    assert o["attn_score"].flops / o["attn_score"].bytes == pytest.approx(0.992, rel=1e-3)


def test_fused_attention_softmax_runs_on_vector_units(models, catalog):
    # Llama 3 8B prefill of 8192 tokens on an H100, one layer's fused score op:
    # products 2·32·8192²·128 FLOPs at 989.4 TFLOP/s plus softmax 5·32·8192² at 66.9 TFLOP/s
    # (the full square: without the causal mask).
    from explorer.core.analysis.analysis import analyze

    a = analyze(models["llama-3-8b"], WorkloadParams(phase="prefill", seq=8192, causal=False),
                catalog["h100-sxm"])
    i = next(i for i, o in enumerate(a.ops) if o.name == "attn_score")
    products, softmax = 2 * 32 * 8192**2 * 128, 5 * 32 * 8192**2
    assert a.ops[i].vector_flops == softmax
    assert a.time_s[i] == pytest.approx(products / 989.4e12 + softmax / 66.9e12)


def test_naive_attention_score_matrix_is_live_memory(models, catalog):
    # The naive form holds a batch × heads × seq × seq score matrix: 32 × 8192² × 2 bytes
    # = 4 GiB per layer for one 8k prompt, twice that while softmax reads S and writes P.
    from explorer.core.analysis.analysis import analyze

    base = dict(phase="prefill", seq=8192)
    naive = analyze(models["llama-3-8b"], WorkloadParams(**base, attention="naive"), catalog["h100-sxm"])
    fused = analyze(models["llama-3-8b"], WorkloadParams(**base, attention="fused"), catalog["h100-sxm"])
    assert naive.totals.activation_bytes == 2 * 32 * 8192**2 * 2
    # Fused, the largest live tensors are the MLP activations: 3 × 8192 × 14336 × 2 bytes.
    assert fused.totals.activation_bytes == 3 * 8192 * 14336 * 2


def test_fused_attention_keeps_scores_on_chip(models):
    base = dict(phase="prefill", batch=1, seq=2048)
    naive = by_name(build_ops(models["llama-2-7b"], WorkloadParams(**base, attention="naive")))
    fused = by_name(build_ops(models["llama-2-7b"], WorkloadParams(**base, attention="fused")))
    assert "attn_softmax" not in fused
    scores = 32 * 2048 * 2048  # one layer's score matrix
    # The naive form writes S, reads and writes it in softmax, reads P: 4 passes of 2 bytes.
    naive_bytes = sum(naive[k].bytes for k in ("attn_score", "attn_softmax", "attn_value"))
    fused_bytes = fused["attn_score"].bytes + fused["attn_value"].bytes
    assert naive_bytes - fused_bytes == 4 * scores * 2
    # Same arithmetic either way.
    assert (naive["attn_score"].flops + naive["attn_softmax"].flops
            == fused["attn_score"].flops)


def test_naive_attention_bytes_grow_quadratically_with_sequence(models):
    def softmax_bytes(seq):
        params = WorkloadParams(phase="prefill", seq=seq, attention="naive")
        return by_name(build_ops(models["llama-2-7b"], params))["attn_softmax"].bytes

    assert softmax_bytes(4096) == 4 * softmax_bytes(2048)


def test_grouped_query_attention_reads_fewer_keys(models):
    # Llama 3 8B: 8 KV heads of 128 → keys are 1024 values per token, not 4096.
    params = WorkloadParams(phase="decode", context=4096)
    o = by_name(build_ops(models["llama-3-8b"], params))
    assert o["k_proj"].flops == 2 * 4096 * 1024
    assert o["attn_score"].bytes == (4096 + 4096 * 1024) * 2


@pytest.mark.parametrize("ident", ["llama-2-7b", "llama-2-13b", "llama-3-8b", "llama-3-70b"])
def test_decode_flops_per_token_is_twice_the_matmul_parameters(models, ident):
    # Kaplan et al. 2020 (arXiv:2001.08361), Table 1: C_forward ≈ 2N per token plus a context
    # term. N here: the published total less the embedding table (a lookup, no arithmetic)
    # and the RMS-norm scales (2 per layer + 1 final, d each); the LM head is a product.
    model = models[ident]
    n = model.published_parameters - model.vocab * model.d_model - (2 * model.layers + 1) * model.d_model
    assert model.matmul_parameters() == n
    total = sum(o.flops * o.count for o in build_ops(model, WorkloadParams(context=1)))
    assert total == pytest.approx(2 * n, rel=5e-3)


def test_gpt2_decode_flops_use_the_tied_embedding_as_lm_head(models):
    # GPT-2 ties its LM head to the token embedding: the 50257 × 768 table is both a lookup
    # and a product. N = 124,439,808 − 786,432 positions − 25 layer norms × 2 × 768 − biases.
    model = models["gpt2"]
    biases = model.layers * (3 * 768 + 768 + 3072 + 768)
    n = model.published_parameters - 1024 * 768 - 25 * 2 * 768 - biases
    total = sum(o.flops * o.count for o in build_ops(model, WorkloadParams(context=1)))
    assert total == pytest.approx(2 * n, rel=5e-3)


def test_decode_flops_with_a_long_context(models):
    # Each layer adds Q·Kᵀ and P·V over the context: 2 × 2 × d × context FLOPs per token.
    model = models["llama-2-7b"]
    context = 4096
    total = sum(o.flops * o.count for o in build_ops(model, WorkloadParams(context=context)))
    expected = 2 * model.matmul_parameters() + 4 * model.layers * model.d_model * context
    assert total == pytest.approx(expected, rel=5e-3)


def test_linear_intensity_grows_with_batch_like_b_over_1_plus_b_over_2048():
    # (B × 4096) @ (4096 × 4096) in 16-bit: I = 2·B·d² / (2·(2·B·d + d²)) = B / (1 + B/2048).
    batch = np.array([1, 2, 8, 64, 512, 2048, 16384], dtype=float)
    cost = ops.linear(batch, 4096, 4096, act_bytes=2, weight_bytes=2)
    flops, moved = cost.flops, cost.bytes
    np.testing.assert_allclose(flops / moved, batch / (1 + batch / 2048), rtol=1e-12)
    # Half the asymptote (1024) is reached at B = 2048.
    assert (flops / moved)[5] == pytest.approx(1024)


def test_resnet50_multiply_accumulates_match_torchvision(models):
    # torchvision lists ResNet-50 at 4.09 GFLOPS, counting multiply-accumulates of convs and fc.
    op_list = build_ops(models["resnet-50"], WorkloadParams(batch=1))
    macs = sum(o.flops * o.count for o in op_list if o.unit == ops.MATRIX) / 2
    assert macs == pytest.approx(4.09e9, rel=2e-3)
    roles = {o.role for o in op_list}
    assert roles == {"conv", "norm", "activation", "pool", "residual", "fc1"}
    assert sum(1 for o in op_list if o.role == "conv") == 53


def test_every_role_is_from_the_vocabulary(models):
    for model in models.values():
        for params in (WorkloadParams(phase="decode"), WorkloadParams(phase="prefill")):
            for o in build_ops(model, params):
                assert o.role in ops.ROLES, (model.id, o.name)


def test_separate_weight_and_kv_precisions(models):
    params = WorkloadParams(dtype="bf16", weight_dtype="int8", kv_dtype="fp8", context=2048)
    o = by_name(build_ops(models["llama-3-8b"], params))
    assert o["q_proj"].bytes == 4096 * 2 + 4096 * 4096 * 1 + 4096 * 2
    assert o["k_proj"].bytes == 4096 * 2 + 4096 * 1024 * 1 + 1024 * 1  # written to the fp8 cache
    assert o["attn_score"].bytes == 4096 * 2 + 2048 * 1024 * 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"batch": 0}, "batch must be at least 1, got 0"),
        ({"batch": -3}, "batch must be at least 1"),
        ({"seq": 2.5}, "seq must be a whole number"),
        ({"context": 10**9}, "context must be at most"),
        ({"dtype": "fp7"}, "dtype must be one of fp32, bf16, fp16, fp8, int8"),
        ({"kv_dtype": "fp64"}, "kv_dtype must be one of"),
        ({"phase": "serve"}, "phase must be one of prefill, decode, train"),
        ({"attention": "flash"}, "attention must be one of naive, fused"),
    ],
)
def test_invalid_parameters_name_the_parameter(kwargs, message):
    with pytest.raises(WorkloadError, match=message):
        WorkloadParams(**kwargs)


@settings(max_examples=40, deadline=None)
@given(batch=st.integers(1, 4096), context=st.integers(1, 32768))
def test_every_op_costs_something_and_more_batch_costs_more(models, batch, context):
    model = models["llama-3-8b"]
    one = build_ops(model, WorkloadParams(batch=batch, context=context))
    two = build_ops(model, WorkloadParams(batch=batch + 1, context=context))
    for a, b in zip(one, two, strict=True):
        assert a.bytes > 0 and a.flops >= 0
        assert b.flops >= a.flops and b.bytes >= a.bytes


def test_fp8_and_int8_products_keep_16_bit_activations_between_ops(models, catalog):
    """Only the products run in 8 bits: the residual adds, norms and all-reduce messages move
    bf16 activations, while the weights (and by default the KV cache) are 8-bit."""
    from explorer.core.analysis.analysis import analyze

    def ops_of(dtype):
        a = analyze(models["llama-3-8b"], WorkloadParams(dtype=dtype, tp=2, batch=4), catalog["h100-sxm"])
        return {o.name: (int(b), o) for o, b in zip(a.ops, a.bytes, strict=True)}

    bf16, fp8 = ops_of("bf16"), ops_of("fp8")
    for name in ("attn_residual", "attn_norm", "activation"):
        assert fp8[name][0] == bf16[name][0] - (bf16[name][1].weight_bytes - fp8[name][1].weight_bytes), name
    assert fp8["attn_all_reduce"][0] == bf16["attn_all_reduce"][0]
    assert fp8["q_proj"][1].weight_bytes * 2 == bf16["q_proj"][1].weight_bytes
    assert WorkloadParams(dtype="fp8").kv_bytes == 1 and WorkloadParams(dtype="int8").act_bytes == 2
