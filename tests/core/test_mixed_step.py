"""A step of continuous batching with chunked prefill: the decode rows and the chunk's rows
share each product's weight reads, attention stays each part's own; and the serving plan
that schedules such steps."""

from dataclasses import replace

import pytest

from explorer.core.analysis.analysis import analyze
from explorer.core.analysis.mixed_step import mixed_step
from explorer.core.analysis.serving import plan, time_of
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
    from explorer.core.analysis.serving import Speculation

    model, h100 = llama
    with pytest.raises(WorkloadError, match="speculative decoding with chunked prefill"):
        plan(model, WorkloadParams(), h100, 512, 512, speculation=Speculation(models["llama-3-8b"], 4, 0.7),
             prefill_chunk=2048)
