"""A training step: 3× the forward's work (4× with recomputation), the optimizer, the state
and activations it keeps, the pipeline bubble; checked against 6·N·D and hand counts."""

from __future__ import annotations

import pytest

from explorer.core.analysis.analysis import analyze
from explorer.core.analysis.memory import max_batch_that_fits
from explorer.core.hardware.catalog import load_catalog
from explorer.core.model import training
from explorer.core.model.presets import load_models
from explorer.core.model.step_ops import build_ops
from explorer.core.model.workload import WorkloadError, WorkloadParams


@pytest.fixture(scope="module")
def models():
    return load_models()


@pytest.fixture(scope="module")
def h100():
    return load_catalog()["h100-sxm"]


@pytest.mark.parametrize("ident", ["llama-2-7b", "llama-3-8b", "llama-3-70b"])
def test_training_flops_are_6_n_d_plus_the_attention_term(models, h100, ident):
    m = models[ident]
    seq, batch = 4096, 8
    a = analyze(m, WorkloadParams(phase="train", batch=batch, seq=seq, causal=True), h100)
    tokens = batch * seq
    # N: the weights used in products (Kaplan et al.'s non-embedding count, plus the LM head)
    n = m.matmul_parameters()
    # attention per token and layer, forward: Q·Kᵀ and P·V, 2 FLOPs per multiply-add, over
    # the (t + 1)/2 keys a causal token sees on average
    attention = m.layers * 2 * 2 * m.q_dim * (seq + 1) / 2
    expected = 6 * n * tokens + 3 * attention * tokens
    assert a.totals.flops == pytest.approx(expected, rel=0.02)


def test_recomputation_adds_a_forward(models):
    m = models["llama-2-7b"]
    three = build_ops(m, WorkloadParams(phase="train", batch=2, seq=512))
    four = build_ops(m, WorkloadParams(phase="train", batch=2, seq=512, recompute="full"))
    forward = {o.name: o for o in build_ops(m, WorkloadParams(phase="prefill", batch=2, seq=512))}
    for o3, o4 in zip(three, four, strict=True):
        if o3.name in ("optimizer",):
            assert o3.flops == o4.flops
        elif o3.name not in ("lm_head", "final_norm"):  # prefill sends only the last position to the head
            assert (o3.flops, o4.flops) == (3 * forward[o3.name].flops, 4 * forward[o3.name].flops)


def test_adam_state_is_18_bytes_per_parameter_as_megatron_keeps_it_16_as_zero_counts_it(models, h100):
    m = models["llama-2-7b"]
    n = m.parameter_count()
    # Megatron-LM in bf16 keeps fp32 gradients: 2 + 4 + 12 (dist_optimizer.md: "float16
    # param, fp32 grads | 18 | 6 + 12/d"); its step reads 4-byte gradients: 30 bytes
    params = WorkloadParams(phase="train", batch=1, seq=2048)
    assert params.grad_bytes == 4 and training.state_bytes_per_parameter(params) == 18
    a = analyze(m, params, h100)
    assert a.totals.weight_bytes + a.totals.state_bytes == 18 * n
    optimizer = next(o for o in a.ops if o.name == "optimizer")
    assert (optimizer.flops, optimizer.bytes) == (14 * n, 30 * n)
    # the ZeRO paper's and DeepSpeed's: 16-bit gradients, 2 + 2 + 12, a step of 28 bytes
    zero = WorkloadParams(phase="train", batch=1, seq=2048, grad_dtype="16-bit")
    assert training.state_bytes_per_parameter(zero) == 16
    a = analyze(m, zero, h100)
    assert a.totals.weight_bytes + a.totals.state_bytes == 16 * n
    optimizer = next(o for o in a.ops if o.name == "optimizer")
    assert (optimizer.flops, optimizer.bytes) == (14 * n, 28 * n)
    assert training.state_bytes_per_parameter(WorkloadParams(phase="train", dtype="fp32")) == 16
    # fp16 training: Megatron-LM keeps fp16 gradients unless told otherwise
    assert training.state_bytes_per_parameter(WorkloadParams(phase="train", dtype="fp16")) == 16
    fp32_grads = WorkloadParams(phase="train", dtype="fp16", grad_dtype="fp32")
    assert training.state_bytes_per_parameter(fp32_grads) == 18
    with pytest.raises(WorkloadError, match="16-bit gradients need 16-bit training"):
        WorkloadParams(phase="train", dtype="fp32", grad_dtype="16-bit")


def test_activations_follow_korthikanti_et_al(models, h100):
    # Llama 2 7B: no dropout, as many K/V heads as query heads, a gated MLP 11,008 wide. Per
    # token and layer (bytes): norm inputs 2·2h and product inputs 2·2h kept whole; Q, K, V
    # and the output projection's input 4·2h; the MLP's gate, up and product 3·2·11,008.
    m = models["llama-2-7b"]
    s, h, layers, f = 2048, 4096, 32, 11008
    whole, split = 8 * h, 8 * h + 6 * f
    kept = analyze(m, WorkloadParams(phase="train", batch=2, seq=s), h100).totals.activation_bytes
    assert kept == 2 * s * (whole + split) * layers  # fused attention keeps no scores; 2 sequences
    naive = analyze(m, WorkloadParams(phase="train", batch=1, seq=s, attention="naive"), h100)
    assert naive.totals.activation_bytes == layers * s * (whole + split + 2 * 32 * s)  # softmax output
    tp = analyze(m, WorkloadParams(phase="train", batch=1, seq=s, tp=8), h100).totals.activation_bytes
    assert tp == layers * s * (whole + split / 8)
    recomputed = analyze(m, WorkloadParams(phase="train", batch=1, seq=s, recompute="full"), h100)
    assert recomputed.totals.activation_bytes == 2 * s * h * layers + s * (whole + split)
    # 7 B parameters train on one 80 GB device only with recomputation and a small batch
    assert max_batch_that_fits(m, WorkloadParams(phase="train", seq=s), h100) == 0  # 16 B/param: 108 GB
    assert max_batch_that_fits(m, WorkloadParams(phase="train", seq=s, tp=2, recompute="full"), h100) > 8


def test_the_pipeline_bubble_and_the_once_a_step_ops(models, h100):
    m = models["llama-3-70b"]
    params = WorkloadParams(phase="train", batch=64, seq=1024, pp=4, tp=8, dp=2)
    assert training.pipeline_factor(params, params.split, 64) == pytest.approx((1 + 3 / 32) / 4)
    a = analyze(m, params, h100)
    spent = {o.name: float(c * t) for o, c, t in zip(a.ops, a.counts, a.time_s, strict=True)}
    once = spent.pop("optimizer") + spent.pop("grad_all_reduce")  # after the pipeline drains
    # the last of 4 stages of 20 layers also runs the LM head: the pipeline goes at its pace
    slowest = training.stage_imbalance(m, params.split, 1024)
    w, head = 2 * m.layer_parameters(0) + 4 * 8192 * 512, 2 * 128_256 * 8192
    assert slowest == pytest.approx((20 * w + head) / ((80 * w + head) / 4))
    assert a.totals.time_s == pytest.approx(sum(spent.values()) * (1 + 3 / 32) / 4 * slowest + once)
    # the stage's own share of the weights goes through Adam and the gradient all-reduce
    optimizer = next(o for o in a.ops if o.name == "optimizer")
    assert optimizer.bytes == 30 * a.totals.weight_bytes // 2  # fp32 gradients read: 4 + 12 + 14


def test_sends_are_not_recomputed_and_experts_sync_their_own_gradients(models):
    m = models["llama-3-70b"]
    sends = {r: next(o for o in build_ops(m, WorkloadParams(phase="train", batch=8, seq=512, pp=4,
                                                            recompute=r)) if o.name == "stage_send")
             for r in ("none", "full")}
    assert sends["full"].bytes == sends["none"].bytes  # forward activations and backward gradients only
    mixtral = models["mixtral-8x7b"]
    params = WorkloadParams(phase="train", batch=16, seq=512, ep=8, dp=2)
    ops = {o.name: o for o in build_ops(mixtral, params)}
    experts = 32 * 1 * mixtral.expert_parameters()  # 32 layers × 1 of 8 experts each
    # a ring over dp = 2 of the fp32 gradients (Megatron-LM's in bf16)
    assert ops["expert_grad_all_reduce"].bytes == pytest.approx(2 * 1 / 2 * experts * 4)
    assert ops["grad_all_reduce"].steps == 2 * (16 - 1)  # shared weights over dp × ep = 16 devices


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"phase": "train", "dtype": "fp8"}, "training runs in fp32, bf16, fp16"),
    ({"phase": "train", "weight_dtype": "int4"}, r"weight_dtype applies to inference \(phase prefill "
     r"or decode\); got int4 in phase train: training keeps weights in the compute precision"),
    ({"phase": "train", "kv_dtype": "fp8"}, "kv_dtype applies to inference .* a training step has no KV"),
    ({"phase": "decode", "recompute": "full"}, "recompute applies to training"),
])
def test_training_refuses_what_it_does_not_model(kwargs, message):
    with pytest.raises(WorkloadError, match=message):
        WorkloadParams(**kwargs)


def test_a_pipeline_stage_keeps_its_micro_batches_inputs_and_recomputes_one_layer(models, h100):
    m = models["llama-3-70b"]  # 80 layers, d 8192, 64 query and 8 K/V heads of 128, gated MLP 28,672
    s, h, f, t = 1024, 8192, 28672, 8
    layer = 8 * h + (4 * 64 * 128 + 4 * 8 * 128 + 6 * f) / t  # per token: kept whole, split by tp
    a = analyze(m, WorkloadParams(phase="train", batch=8, seq=s, tp=t, pp=4, recompute="full"), h100)
    # 1F1B: the first stage (20 layers) holds min(pp, 8) = 4 one-sequence micro-batches
    assert a.totals.activation_bytes == 2 * s * h * 20 * 4 + s * layer
    kept = analyze(m, WorkloadParams(phase="train", batch=8, seq=s, tp=t, pp=4), h100).totals.activation_bytes
    assert kept == s * layer * 20 * 4


def test_the_status_line_names_the_optimizer_state_it_counts(models, h100):
    from explorer.core.analysis.report_words import step_summary

    a = analyze(models["llama-2-7b"], WorkloadParams(phase="train", batch=8, seq=1024, dp=8), h100)
    line = step_summary(a)
    assert "weights, optimizer state, activations" in line
    assert f"{a.totals.memory_required_bytes / 2**30:.3g} GiB" in line
