"""Serving: the formulas by hand-computed cases (the price of a million tokens, speculative
decoding's speed-up, the KV-cache wall of Llama 3 70B at TP 4 on H100 from first
principles) and the operating points a plan picks."""

import math
from pathlib import Path

import pytest

from explorer.core.analysis.engine_terms import read_terms
from explorer.core.analysis.memory import activations_per_sequence
from explorer.core.analysis.serving import plan
from explorer.core.analysis.serving_request import (
    cost_per_million_tokens,
    decode_params,
    last_step_params,
    paged_context,
)
from explorer.core.analysis.speculation import Speculation, speculative_speedup, tokens_per_target_step
from explorer.core.hardware.hardware import DeviceKind
from explorer.core.model.workload import WorkloadParams
from explorer.core.words.serving_plan import plan_sentences


def test_a_million_tokens_at_2_50_an_hour_and_1000_tokens_a_second_cost_69_cents():
    assert cost_per_million_tokens(2.50, 1, 1000.0) == pytest.approx(0.69444, abs=1e-5)
    assert cost_per_million_tokens(2.50, 8, 8000.0) == pytest.approx(0.69444, abs=1e-5)  # per device the same


def test_speculative_decoding_at_alpha_0_8_gamma_4_and_c_0_05():
    assert tokens_per_target_step(0.8, 4) == pytest.approx(3.3616)  # (1 − 0.8⁵) / 0.2
    assert speculative_speedup(0.8, 4, 0.05) == pytest.approx(3.3616 / 1.2)  # 2.801×
    assert tokens_per_target_step(1.0, 4) == 5 and tokens_per_target_step(0.0, 4) == 1


def test_contexts_are_allocated_in_whole_pages():
    assert [paged_context(t) for t in (1, 16, 17, 1536)] == [16, 16, 32, 1536]
    with pytest.raises(ValueError):
        paged_context(10, 0)


def test_the_kv_wall_of_llama_3_70b_at_tp_4_on_h100_from_first_principles(models, catalog):
    model, h100 = models["llama-3-70b"], catalog["h100-sxm"]
    params = WorkloadParams(tp=4)
    p = plan(model, params, h100, prompt=1024, output=1024)
    # Weights on one of 4 devices: the layers' and the vocabulary's quarter, the norms whole
    norms = 80 * 2 * 8192 + 8192
    weights = ((model.parameter_count() - norms) // 4 + norms) * 2
    # KV cache per token on one device: 80 layers × K and V × 2 of 8 KV heads × 128 × 2 bytes
    kv_token = 80 * 2 * 2 * 128 * 2
    context = 1024 + 1024  # full length: the last step's cache must fit (whole 16-token pages)
    last = last_step_params(params, 1024, 1024, 16)
    per_sequence = context * kv_token + activations_per_sequence(model, last)
    assert activations_per_sequence(model, last) < 0.01 * context * kv_token
    budget = h100.usable_memory_bytes * 0.9
    assert p.kv_wall_sequences == int((budget - weights) // per_sequence) == 248
    # at the middle of the output (1,536 tokens) 331 would fit, and run out at their last tokens
    assert int((budget - weights) // (1536 * kv_token + activations_per_sequence(model, last))) == 331
    assert p.points[-1].batch == p.kv_wall_sequences and p.devices == 4
    assert "holds at most 248 requests at full length (prompt + output)" in plan_sentences(
        p, model.name, h100)[0]


def test_a_plan_takes_the_largest_batch_that_meets_the_tpot_target(models, catalog):
    model, h100 = models["llama-3-8b"], catalog["h100-sxm"]
    free = plan(model, WorkloadParams(), h100, prompt=512, output=512, price_per_device_hour=2.5)
    # no target: the most tokens/s a device, here at the wall: 452 sequences of 1,024 tokens
    # (each 1,024 × 32 layers × K and V × 8 KV heads × 128 × 2 bytes = 128 MiB)
    assert free.kv_wall_sequences == 452
    assert free.chosen.batch == max(free.points, key=lambda p: p.tokens_per_s_per_device).batch
    assert free.chosen.batch == 452
    assert free.chosen.limited_by.startswith("the KV-cache wall")
    target = free.points[3].tpot_s * 1.001  # batch 8's time per token
    tight = plan(model, WorkloadParams(), h100, prompt=512, output=512, tpot_target_s=target)
    # batch 9 takes longer than 8 (the bisection between 8 and 16 finds the edge)
    assert tight.chosen.batch == 8 and tight.chosen.limited_by.startswith("the TPOT target: batch 9")
    rates = [p.tokens_per_s_per_device for p in free.points]
    assert rates == sorted(rates)  # batching helps throughput …
    users = [p.tokens_per_s_per_user for p in free.points]
    assert users == sorted(users, reverse=True)  # … and costs each user speed
    point = free.points[2]  # batch 4: a cycle of 512 steps makes 4 × 512 tokens and prefills 4 prompts
    cycle = 512 * point.tpot_s + 4 * point.ttft_s
    rate = 4 * 512 / cycle
    assert point.tokens_per_s_per_device == pytest.approx(rate)
    # a user: its 512 tokens from its start to its last token, the 3 other prefills included
    assert point.tokens_per_s_per_user == pytest.approx(512 / cycle)
    assert point.tokens_per_s_per_user < 1 / point.tpot_s
    assert point.cost_per_million_tokens == pytest.approx(cost_per_million_tokens(2.5, 1, rate))
    assert point.joules_per_token == pytest.approx(700 / rate)  # H100 SXM's 700 W TDP: at TDP
    assert plan(model, WorkloadParams(), h100, 512, 512, ttft_target_s=1e-6).chosen is None


@pytest.mark.parametrize(("run_id", "batch"), [
    ("nim-llama-3.3-70b-h100-tp2-decode-1500", 1),  # one request at a time (concurrency 1)
    ("trt-llm-llama-2-7b-a100-batch-32", 32),  # a static batch of 32 requests
    ("vllm-llama-3.1-8b-h200-batch-8", 8),
])
def test_the_time_per_token_a_plan_gives_matches_published_serving_runs(models, catalog, run_id, batch):
    """Three published runs at a stated concurrency (resources/validation/published-runs.yaml):
    the plan's time per output token at that batch within 0.8–1.25 of the measured one."""
    from explorer.core.analysis.validation import BAND, read_runs

    run = {r.id: r for r in read_runs()}[run_id]
    params = WorkloadParams(**{k: v for k, v in run.workload.items() if k != "batch"})
    if run.kind == "decode":  # a token at a stated context: the middle of 500 + 2,000 tokens
        prompt, output, measured = 500, 2000, run.measured_s
    else:  # a whole request's time over its tokens (its prefill a small part)
        prompt, output, measured = run.prompt, run.output, run.measured_s / run.output
    result = plan(models[run.model], params, catalog[run.hardware], prompt, output)
    [point] = [p for p in result.points if p.batch == batch]
    assert result.time_source == "expected"
    assert BAND[0] <= point.tpot_s / measured <= BAND[1], point.tpot_s / measured


@pytest.mark.parametrize(("model", "device", "params", "words"), [
    ("llama-3.1-405b", "l4", {}, "does not fit on NVIDIA L4: its weights take"),
    ("resnet-50", "h100-sxm", {}, "does not generate tokens"),
    ("llama-3-8b", "h100-sxm", {"tp": 3}, "heads"),
])
def test_what_cannot_be_served_says_why(models, catalog, model, device, params, words):
    from explorer.core.model.workload import WorkloadError

    with pytest.raises(WorkloadError, match=words):
        plan(models[model], WorkloadParams(**params), catalog[device], prompt=512, output=512)


def test_pages_of_the_kv_cache_change_the_wall_not_the_time_a_token(models, catalog):
    model, h100 = models["llama-3-8b"], catalog["h100-sxm"]
    small, big = (plan(model, WorkloadParams(), h100, 100, 4, block=b) for b in (16, 65536))
    assert small.points[0].tpot_s == big.points[0].tpot_s
    assert big.kv_wall_sequences < small.kv_wall_sequences


def test_an_inference_pipeline_says_its_throughput_is_a_lower_bound(models, catalog):
    p = plan(models["llama-3-70b"], WorkloadParams(pp=4), catalog["h100-sxm"], 512, 512)
    assert any("lower bound" in note for note in p.notes)


def test_speculation_helps_a_memory_bound_decode_and_not_a_compute_bound_one(models, catalog):
    """Llama 3 8B drafting 4 tokens for Llama 3 70B at TP 4, each accepted at 0.8: at batch 1
    the time per token follows Leviathan et al.'s speed-up, tokens ÷ (γ·c + 1) with c the
    draft's step over the target's; at the KV wall, where the check's arithmetic dominates,
    speculation gives fewer tokens a second than plain decoding."""
    from explorer.core.analysis.serving_request import step_s
    from explorer.core.analysis.speculation import Speculation

    target, draft, h100 = models["llama-3-70b"], models["llama-3-8b"], catalog["h100-sxm"]
    params = WorkloadParams(tp=4)
    plain = plan(target, params, h100, 1024, 1024)
    fast = plan(target, params, h100, 1024, 1024, speculation=Speculation(draft, 4, 0.8))
    step = decode_params(params, 1024, 1024)
    c = step_s(draft, step, h100)[0] / step_s(target, step, h100)[0]
    formula = speculative_speedup(0.8, 4, c)
    assert plain.points[0].tpot_s / fast.points[0].tpot_s == pytest.approx(formula, rel=0.05)
    assert fast.kv_wall_sequences < plain.kv_wall_sequences  # the draft's weights and cache take room
    at = {p.batch: p for p in plain.points}, {p.batch: p for p in fast.points}
    assert at[1][128].tpot_s > at[0][128].tpot_s  # at batch 128 speculation is slower than decoding
    assert any("speculative decoding with Llama 3 8B" in note for note in fast.notes)


def test_the_readme_s_speculation_example_is_about_twice_as_fast(models, catalog):
    from explorer.core.analysis.speculation import Speculation

    params = WorkloadParams(tp=4)
    plain = plan(models["llama-3-70b"], params, catalog["h100-sxm"], 1024, 1024)
    fast = plan(models["llama-3-70b"], params, catalog["h100-sxm"], 1024, 1024,
                speculation=Speculation(models["llama-3-8b"], 4, 0.8))
    assert round(plain.points[0].tpot_s / fast.points[0].tpot_s) == 2  # "about twice as fast"


def test_prefix_caching_finds_whole_pages_and_computes_at_least_the_last_token():
    from explorer.core.analysis.serving_request import cached_prefix
    from explorer.core.model.workload import WorkloadError

    assert cached_prefix(4096, 0.75) == 3072 and cached_prefix(100, 0.5) == 48  # 50 → three pages
    assert cached_prefix(16, 0.99) == 0 and cached_prefix(17, 0.99) == 16  # the last token is computed
    assert cached_prefix(4096, 0.0) == 0 and cached_prefix(4096, 0.5, block=1) == 2048
    with pytest.raises(WorkloadError, match="from 0 to below 1"):
        cached_prefix(4096, 1.0)


def test_a_prefix_hit_shortens_the_first_token_and_leaves_the_decode_alone(models, catalog):
    from dataclasses import replace

    from explorer.core.analysis.analysis import analyze
    from explorer.core.analysis.serving_request import time_of

    model, h100 = models["llama-3-8b"], catalog["h100-sxm"]
    cold = plan(model, WorkloadParams(), h100, prompt=4096, output=256)
    warm = plan(model, WorkloadParams(), h100, prompt=4096, output=256, prefix_hit=0.75)
    prefill = replace(WorkloadParams(), phase="prefill", seq=1024, prefix=3072, batch=1)
    assert warm.points[0].ttft_s == time_of(analyze(model, prefill, h100))[0]
    assert warm.points[0].ttft_s < cold.points[0].ttft_s / 2
    assert [p.tpot_s for p in warm.points] == [p.tpot_s for p in cold.points]
    assert warm.kv_wall_sequences == cold.kv_wall_sequences  # the shared pages are not shared here
    assert warm.chosen.tokens_per_s_per_device > cold.chosen.tokens_per_s_per_device
    assert any("3,072 of each prompt's 4,096 tokens are found in the cache" in n for n in warm.notes)


def test_a_user_s_rate_comes_from_the_same_cycle_as_a_device_s(models, catalog):
    """Llama 3 70B at TP 4 on H100, 1,024 + 1,024 tokens: at the KV wall (248) a user's 1,024
    tokens take the cycle, 1,024 decode steps and the 248 prefills of the batch it waits
    through, not 1,024 steps alone; so tokens/s a user × batch = tokens/s a device × devices,
    with data parallel replicas too (each replica's cycle holds its own share)."""
    model, h100 = models["llama-3-70b"], catalog["h100-sxm"]
    p = plan(model, WorkloadParams(tp=4), h100, 1024, 1024)
    wall = p.points[-1]
    assert wall.batch == 248
    cycle = 1024 * wall.tpot_s + 248 * wall.ttft_s
    assert wall.tokens_per_s_per_user == pytest.approx(1024 / cycle)
    assert wall.tokens_per_s_per_user == pytest.approx(14.8, abs=0.05)  # 1 / TPOT would say 21.7
    assert 1 / wall.tpot_s == pytest.approx(21.7, abs=0.05)
    for q in p.points:
        assert q.tokens_per_s_per_user * q.batch == pytest.approx(q.tokens_per_s_per_device * 4)
    two = plan(model, WorkloadParams(tp=4, dp=2), h100, 1024, 1024)
    for q in two.points:  # even batches: each replica's cycle has batch ÷ 2 prefills
        if q.batch % 2 == 0:
            assert q.tokens_per_s_per_user * q.batch == pytest.approx(q.tokens_per_s_per_device * 8)
            cycle = 1024 * q.tpot_s + q.batch // 2 * q.ttft_s
            assert q.tokens_per_s_per_user == pytest.approx(1024 / cycle)


def test_the_planner_stops_where_throughput_no_longer_grows(models, catalog):
    """Llama 3 8B on a Ryzen 9 7950X, 128 + 128 tokens: the KV cache holds 3,182 requests, but
    from batch 1,024 each doubling adds less than 2 % tokens/s (91.2 at 512 → 93.9 → 95.3 →
    95.8 at the wall) while a token takes 4.7 s, then 9.1 and 14.0: the plan stops at 1,024
    and says the compute roof limits it (before, it took the wall's 3,182)."""
    from explorer.core.analysis.serving import FLAT

    model, cpu = models["llama-3-8b"], catalog["ryzen-9-7950x"]
    p = plan(model, WorkloadParams(), cpu, 128, 128)
    rate = {q.batch: q.tokens_per_s_per_device for q in p.points}
    assert p.kv_wall_sequences == 3182 and FLAT == 0.02
    assert rate[1024] / rate[512] - 1 >= 0.02  # 512 → 1,024 still grows
    assert rate[2048] / rate[1024] - 1 < 0.02
    assert rate[3182] / rate[1024] < 1.02 ** math.log2(3182 / 1024)
    assert p.chosen.batch == 1024 and p.chosen.tpot_s == pytest.approx(4.72, abs=0.01)
    assert p.chosen.limited_by.startswith("the compute roof: throughput no longer grows with the batch "
                                          "(batch 2,048 gives +1.60%")
    wall = next(q for q in p.points if q.batch == 3182)
    doc = (Path(__file__).resolve().parents[2] / "docs" / "commands.md").read_text(encoding="utf-8")
    doc = " ".join(doc.split())
    assert (f"batch 1,024 at {p.chosen.tpot_s:.1f} s a token, not the wall's 3,182 at {wall.tpot_s:.1f} s"
            in doc)
    # int8 weights: a second sequence adds its arithmetic, not a padded tile's (the CPU pads no
    # rows): batch 2 nearly doubles batch 1's rate, and the plan grows to the KV-cache wall
    small = plan(model, WorkloadParams(weight_dtype="int8"), cpu, 1024, 1024)
    assert 1.8 < small.points[1].tokens_per_s_per_device / small.points[0].tokens_per_s_per_device < 2
    assert small.chosen.batch == small.kv_wall_sequences


def test_an_h100_plan_still_takes_its_wall_or_its_target(models, catalog):
    """On an H100 throughput grows up to the wall: the plans pick as before the compute roof
    (the walls are the full-length ones)."""
    h100 = catalog["h100-sxm"]
    big = plan(models["llama-3-70b"], WorkloadParams(tp=4), h100, 1024, 1024)
    assert big.chosen.batch == 248 and big.chosen.limited_by.startswith("the KV-cache wall")
    tight = plan(models["llama-3-70b"], WorkloadParams(tp=4), h100, 1024, 1024, tpot_target_s=0.040)
    assert tight.chosen.batch == 187 and tight.chosen.limited_by.startswith("the TPOT target: batch 188")


def test_each_point_carries_the_decode_step_s_band(models, catalog):
    """The band of a point's TPOT is the decode step's ``Expected.band`` at that batch; the
    bound alone has none."""
    from dataclasses import replace

    from explorer.core.analysis.analysis import analyze
    from explorer.core.analysis.expected import expected_for

    model, h100, params = models["llama-3-70b"], catalog["h100-sxm"], WorkloadParams(tp=4)
    p = plan(model, params, h100, 1024, 1024)
    for q in p.points:
        e = expected_for(analyze(model, replace(decode_params(params, 1024, 1024), batch=q.batch), h100))
        assert q.tpot_s == e.time_s and q.tpot_band_s == pytest.approx(e.band)
        assert q.tpot_band_s[0] < q.tpot_s < q.tpot_band_s[1]
    bound = plan(model, replace(params, efficiency="bound"), h100, 1024, 1024)
    assert all(q.tpot_band_s is None for q in bound.points)
    assert "a band that held" not in plan_sentences(bound, model.name, h100)[-1]
    low, high = p.chosen.tpot_band_s
    terms = read_terms().of(DeviceKind.GPU)
    assert (f"({low * 1e3:.2f}–{high * 1e3:.2f} ms: a band that held the measured time of {terms.held:.1%} "
            f"of {terms.runs} published GPU runs ({terms.sources} sources), each predicted without its "
            "source, the expected time itself within 0.8–1.25× of the measured one for "
            f"{terms.within:.1%} of them)"
            ) in plan_sentences(p, model.name, h100)[-1]
    # with speculative decoding the band is scaled from the plain step's: not checked as such
    spec = plan(model, params, h100, 1024, 1024, speculation=Speculation(models["llama-3-8b"], 4, 0.7))
    assert spec.band_unchecked == "for speculative decoding"
    assert "not checked for speculative decoding" in plan_sentences(spec, model.name, h100)[-1]
    chunked = plan(model, params, h100, 1024, 1024, prefill_chunk=512)
    assert chunked.band_unchecked == "for decode steps that carry prompt chunks"
