"""Spreading a step over devices: the shares of weights and batch, the communication ops
and their times on the catalogue's links (hand-computed cases)."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.analysis.analysis import analyze
from explorer.core.analysis.sweep import batch_sweep
from explorer.core.model import collective_costs, parallel
from explorer.core.model.step_ops import build_ops
from explorer.core.model.workload import WorkloadError, WorkloadParams


def test_ring_all_reduce_moves_2_n_minus_1_over_n_of_the_message():
    assert collective_costs.ring_all_reduce_bytes(16384, 8) == 28672  # 2 × 7/8
    assert collective_costs.ring_all_reduce_bytes(1000, 2) == 1000
    assert collective_costs.ring_all_reduce_bytes(1000, 1) == 0
    assert collective_costs.all_to_all_bytes(800, 8) == 700
    assert collective_costs.collective_steps("all_reduce", 8) == 14
    assert collective_costs.collective_steps("all_to_all", 8) == 7


def test_tp8_llama3_70b_decode_divides_weights_by_8_and_adds_two_all_reduces_per_layer(models, catalog):
    m, hw = models["llama-3-70b"], catalog["h100-sxm"]
    one = {o.name: o for o in build_ops(m, WorkloadParams(batch=4, context=2048))}
    eight = {o.name: o for o in build_ops(m, WorkloadParams(batch=4, context=2048, tp=8))}
    for name in ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "lm_head"):
        assert eight[name].weight_bytes * 8 == one[name].weight_bytes, name
    reduces = [o for o in eight.values() if o.role == "all_reduce"]
    assert [o.name for o in reduces] == ["attn_all_reduce", "mlp_all_reduce"]
    message = 4 * 1 * m.d_model * 2  # batch × one token × d_model × bf16
    for o in reduces:
        assert o.count == m.layers == 80
        assert o.bytes == 2 * 7 / 8 * message
        assert o.steps == 14
    a = analyze(m, WorkloadParams(batch=4, context=2048, tp=8), hw)
    assert a.totals.weight_bytes == pytest.approx(m.parameter_count() * 2 / 8, rel=0.001)
    i = [o.name for o in a.ops].index("attn_all_reduce")
    nvlink = hw.link("node")
    # 64 KiB on 8 devices: the engines' one-shot, two barriers and the 7 others' buffers
    assert a.time_s[i] == pytest.approx(2 * 0.6e-6 + 7 * message / 450e9)
    assert a.bounds[i] == "communication" and a.links[i] is nvlink
    assert a.totals.link_time_s == pytest.approx(160 * a.time_s[i])
    nccl = analyze(m, WorkloadParams(batch=4, context=2048, tp=8, allreduce="nccl"), hw)
    assert nccl.time_s[i] == pytest.approx(6.6e-6 + 14 * 0.6e-6 + 2 * 7 / 8 * message / 87.7e9)  # ring, LL


def test_the_all_reduce_share_of_decode_grows_with_tp(models, catalog):
    m, hw = models["llama-3-70b"], catalog["h100-sxm"]
    shares = []
    for tp in (2, 4, 8):
        t = analyze(m, WorkloadParams(batch=1, context=4096, tp=tp, allreduce="nccl"), hw).totals
        shares.append(t.link_time_s / t.time_s)
    assert shares == sorted(shares) and shares[-1] > 0.25  # NCCL's ring: latency takes over
    one_shot = analyze(m, WorkloadParams(batch=1, context=4096, tp=8), hw).totals
    assert one_shot.link_time_s / one_shot.time_s < 0.1  # the engines' one-shot: much less
    times = [analyze(m, WorkloadParams(batch=1, context=4096, tp=tp), hw).totals.time_s for tp in (2, 4, 8)]
    assert times == sorted(times, reverse=True)  # still faster, but less than 2× per doubling
    assert times[1] / times[2] < 2


def test_kv_heads_are_copied_when_fewer_than_devices(models):
    m = models["llama-3-70b"]  # 8 key/value heads
    shard = parallel.tensor_shard(m, 8)
    assert (shard.heads, shard.kv_heads, shard.head_dim) == (8, 1, 128)
    assert m.kv_cache_values(1000) == 8 * shard.kv_cache_values(1000)
    llama2 = models["llama-2-7b"]
    with pytest.raises(parallel.ParallelError, match="32 attention heads"):
        parallel.tensor_shard(llama2, 3)


def test_expert_parallel_splits_experts_and_adds_all_to_alls(models, catalog):
    m, hw = models["mixtral-8x7b"], catalog["h100-sxm"]
    whole = {o.name: o for o in build_ops(m, WorkloadParams(batch=64, context=1024, routing="all"))}
    split = {o.name: o for o in build_ops(m, WorkloadParams(batch=64, context=1024, routing="all", ep=8))}
    # each device holds 1 of the 8 experts and computes 1/8 of the token-expert pairs
    assert split["expert_up"].weight_bytes * 8 == whole["expert_up"].weight_bytes
    assert split["expert_up"].flops * 8 == pytest.approx(whole["expert_up"].flops)
    # its attention serves 64 / 8 sequences
    assert split["q_proj"].flops * 8 == whole["q_proj"].flops
    message = 8 * 2 * m.d_model * 2  # 8 local tokens × 2 experts each × d × bf16
    for name in ("moe_dispatch", "moe_combine"):
        assert split[name].role == "all_to_all" and split[name].bytes == pytest.approx(7 / 8 * message)
        assert split[name].count == m.layers
    a = analyze(m, WorkloadParams(batch=64, context=1024, ep=8), hw)
    alone = analyze(m, WorkloadParams(batch=64, context=1024), hw)
    assert a.totals.kv_cache_bytes * 8 == alone.totals.kv_cache_bytes


def test_pipeline_stages_hold_their_layers_and_send_at_each_boundary(models, catalog):
    m, hw = models["llama-3-70b"], catalog["h100-sxm"]
    assert parallel.stage_layers(10, 4) == [(0, 1, 2), (3, 4, 5), (6, 7), (8, 9)]
    a = analyze(m, WorkloadParams(batch=8, context=2048, pp=4), hw)
    sends = [o for o in a.ops if o.role == "send_recv"]
    assert len(sends) == 1 and sends[0].layers == (19, 39, 59)
    layer = m.layer_parameters()
    embedding_stage = 20 * layer + m.embedding_parameters()
    head_stage = 20 * layer + m.d_model + m.vocab * m.d_model
    assert a.totals.weight_bytes == 2 * max(embedding_stage, head_stage)
    alone = analyze(m, WorkloadParams(batch=8, context=2048), hw).totals
    # one batch passes every stage in turn: the same work plus three sends
    assert a.totals.time_s == pytest.approx(alone.time_s + a.totals.link_time_s, rel=1e-9)


def test_groups_beyond_a_node_use_the_network(models, catalog):
    m, hw = models["llama-2-7b"], catalog["h100-sxm"]
    inside = analyze(m, WorkloadParams(phase="train", batch=8, seq=1024, dp=8, grad_dtype="16-bit"), hw)
    across = analyze(m, WorkloadParams(phase="train", batch=16, seq=1024, dp=16, grad_dtype="16-bit"), hw)
    index = [o.name for o in inside.ops].index("grad_all_reduce")
    assert inside.links[index].tier == "node" and across.links[index].tier == "network"
    gradients = m.parameter_count() * 2
    assert inside.ops[index].bytes == pytest.approx(2 * 7 / 8 * gradients)
    # 13.5 GB over the network: NCCL's ring with the Simple protocol (8.4 µs + 30 steps × 14 µs)
    assert across.time_s[index] == pytest.approx(8.4e-6 + 30 * 14e-6 + 2 * 15 / 16 * gradients / 50e9)


@pytest.mark.parametrize(("model", "device", "kwargs", "message"), [
    ("llama-2-7b", "h100-sxm", {"tp": 3}, "32 attention heads"),
    ("llama-2-7b", "h100-sxm", {"tp": 16}, "more than one H100 SXM node of 8"),
    ("llama-2-7b", "epyc-9654", {"tp": 2}, "lists no link to other devices"),
    ("llama-2-7b", "h100-sxm", {"ep": 2, "batch": 8}, "not a mixture of experts"),
    ("mixtral-8x7b", "h100-sxm", {"ep": 2, "tp": 16, "batch": 8},
     "tensor parallel over 16 devices spans more than one H100 SXM node of 8"),
    ("llama-2-7b", "h100-sxm", {"pp": 33}, "at most 32 pipeline stages"),
    ("resnet-50", "h100-sxm", {"tp": 2}, "only be split by data parallel"),
    ("llama-2-7b", "l4", {"dp": 16, "phase": "train", "batch": 16}, "lists no network link"),
])
def test_splits_that_cannot_work_say_why(models, catalog, model, device, kwargs, message):
    with pytest.raises(WorkloadError, match=message):
        analyze(models[model], WorkloadParams(**kwargs), catalog[device])


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"tp": 0}, "tp must be at least 1"),
    ({"ep": 1025}, "ep must be at most 1,024"),
])
def test_bad_degrees_name_the_parameter(kwargs, message):
    with pytest.raises(WorkloadError, match=message):
        WorkloadParams(**kwargs)


def test_a_sweep_agrees_with_the_analysis_of_each_batch(models, catalog):
    m, hw = models["llama-3-70b"], catalog["h100-sxm"]
    for kwargs in ({"tp": 8}, {"pp": 2, "tp": 4}):
        params = WorkloadParams(batch=16, context=2048, **kwargs)
        sweep = batch_sweep(m, params, hw, batches=[16, 32])
        for b, t in zip(sweep.batch, sweep.time_s, strict=True):
            a = analyze(m, WorkloadParams(batch=int(b), context=2048, **kwargs), hw)
            assert t == pytest.approx(a.totals.time_s, rel=1e-9)
        assert sweep.max_batch > 0 and np.all(sweep.bytes > 0)


@pytest.mark.parametrize("kwargs", [
    {"phase": "train", "batch": 64, "seq": 4096, "tp": 8, "pp": 4, "dp": 2, "recompute": "full"},
    {"phase": "train", "batch": 16, "seq": 2048, "pp": 8, "tp": 8},
    {"batch": 64, "context": 2048, "pp": 4, "tp": 2},
    {"phase": "prefill", "batch": 8, "seq": 4096, "tp": 8},
])
def test_one_devices_step_stays_under_its_roof(models, catalog, kwargs):
    """The whole-step point is one device's FLOPs over the step's time: never above the peak
    (a pipeline stage does 1/pp of the ops' work)."""
    a = analyze(models["llama-3-70b"], WorkloadParams(**kwargs), catalog["h100-sxm"])
    t = a.totals
    assert t.flops / t.time_s <= a.roofs.matrix.flops_per_s
    once = [o.name in ("optimizer", "grad_all_reduce", "expert_grad_all_reduce") for o in a.ops]
    work = a.counts * a.flops
    expected = work[[not x for x in once]].sum() / a.params.pp + work[once].sum()
    assert t.flops == pytest.approx(float(expected), rel=1e-9)


def test_explain_says_what_communication_costs_and_its_claims_hold(models, catalog):
    from explorer.core.words.explain import explain_workload

    a = analyze(models["llama-3-70b"], WorkloadParams(context=4096, tp=8, allreduce="nccl"), catalog["b200"])
    found = {e.title: e for e in explain_workload(a)}
    limits = found["What limits the step"]
    assert "communication-bound" in limits.text and "98% of it the links' latency" in limits.text
    assert all(e.problems() == [] for e in found.values())
    assert "Apart from its communication, the step stays memory-bound" in found["Batching"].text
    train = analyze(models["llama-3-70b"], WorkloadParams(phase="train", batch=64, seq=4096, tp=8, pp=4, dp=2,
                                                          recompute="full"), catalog["h100-sxm"])
    memory = {e.title: e for e in explain_workload(train)}["Memory"]
    assert "on each of its 64 devices" in memory.text
    assert "gradients and Adam's state 33.8 GiB" in memory.text  # fp32 gradients, 4 + 12 bytes
    assert memory.problems() == []


def test_tensor_and_expert_parallel_together_split_attention_and_experts(models, catalog):
    """Mixtral 8x7B on 8 GPUs, TP 2 × EP 4: attention over TP pairs, each pair with a quarter
    of the batch; each GPU holds 2 of the 8 experts, half of each; the all-to-alls run among
    the 4 GPUs of a TP rank and carry the pair's tokens whole."""
    m, hw = models["mixtral-8x7b"], catalog["h100-sxm"]
    params = WorkloadParams(batch=8, context=1024, tp=2, ep=4)
    ops = {o.name: o for o in build_ops(m, params)}
    local = 8 // 4  # sequences through each TP pair's attention
    message = local * 2 * m.d_model * 2  # tokens × 2 picks × d_model × bf16
    assert ops["moe_dispatch"].bytes == pytest.approx(3 / 4 * message) and ops["moe_dispatch"].group == 4
    assert ops["attn_all_reduce"].group == ops["mlp_all_reduce"].group == 2
    assert parallel.expert_parameters(m, parallel.Split(tp=2, ep=4)) == 32 * 2 * m.expert_parameters() // 2
    a = analyze(m, params, hw)
    assert a.totals.fits_in_memory and all(link is not None for o, link in zip(a.ops, a.links, strict=True)
                                           if o.unit == "link")


def test_deepseek_v3_is_served_with_data_parallel_attention_and_ep_8(models, catalog):
    m, hw = models["deepseek-v3"], catalog["h200-sxm"]
    a = analyze(m, WorkloadParams(batch=64, context=2048, dtype="fp8", ep=8), hw)
    sends = [o for o in a.ops if o.role == "all_to_all"]
    assert [o.name for o in sends] == ["moe_dispatch", "moe_combine"] and sends[0].count == 58  # MoE layers
    tokens = 64 // 8  # each GPU's attention takes 1/8 of the batch
    assert sends[0].bytes == pytest.approx(7 / 8 * tokens * 8 * m.d_model * 2)  # 8 picks, bf16 activations
    assert a.totals.fits_in_memory and a.totals.link_time_s > 0


def test_an_uneven_batch_is_costed_on_its_busiest_replica_and_said(models, catalog):
    m, hw = models["llama-3-8b"], catalog["h100-sxm"]
    uneven = analyze(m, WorkloadParams(batch=10, context=1024, dp=4), hw)
    even = analyze(m, WorkloadParams(batch=12, context=1024, dp=4), hw)
    assert uneven.params.local_batch == 3  # 3 + 3 + 2 + 2
    assert uneven.totals.time_s == even.totals.time_s  # the busiest replica sets the step
    assert uneven.totals.kv_cache_bytes == even.totals.kv_cache_bytes
    assert "a batch of 10 does not split evenly over 4 data-parallel replicas: the busiest takes 3" \
        in " ".join(uneven.notes)
    assert uneven.totals.tokens_per_s == pytest.approx(10 / uneven.totals.time_s)
