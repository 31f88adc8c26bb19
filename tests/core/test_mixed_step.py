"""A step of continuous batching with chunked prefill: the decode rows and the chunk's rows
share each product's weight reads, attention stays each part's own; and the serving plan
that schedules such steps."""

from dataclasses import replace

import pytest

from explorer.core.analysis.analysis import analyze
from explorer.core.analysis.mixed_step import mixed_step
from explorer.core.analysis.serving import plan
from explorer.core.analysis.serving_request import time_of
from explorer.core.model.workload import WorkloadError, WorkloadParams


@pytest.fixture
def llama(models, catalog):
    return models["llama-3-8b"], catalog["h100-sxm"]


def test_the_mixed_bound_reads_each_weight_once(llama):
    model, h100 = llama
    step = mixed_step(model, WorkloadParams(), h100, batch=32, context=1536, chunk=256, prefix=512)
    d = analyze(model, WorkloadParams(batch=32, context=1536), h100)
    p = analyze(model, WorkloadParams(phase="prefill", seq=256, prefix=512), h100)
    bandwidth = h100.main_memory.bandwidth_bytes_per_s
    expected = 0.0
    for i, o in enumerate(d.ops):  # written out: the two parts' work, weights once for products
        arithmetic = float(d.flops[i] / d.peaks[i] + p.flops[i] / p.peaks[i])
        if o.weight_bytes:
            moved = float(d.bytes[i] + p.bytes[i] - o.weight_bytes)
            expected += max(arithmetic, moved / bandwidth) * o.count
        else:
            expected += float(d.time_s[i] + p.time_s[i]) * o.count
    assert step.bound_s == pytest.approx(expected)
    assert max(d.totals.time_s, p.totals.time_s) < step.bound_s < d.totals.time_s + p.totals.time_s


def test_a_one_token_chunk_rides_almost_free_on_a_memory_bound_decode(llama):
    model, h100 = llama
    step = mixed_step(model, WorkloadParams(), h100, batch=1, context=1024, chunk=1)
    decode, source = time_of(analyze(model, WorkloadParams(context=1024), h100))
    assert source == step.time_source == "expected"
    assert decode < step.time_s < 1.01 * decode  # the chunk's own prefill would take as long again


def test_chunked_prefill_keeps_the_batch_the_chunks_can_refill(llama):
    model, h100 = llama
    # 4,096-token prompts, 128-token outputs, 512-token chunks: 16 sequences finish a prompt's
    # worth of tokens (16 × 4096 / 128 = 512) a step; a 17th could not be refilled
    p = plan(model, WorkloadParams(), h100, prompt=4096, output=128, prefill_chunk=512)
    assert p.points[-1].batch == 16 < p.kv_wall_sequences
    assert p.chosen.limited_by.startswith("the prefill chunk: 17 sequences finish faster")
    top = p.points[-1]
    assert top.tokens_per_s_per_device == pytest.approx(16 / top.tpot_s)  # prefills inside the steps
    chunk = mixed_step(model, replace(WorkloadParams(), context=4096 + 64), h100, 16, 4096 + 64, 512,
                       (4096 - 512) // 2)
    assert top.ttft_s == pytest.approx(8 * chunk.time_s)  # eight chunks, one a step
    assert any("chunked prefill" in n for n in p.notes)


def test_chunked_prefill_and_speculation_are_not_modelled_together(llama, models):
    from explorer.core.analysis.speculation import Speculation

    model, h100 = llama
    with pytest.raises(WorkloadError, match="speculative decoding with chunked prefill"):
        plan(model, WorkloadParams(), h100, 512, 512, speculation=Speculation(models["llama-3-8b"], 4, 0.7),
             prefill_chunk=2048)


def test_replicas_each_refill_their_own_sequences(llama):
    """Data parallel: two replicas of 128 sequences each decode and prefill as one replica of
    128 does; tokens/s a device and the batch the chunks can refill are the same a replica."""
    model, h100 = llama
    one = plan(model, WorkloadParams(), h100, 1024, 1024, prefill_chunk=512)
    two = plan(model, WorkloadParams(dp=2), h100, 1024, 1024, prefill_chunk=512)
    at = {p.batch: p for p in one.points}
    for p in two.points:
        if p.batch % 2 == 0 and p.batch // 2 in at:
            assert p.tpot_s == pytest.approx(at[p.batch // 2].tpot_s)
            assert p.tokens_per_s_per_device == pytest.approx(at[p.batch // 2].tokens_per_s_per_device)
    assert two.points[-1].batch == 2 * one.points[-1].batch
    plain_one = plan(model, WorkloadParams(), h100, 1024, 1024)  # prefills apart: the same
    plain_two = plan(model, WorkloadParams(dp=2), h100, 1024, 1024)
    at = {p.batch: p for p in plain_one.points}
    same = [(p, at[p.batch // 2]) for p in plain_two.points if p.batch % 2 == 0 and p.batch // 2 in at]
    assert same
    assert all(a.tokens_per_s_per_device == pytest.approx(b.tokens_per_s_per_device) for a, b in same)


def test_chunks_beyond_the_decode_steps_run_as_prefill_only_steps(llama):
    """8,192-token prompts, 4 output tokens, 512-token chunks: a request needs 16 chunk steps
    and gives 4 tokens, so 12 steps prefill alone and the rate is 4 tokens in 16 steps."""
    model, h100 = llama
    p = plan(model, WorkloadParams(), h100, prompt=8192, output=4, prefill_chunk=512)
    assert [q.batch for q in p.points] == [1]
    assert p.chosen.limited_by.startswith("the prefill chunk: 2 sequences")
    step = mixed_step(model, replace(WorkloadParams(), context=8194), h100, 1, 8194, 512, (8192 - 512) // 2)
    alone = time_of(step.chunk)[0]
    assert p.chosen.tokens_per_s_per_device == pytest.approx(4 / (4 * step.time_s + 12 * alone))
    assert p.chosen.tpot_s == pytest.approx(step.time_s)
    assert p.chosen.ttft_s == pytest.approx(16 * step.time_s)


def test_a_window_s_prefill_prefix_and_training_rows_do_not_stop_a_plan(llama):
    model, h100 = llama
    base = plan(model, WorkloadParams(), h100, 1024, 1024)
    assert plan(model, WorkloadParams(phase="prefill", prefix=256), h100, 1024, 1024) == base
    assert plan(model, WorkloadParams(phase="train", recompute="full"), h100, 1024, 1024) == base


def test_an_encoder_has_no_cached_prefix(models, catalog):
    vit, h100 = models["vit-b-16"], catalog["h100-sxm"]
    flops = [analyze(vit, WorkloadParams(phase="prefill", batch=8, prefix=n), h100).totals.flops
             for n in (0, 4096)]
    assert flops[0] == flops[1]


def test_kv_offload_reads_each_offloaded_cache_over_the_host_link_every_step(models, catalog):
    """Llama 3 70B at TP 4 on H100 with 256 GiB of host memory a device: the devices hold 248
    sequences at full length (1,024 + 1,024 tokens); host memory holds as many more as fit
    at full length too, and each one beyond the devices' adds its cache at the middle of its
    output (the average read) on one device over PCIe 5.0 x16 (64 GB/s a direction) to every
    step, so the batch grows and tokens/s a device does not."""
    from explorer.core.analysis.memory import weights_and_kv
    from explorer.core.analysis.serving_request import decode_params, last_step_params

    model, h100 = models["llama-3-70b"], catalog["h100-sxm"]
    params = WorkloadParams(tp=4)
    plain = plan(model, params, h100, 1024, 1024)
    off = plan(model, params, h100, 1024, 1024, kv_offload_bytes=256 * 2**30)
    per_sequence = weights_and_kv(model, decode_params(params, 1024, 1024, 16))[1]
    full = weights_and_kv(model, last_step_params(params, 1024, 1024, 16))[1]
    assert full == 2048 * 80 * 2 * 2 * 128 * 2 and per_sequence == 1536 * 80 * 2 * 2 * 128 * 2
    assert off.kv_wall_sequences == plain.kv_wall_sequences == 248
    assert off.offloaded_sequences == 256 * 2**30 // full
    assert off.points[-1].batch == 248 + off.offloaded_sequences
    beyond = next(p for p in off.points if p.batch == 512)
    step = time_of(analyze(model, replace(decode_params(params, 1024, 1024), batch=512), h100))[0]
    assert beyond.tpot_s == pytest.approx(step + (512 - 248) * per_sequence / 64e9)
    assert off.chosen.batch == 248 and off.chosen.tokens_per_s_per_device == pytest.approx(
        plain.chosen.tokens_per_s_per_device)
    assert any("read over PCIe 5.0 x16 (64 GB/s a direction)" in n for n in off.notes)


def test_a_device_without_a_host_link_cannot_offload(models, catalog):
    with pytest.raises(WorkloadError, match="no host link: its KV cache cannot be offloaded"):
        plan(models["llama-3-8b"], WorkloadParams(), catalog["apple-m2-max"], 512, 512,
             kv_offload_bytes=2**30)


def test_offload_with_chunks_and_pipelines_waits_for_every_read(models, catalog):
    """Chunked prefill beyond the devices' wall: each chunk step also waits for the offloaded
    caches, so the first token does too. A pipeline's stages read their own layers' caches
    in turn: TP 4 × PP 2 waits twice what one device of TP 8 does for the same bytes."""
    from explorer.core.analysis.kv_offload import Offload
    from explorer.core.analysis.serving_request import decode_params

    model, h100 = models["llama-3-70b"], catalog["h100-sxm"]
    p = plan(model, WorkloadParams(tp=4), h100, 1024, 1024, prefill_chunk=512, kv_offload_bytes=256 * 2**30)
    at = next(q for q in p.points if q.batch == 512)
    assert at.ttft_s > at.tpot_s  # two chunk steps, each as long as a decode step at least
    pipeline = Offload.of(model, decode_params(WorkloadParams(tp=4, pp=2), 1024, 1024, 16), h100, 100, 2**40)
    tensor = Offload.of(model, decode_params(WorkloadParams(tp=8), 1024, 1024, 16), h100, 100, 2**40)
    assert pipeline.seconds == pytest.approx(2 * tensor.seconds)


def test_host_memory_that_holds_no_cache_is_refused(models, catalog):
    with pytest.raises(WorkloadError, match=r"holds no sequence's .* of KV cache: offload at least"):
        plan(models["llama-3-70b"], WorkloadParams(tp=4), catalog["h100-sxm"], 1024, 1024,
             kv_offload_bytes=0.01 * 2**30)


def test_offload_the_chunks_never_reach_is_not_noted(llama):
    model, h100 = llama
    p = plan(model, WorkloadParams(), h100, 4096, 128, prefill_chunk=512, kv_offload_bytes=64 * 2**30)
    assert p.points[-1].batch == 16 < p.kv_wall_sequences  # the chunks refill 16: no cache leaves
    assert not any("KV offload" in n for n in p.notes)


def test_erlang_c_by_hand():
    from explorer.core.analysis.serving_load import erlang_c, queue_wait

    assert erlang_c(1, 0.5) == pytest.approx(0.5)  # M/M/1: an arrival waits with the utilisation
    assert erlang_c(2, 1.0) == pytest.approx(1 / 3)  # (A²/2!·2/(2−A)) / (1 + A + A²/2!·2/(2−A))
    assert queue_wait(1, 0.5, 1.0) == pytest.approx(1.0)  # M/M/1: ρ/(μ − λ) = 0.5/0.5
    assert queue_wait(4, 4.0, 1.0) is None  # the slots cannot keep up


def test_a_load_takes_the_batch_with_the_shortest_time_in_the_system(llama):
    """1 request a second of 1,024 + 1,024 tokens: a slot is held for the plan's own cycle
    (the output and the prefills it waits for, so B slots serve the plan's own requests/s);
    only batches with more slots than requests offered keep up; each gives the load's
    tokens/s, its first token after the wait for a free slot; the plan takes the quickest."""
    from explorer.core.analysis.serving_load import queue_wait

    model, h100 = llama
    cold = {p.batch: p for p in plan(model, WorkloadParams(), h100, 1024, 1024, tpot_target_s=0.05).points}
    p = plan(model, WorkloadParams(), h100, 1024, 1024, tpot_target_s=0.05, arrival_rate=1.0)
    for q in p.points:
        assert q.tokens_per_s_per_device == pytest.approx(1024.0)  # the load's
        if q.batch in cold:
            service = q.batch * 1024 / cold[q.batch].tokens_per_s_per_device  # the cycle: its own rate
            assert 1.0 * service < q.batch  # stable: fewer requests offered than slots
            assert q.ttft_s == pytest.approx(cold[q.batch].ttft_s + queue_wait(q.batch, 1.0, service))
    assert min(q.batch for q in p.points) > 8  # 8 slots cannot hold the ~9 requests in service
    best = min(p.points, key=lambda q: q.ttft_s + 1024 * q.tpot_s)
    assert p.chosen.batch == best.batch and p.chosen.limited_by.startswith("the load: 1 requests/s")
    too_much = plan(model, WorkloadParams(), h100, 1024, 1024, tpot_target_s=0.05, arrival_rate=100.0)
    assert too_much.chosen is None and "the queue would grow without end" in too_much.notes[-1]


def test_a_load_is_kept_up_with_only_below_the_plan_s_own_rate(llama):
    """The most a batch serves without a load is its own rate: a load just above the best
    plan's requests/s keeps up with no batch (the queue's slots turn over at that rate)."""
    model, h100 = llama
    best = plan(model, WorkloadParams(), h100, 1024, 1024).chosen
    most = best.tokens_per_s_per_device / 1024  # requests/s
    beyond = plan(model, WorkloadParams(), h100, 1024, 1024, arrival_rate=most * 1.05)
    assert beyond.points == () and beyond.chosen is None
    assert plan(model, WorkloadParams(), h100, 1024, 1024, arrival_rate=most * 0.9).chosen is not None


def test_a_load_with_offload_and_a_target_plans_without_failing(llama):
    model, h100 = llama
    p = plan(model, WorkloadParams(), h100, 1024, 1024, ttft_target_s=0.0245, kv_offload_bytes=64 * 2**30,
             arrival_rate=8.0)
    assert p.chosen is None or p.chosen.ttft_s <= 0.0245
