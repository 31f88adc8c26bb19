"""The energy lower bound and the power model against published measurements of serving's
GPU energy (resources/validation/published-energy.yaml: ML.ENERGY v2 and v3, and
chuyishang/inference-energy; 26 rows, six devices), each row costed as ``serve`` costs the
same workload (one cycle: prefills alone for v2's vLLM 0.5.4, chunked prefill off; riding on
the decode steps for v3's vLLM 0.11.1, whose V1 engine always chunks).

Two checks, because the estimate is a power times a time. The power model alone, at each
row's measured time per token (its J/token over its measured power): within 0.8–1.25 of the
measured J/token for 23 of 26 rows in sample, 20 held out by device, 19 held out by source.
It does not depend on the expected time. The estimate as the app gives it, at the expected
time: 13 of 26 in sample, 13 held out by device, 15 held out by source; its misses follow the
time's (``time_ratio``): ML.ENERGY v2 at 0.30–0.48 the measured time per token (vLLM 0.5.4
through its OpenAI server, whose host work the GPU waited on; the engine's fitted terms come
from offline runs), Llama 3 8B on a B200 at batch 64 and 256 at 0.62–0.73, Llama 3 70B over
four H100s at 1.19–1.51. The expected time is refitted elsewhere, so the estimate's floors sit
below today's figures."""

from dataclasses import replace

import pytest

from explorer.core.analysis.energy import IDLE_SHARE
from explorer.core.analysis.energy_validation import (
    BAND,
    Costed,
    by_device,
    by_source,
    cost,
    fit_idle_share,
    held_out,
    markdown_table,
    read_energy_runs,
    within,
)
from explorer.core.analysis.serving import plan
from explorer.core.model.workload import WorkloadParams

GOAL = 0.8  # the share within BAND held out that issue 53 asks for
POWER_HELD_OUT_AT_LEAST = 0.73  # 20 (by device) and 19 (by source) of 26 today: short of the goal
ESTIMATE_AT_LEAST = 0.5  # in sample and held out, at the expected time (13–15 of 26 today)


@pytest.fixture(scope="module")
def costed(models, catalog):
    return [cost(run, models, catalog) for run in read_energy_runs()]


def test_the_set_has_sources_devices_and_what_each_counted():
    runs = read_energy_runs()
    assert len(runs) >= 5 and len({r.hardware for r in runs}) >= 6
    assert {r.source_group for r in runs} >= {"mlenergy-v2", "mlenergy-v3", "inference-energy"}
    assert all(r.source.startswith("https://") and r.quote and r.derivation and r.counted and r.engine
               for r in runs)


def test_each_row_s_power_and_time_agree_with_its_energy():
    """power_w × the time per token is the J/token; where the quote gives the power (v3), the
    row's is the quote's."""
    for r in read_energy_runs():
        assert r.power_w * r.seconds_per_token == pytest.approx(r.joules_per_token)
        if "avg_power_watts" in r.quote:
            quoted = float(r.quote.split('"avg_power_watts": ')[1].split(",")[0])
            assert r.power_w == pytest.approx(quoted, rel=1e-4)


def test_the_lower_bound_is_below_every_measured_joules_per_token(costed):
    over = [(c.run.id, c.lower_bound, c.run.joules_per_token) for c in costed
            if c.lower_bound > c.run.joules_per_token]
    assert not over
    # docs/commands.md: "below every measured row, by 4.4 times or more"
    assert max(c.lower_bound / c.run.joules_per_token for c in costed) < 1 / 4.4


def test_the_power_model_at_the_measured_time_meets_the_goal_in_sample(costed):
    share = fit_idle_share(costed)
    dev = held_out(costed, by_device, Costed.power_ratio)
    src = held_out(costed, by_source, Costed.power_ratio)
    print("\n" + markdown_table(costed))
    print(f"power model within {BAND[0]:g}–{BAND[1]:g}: "
          f"{within([c.power_ratio(share) for c in costed]):.0%} in sample, "
          f"{within(list(dev.values())):.0%} held out by device, {within(list(src.values())):.0%} by source")
    assert within([c.power_ratio(share) for c in costed]) >= GOAL
    assert within(list(dev.values())) >= POWER_HELD_OUT_AT_LEAST
    assert within(list(src.values())) >= POWER_HELD_OUT_AT_LEAST


def test_the_estimate_at_the_expected_time_lies_near_the_measured_joules_per_token(costed):
    dev, src = held_out(costed, by_device), held_out(costed, by_source)
    print(f"\nestimate within {BAND[0]:g}–{BAND[1]:g}: {within([c.ratio() for c in costed]):.0%} in sample, "
          f"{within(list(dev.values())):.0%} held out by device, {within(list(src.values())):.0%} by source")
    assert within([c.ratio() for c in costed]) >= ESTIMATE_AT_LEAST
    assert within(list(dev.values())) >= ESTIMATE_AT_LEAST
    assert within(list(src.values())) >= ESTIMATE_AT_LEAST


def test_llama_3_70b_over_four_h100s_draws_what_the_power_model_says(costed, models, catalog):
    """The power model is within the band on all four rows at the measured time per token
    (1.01–1.19); at the expected time (1.19–1.51 the measured time per token, the decode step
    0.99–1.28 the median inter-token latency quoted) the estimate is 1.10–1.30, three of four
    within the band. With each prompt prefilled on its own, as v2's engine did, the time was
    1.30–1.58 and the estimate 1.26–1.29: vLLM 0.11.1's prompts ride on the decode steps."""
    rows = [c for c in costed if c.run.model == "llama-3-70b" and c.run.hardware == "h100-sxm"]
    assert len(rows) == 4
    assert all(BAND[0] <= c.power_ratio() <= BAND[1] for c in rows)
    assert sum(BAND[0] <= c.ratio() <= BAND[1] for c in rows) >= 3
    alone = [cost(replace(c.run, prefill_chunk=None), models, catalog) for c in rows]
    assert all(c.time_ratio < a.time_ratio for c, a in zip(rows, alone, strict=True))


def test_a_row_costs_what_serve_gives_for_the_same_workload(costed, models, catalog):
    """Energy and serving share one model: a row's expected seconds per output token are one
    over ``serve``'s tokens/s (every device's) at the row's batch, prompt, output and prefill
    chunk; without a chunk, the decode step over the batch plus the prompt's prefill alone over
    the output."""
    for c in costed:
        if c.run.id not in {"mlenergy-v3-llama-3-70b-h100-sxmx4-bs64",
                            "mlenergy-v2-llama-3-8b-h100-sxmx1-bs64",
                            "inference-energy-llama-3-8b-a100-80gbx1-c8"}:
            continue
        params = WorkloadParams(**c.run.workload)
        served = plan(models[c.run.model], params, catalog[c.run.hardware], c.run.prompt, round(c.run.output),
                      prefill_chunk=c.run.prefill_chunk, batches=(params.batch,))
        point = next(p for p in served.points if p.batch == params.batch)
        assert c.decode_s + c.prefill_s == pytest.approx(1 / (point.tokens_per_s_per_device * served.devices),
                                                         rel=1e-9)
        if c.run.prefill_chunk is None:
            assert c.prefill_s == pytest.approx(point.ttft_s / round(c.run.output), rel=1e-9)


def test_each_row_s_prefill_schedule_is_its_engine_s():
    """v3 (vLLM 0.11.1, the V1 engine) chunks its prefills; v2 ran with chunked prefill off;
    each row's derivation quotes which."""
    for r in read_energy_runs():
        if r.source_group == "mlenergy-v3":
            assert r.prefill_chunk == 8192 and "chunked prefill is always enabled by default" in r.derivation
        elif r.source_group == "mlenergy-v2":
            assert r.prefill_chunk is None and "'--enable-chunked-prefill', 'False'" in r.derivation
            assert r.prompt == 150 and "Skip saturated runs" in r.counted


def test_the_idle_share_is_the_fit_to_these_rows_and_stable_without_any_device(costed):
    assert fit_idle_share(costed) == pytest.approx(IDLE_SHARE, abs=0.006)
    devices = {c.run.hardware for c in costed}
    shares = [fit_idle_share([c for c in costed if c.run.hardware != d]) for d in devices]
    assert min(shares) >= 0.2 and max(shares) <= 0.33  # 0.225–0.305 today


def test_tdp_times_the_expected_time_is_no_bound_of_the_estimate(costed):
    """At an idle share of 1 the estimate's power would be the whole TDP: the estimate is below it."""
    assert all(c.estimate() < c.estimate(1.0) for c in costed)
