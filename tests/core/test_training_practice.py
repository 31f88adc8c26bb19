"""Training as it is practised (sequence parallel, recomputation, ZeRO, interleaved
pipelines, causal attention), checked against the papers' equations and hand counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from explorer.core.analysis.analysis import analyze
from explorer.core.model import parallel, sharding, training
from explorer.core.model.hf_config import spec_from_config
from explorer.core.model.session import load_session
from explorer.core.model.step_ops import build_ops
from explorer.core.model.workload import WorkloadError, WorkloadParams
from explorer.core.units import format_bytes

GPT2_XL = {"architectures": ["GPT2LMHeadModel"], "n_embd": 1600, "n_layer": 48, "n_head": 25,
           "vocab_size": 50257, "n_positions": 1024, "activation_function": "gelu_new"}


def train(**kw) -> WorkloadParams:
    return WorkloadParams(phase="train", **kw)


def test_a_gpt_layer_keeps_what_korthikanti_et_al_count():
    m = spec_from_config(GPT2_XL, "gpt2-xl/config.json")  # MLP 4h, trained with dropout
    s, h, a, t = 1024, 1600, 25, 5
    split = parallel.Split(tp=t)

    def layer(**kw):
        return training.layer_activation_bytes(m, train(seq=s, tp=t, **kw), split, 0)

    assert layer() == pytest.approx(s * h * (10 + 24 / t))  # eq. 2, fused attention (no scores)
    assert layer(attention="naive") == pytest.approx(s * h * (10 + 24 / t) + 5 * a * s * s / t)
    assert layer(sp=True) == pytest.approx(s * h * 34 / t)  # eq. 4
    assert layer(sp=True, attention="naive", recompute="selective") == pytest.approx(s * h * 34 / t)  # eq. 6


def test_selective_recomputation_runs_a_naive_kernels_scores_again_and_nothing_else(models):
    m = models["llama-2-7b"]
    ops = {o.name: o for o in build_ops(m, train(seq=512, attention="naive", recompute="selective"))}
    base = {o.name: o for o in build_ops(m, train(seq=512, attention="naive"))}
    for name, o in ops.items():
        ratio = 4 / 3 if name in training.ATTENTION_CORE else 1
        assert o.flops == pytest.approx(base[name].flops * ratio), name
    fused = build_ops(m, train(seq=512, recompute="selective"))
    assert [o.flops for o in fused] == [o.flops for o in build_ops(m, train(seq=512))]


def test_llama_3_405b_fits_as_meta_trained_it_with_sequence_parallel_and_zero_1(models, catalog):
    m, h100 = models["llama-3.1-405b"], catalog["h100-sxm"]
    layout = dict(batch=2048, seq=8192, tp=8, pp=16, dp=128)
    plain = analyze(m, train(**layout), h100).totals
    assert not plain.fits_in_memory
    t = analyze(m, train(sp=True, zero=1, recompute="selective", grad_dtype="16-bit", **layout), h100).totals
    params = parallel.device_parameters(m, parallel.Split(8, 16, 128))  # first stage: 8 layers, embedding
    assert t.weight_bytes == 2 * params
    assert t.state_bytes == pytest.approx(2 * params + 12 * params / 128, rel=1e-9)  # gradients, Adam/128
    # with Megatron-LM's fp32 gradients (the default in bf16) it does not fit: 6 + 12/d a parameter
    megatron = analyze(m, train(sp=True, zero=1, recompute="selective", **layout), h100).totals
    assert megatron.state_bytes == pytest.approx(4 * params + 12 * params / 128, rel=1e-9)
    assert megatron.weight_bytes + megatron.state_bytes == pytest.approx(
        (6 + 12 / 128) * params, rel=1e-9)  # dist_optimizer.md: "float16 param, fp32 grads | 6 + 12/d"
    assert not megatron.fits_in_memory
    # per token and layer, all split by tp with SP: norms and inputs 8h, Q and the output
    # projection's input 4h, K and V 4·8·128, the gated MLP 6·53,248
    layer = (8 * 16384 + 4 * 16384 + 4 * 8 * 128 + 6 * 53248) / 8
    assert t.activation_bytes == 8192 * layer * 8 * 16  # 8 layers, 16 micro-batches in flight (1F1B)
    assert t.memory_budget_bytes == h100.usable_memory_bytes  # training fills what it allocates
    assert t.fits_in_memory and t.memory_required_bytes < 80 * 2**30
    readme = (Path(__file__).parents[2] / "docs" / "accounting.md").read_text()
    claim = (f"needs {format_bytes(plain.memory_required_bytes)} a GPU as is, "
             f"{format_bytes(t.memory_required_bytes)} with `--sp --zero 1 --grad-dtype 16-bit` and "
             f"{format_bytes(megatron.memory_required_bytes)} with Megatron-LM's fp32 gradients")
    assert claim in " ".join(readme.split())  # docs/accounting.md's figures are these


def test_zero_stages_shard_the_state_across_replicas(models, catalog):
    m, n = models["llama-2-7b"], models["llama-2-7b"].parameter_count()
    layer = m.layer_parameters(0)
    # ZeRO's accounting (16-bit gradients), the paper's 2 + 2 + 12 bytes a parameter
    expected = {0: (2 * n, 2 * n + 12 * n), 1: (2 * n, 2 * n + 12 * n / 8), 2: (2 * n, 14 * n / 8),
                3: (2 * n / 8 + 2 * layer, 14 * n / 8)}
    for zero, (weights, state) in expected.items():
        s = sharding.device_state(m, train(batch=8, dp=8, zero=zero, grad_dtype="16-bit"))
        assert (s.weights, s.state) == (pytest.approx(weights), pytest.approx(state)), zero
    # Megatron-LM's fp32 gradients (the default in bf16): 4 bytes, sharded from stage 2
    megatron = {0: 4 * n + 12 * n, 1: 4 * n + 12 * n / 8, 2: 16 * n / 8, 3: 16 * n / 8}
    for zero, state in megatron.items():
        assert sharding.device_state(m, train(batch=8, dp=8, zero=zero)).state == pytest.approx(state), zero
    ops = {z: {o.name: o for o in build_ops(m, train(batch=8, dp=8, zero=z, grad_dtype="16-bit"))}
           for z in (0, 1, 2, 3)}
    ring = 2 * 7 / 8 * 2 * n  # one micro-batch: the whole local batch
    assert ops[0]["grad_all_reduce"].bytes == pytest.approx(ring)
    assert ops[1]["grad_all_reduce"].bytes == pytest.approx(ring)  # reduce-scatter + all-gather
    assert ops[2]["grad_all_reduce"].bytes == pytest.approx(ring)
    assert ops[3]["grad_all_reduce"].bytes == pytest.approx(1.5 * ring)  # weights gathered twice
    assert ops[1]["optimizer"].flops == sharding.ADAM_FLOPS_PER_PARAMETER * (n // 8)
    # fp32 gradients: reduce-scattered at 4 bytes, the updated weights gathered at 2
    fp32 = {o.name: o for o in build_ops(m, train(batch=8, dp=8, zero=1))}
    assert fp32["grad_all_reduce"].bytes == pytest.approx(7 / 8 * n * (4 + 2))
    assert "fp32 gradients, as Megatron-LM keeps them in bf16" in fp32["grad_all_reduce"].detail
    assert analyze(m, train(batch=8, zero=3), catalog["h100-sxm"]).totals.weight_bytes == 2 * n  # dp 1: whole


def test_zero_2_and_3_communicate_every_micro_batch_and_are_refused_with_a_pipeline(models, catalog):
    m, n = models["llama-2-7b"], models["llama-2-7b"].parameter_count()

    def sync(**kw):
        ops = build_ops(m, train(batch=64, dp=8, grad_dtype="16-bit", **kw))
        return next(o for o in ops if o.name == "grad_all_reduce")

    share = 7 / 8 * 2 * n  # one reduce-scatter or all-gather of the 16-bit tensors over 8 replicas
    # 8 micro-batches of one sequence: ZeRO-3 gathers the weights twice and reduce-scatters the
    # gradients for each (24 collectives), ZeRO-2 reduce-scatters for each and gathers once (9),
    # ZeRO-1 and plain all-reduce once a step (2), whatever the micro-batch
    assert sync(zero=3, micro_batch=1).bytes == pytest.approx(24 * share)
    assert sync(zero=3, micro_batch=1).steps == 24 * 7
    assert sync(zero=2, micro_batch=1).bytes == pytest.approx(9 * share)
    assert sync(zero=1, micro_batch=1).bytes == sync(zero=1).bytes == pytest.approx(2 * share)
    assert sync(zero=0, micro_batch=2).bytes == pytest.approx(2 * share)
    assert sync(zero=3, micro_batch=4).bytes == pytest.approx(6 * share)  # 2 micro-batches
    assert "for each of 8 micro-batches" in sync(zero=3, micro_batch=1).detail
    # GPT-3 175B as Narayanan et al. ran it (TP 8, PP 8, DP 16, 96 micro-batches): DeepSpeed's
    # PipelineEngine asserts "ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism"
    gpt3 = dict(batch=1536, seq=2048, tp=8, pp=8, dp=16)
    for zero in (2, 3):
        with pytest.raises(WorkloadError, match=f"ZeRO-{zero} .* every micro-batch, which DeepSpeed refuses "
                                                r"with pipeline parallel \(PP 8\): use --zero 1, or --pp 1"):
            train(zero=zero, **gpt3)
    assert train(zero=1, **gpt3).accumulation_steps == 96


def test_micro_batches_hold_one_micro_batch_of_activations(models, catalog):
    m, h100 = models["llama-3-8b"], catalog["h100-sxm"]
    whole = analyze(m, train(batch=64, seq=4096, dp=8, zero=3), h100).totals
    micro = analyze(m, train(batch=64, seq=4096, dp=8, zero=3, micro_batch=1), h100).totals
    assert not whole.fits_in_memory and whole.memory_required_bytes > 150 * 2**30  # the 151 GiB
    assert micro.activation_bytes * 8 == whole.activation_bytes  # one sequence of the 8 at a time
    assert micro.fits_in_memory
    two = analyze(m, train(batch=64, seq=4096, dp=8, micro_batch=2), h100).totals
    assert two.activation_bytes == 2 * micro.activation_bytes
    # with a pipeline: up to pp micro-batches in flight, and the bubble counts micro-batches
    p = train(batch=64, seq=4096, pp=4, dp=2, micro_batch=4)  # 32 sequences: 8 micro-batches of 4
    assert p.accumulation_steps == 8 and training.in_flight(p, p.split) == 4 * 4
    assert training.pipeline_factor(p, p.split, 64) == pytest.approx((1 + 3 / 8) / 4)
    with pytest.raises(WorkloadError, match=r"a micro-batch of 3 sequences does not divide the local batch "
                                            r"of 8 \(batch 64 over 8 replicas\): choose a micro-batch that "
                                            r"divides 8"):
        train(batch=64, dp=8, micro_batch=3)


def test_virtual_stages_shrink_the_bubble_and_multiply_the_sends(models):
    m = models["llama-3-70b"]
    p = train(batch=32, seq=1024, tp=8, pp=4, dp=2, vpp=5)
    assert training.pipeline_factor(p, p.split, 32) == pytest.approx((1 + 3 / (5 * 16)) / 4)
    sends = {o.name: o for o in build_ops(m, p)}["stage_send"]
    assert len(sends.layers) == 4 * 5 - 1  # a send after every chunk of 4 layers but the last
    assert training.in_flight(p, p.split) == pytest.approx(4 * (1 + 3 / 20))
    with pytest.raises(WorkloadError, match="80 layers: 4 stages × 21 virtual stages make 84 chunks"):
        build_ops(m, train(batch=32, pp=4, vpp=21))


def test_training_sends_scatter_over_the_tp_group_and_gather_over_the_node(models):
    m = models["llama-3-70b"]
    message = 4 * 1024 * 8192 * 2  # four sequences' activations, bf16
    plain = {o.name: o for o in build_ops(m, train(batch=4, seq=1024, tp=8, pp=4))}
    # forward and backward: ×2; each device sends 1/8, then the group gathers the rest
    assert plain["stage_send"].bytes == 2 * message / 8
    assert plain["stage_gather"].bytes == 2 * 7 / 8 * message and plain["stage_gather"].link == "node"
    with_sp = {o.name: o for o in build_ops(m, train(batch=4, seq=1024, tp=8, pp=4, sp=True))}
    assert "stage_gather" not in with_sp  # sequence-parallel activations are split already
    prefill = WorkloadParams(phase="prefill", batch=4, seq=1024, tp=8, pp=4)
    serving = {o.name: o for o in build_ops(m, prefill)}
    assert serving["stage_send"].bytes == message  # inference sends them whole


def test_causal_attention_is_the_default_and_llama_3_405b_costs_6_n_d_plus_its_attention(models, catalog):
    m, tokens = models["llama-3.1-405b"], 15.6e12
    a = analyze(m, train(seq=8192), catalog["h100-sxm"])
    per_token = a.model_flops / 8192
    six_n = 6 * m.matmul_parameters()
    attention = 3 * 126 * 2 * 2 * 16384 * (8192 + 1) / 2  # forward + backward, the (s + 1)/2 keys seen
    assert per_token == pytest.approx(six_n + attention, rel=1e-3)
    assert six_n * tokens == pytest.approx(3.8e25, rel=0.01)  # the paper's 3.8e25 is 6·N·D
    assert per_token * tokens == pytest.approx(3.94e25, rel=0.005)  # +3.7 %: causal attention
    square = analyze(m, train(seq=8192, causal=False), catalog["h100-sxm"]).model_flops / 8192 * tokens
    assert square == pytest.approx(4.1e25, rel=0.01)  # the full score matrix: +8 %


def test_a_schema_1_session_is_read_as_it_was_meant(tmp_path):
    path = tmp_path / "old.yaml"
    path.write_text("schema: 1\nhardware: [h100-sxm]\nworkload:\n  model: llama-3-8b\n  phase: train\n"
                    "  batch: 8\n  seq: 1024\n  context: 1024\n  dtype: bf16\n  attention: fused\n"
                    "  recompute: true\n# end\n")
    params = load_session(path).params
    assert params.causal is False and params.recompute == "full"  # schema 1's defaults and values
    path.write_text(path.read_text().replace("schema: 1", "schema: 3"))
    with pytest.raises(Exception, match="newer version"):
        load_session(path)


# llm-analysis 0.2.2 (pip install llm-analysis; github.com/cli99/llm-analysis), train() with
# model megatron-lm-175b, gpu a100-sxm-80gb, dtype w16a16e16, batch_size_per_gpu 1,
# global_batch_size 1536, seq_len 2048, activation_recomputation 2 (full), tp 8, pp 8,
# dp 16, flash_attn True: "(weight+op_state+grad+act)_memory_per_gpu" in bytes.
LLM_ANALYSIS_GPT3 = {0: 50_968_431_616, 1: 19_522_823_296}


def test_gpt_3_on_1024_a100s_matches_llm_analysis_and_narayanan_et_al(models, catalog):
    m, a100 = models["gpt-3-175b"], catalog["a100-80gb-sxm"]
    layout = dict(batch=1536, seq=2048, tp=8, pp=8, dp=16, recompute="full")
    ours = {}
    for zero, theirs in LLM_ANALYSIS_GPT3.items():
        params = train(zero=zero, grad_dtype="16-bit", **layout)
        ours[zero] = analyze(m, params, a100).totals.memory_required_bytes
        # within 10 %: llm-analysis keeps fp32 gradients (ours here bf16, ZeRO's accounting:
        # --grad-dtype 16-bit) and one micro-batch's activations (ours: the 8 a 1F1B first stage holds)
        assert ours[zero] == pytest.approx(theirs, rel=0.10), zero
    a = analyze(m, train(**layout), a100)
    steps = 300e9 / (1536 * 2048)  # 300 B tokens
    days = steps * a.totals.flops / 140e12 / 86400  # at their 140 TFLOP/s a GPU, recomputation counted
    assert days == pytest.approx(34, rel=0.03)  # Narayanan et al. 2021, section 5.1: "34 days"
    readme = " ".join((Path(__file__).parents[2] / "docs" / "accounting.md").read_text().split())
    assert (f"needs {ours[0] / 1e9:.1f} GB a GPU, {ours[1] / 1e9:.1f} GB with `--zero 1`" in readme
            and f"take {days:.1f} days at Narayanan" in readme)  # docs/accounting.md's figures are these
