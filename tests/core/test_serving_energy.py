"""``serve``'s J/token estimate (``serving_energy``): the power model's, the same as the check
against published measurements costs (``energy_validation.cost``), worked out again by hand
from a point's times and its steps' roofs, and between the idle share of the figure at TDP
and that figure at every point."""

from dataclasses import replace

import pytest

from explorer.core.analysis.analysis import analyze
from explorer.core.analysis.energy import IDLE_SHARE
from explorer.core.analysis.energy_validation import cost, estimate_source, read_energy_runs
from explorer.core.analysis.serving import plan
from explorer.core.analysis.serving_request import decode_params
from explorer.core.analysis.speculation import Speculation
from explorer.core.model.applicability import Phase
from explorer.core.model.workload import WorkloadParams

ROWS = ("mlenergy-v2-llama-3-8b-h100-sxmx1-bs64",  # one H100, batch 64, vLLM 0.5.4: prefills alone
        "mlenergy-v3-llama-3-70b-h100-sxmx4-bs64",  # TP 4, vLLM 0.11.1: 8,192-token chunks
        "inference-energy-llama-3-8b-a100-80gbx1-c8")


def _served(run, models, catalog, **more):
    params = WorkloadParams(**run.workload)
    served = plan(models[run.model], params, catalog[run.hardware], run.prompt, round(run.output),
                  prefill_chunk=run.prefill_chunk, batches=(params.batch,), **more)
    return next(p for p in served.points if p.batch == params.batch), served


@pytest.mark.parametrize("run_id", ROWS)
def test_serve_s_estimate_is_the_validation_s_for_the_same_workload(models, catalog, run_id):
    """One model: at a published row's batch, prompt, output (whole tokens) and chunk, serve's
    estimate is what the check against the measurement costs."""
    run = next(r for r in read_energy_runs() if r.id == run_id)
    whole = replace(run, output=float(round(run.output)))
    point, _ = _served(run, models, catalog)
    assert point.joules_per_token_estimate == pytest.approx(cost(whole, models, catalog).estimate(), rel=1e-9)


def test_the_estimate_by_hand_with_prefills_alone(models, catalog):
    """Llama 3 8B on one H100 (700 W), batch 64, prompt 150, output 256, prefills alone: per
    token, the decode step's TPOT over the batch at its occupancy's power and the prompt's TTFT
    over the output at its own, P = 700 × (0.25 + 0.75 × min(1, busy ÷ time))."""
    model, h100 = models["llama-3-8b"], catalog["h100-sxm"]
    served = plan(model, WorkloadParams(), h100, 150, 256, batches=(64,))
    point = next(p for p in served.points if p.batch == 64)
    decode = analyze(model, replace(decode_params(WorkloadParams(), 150, 256), batch=64), h100)
    prefill = analyze(model, replace(WorkloadParams(), phase=Phase.PREFILL, seq=150, batch=1), h100)

    def power(step, seconds):
        busy = step.totals.compute_time_s + step.totals.memory_time_s
        return 700 * (0.25 + 0.75 * min(1.0, busy / seconds))

    by_hand = (power(decode, point.tpot_s) * point.tpot_s / 64
               + power(prefill, point.ttft_s) * point.ttft_s / 256)
    assert point.joules_per_token_estimate == pytest.approx(by_hand, rel=1e-9)
    cycle = 256 * point.tpot_s + 64 * point.ttft_s
    assert point.joules_per_token == pytest.approx(700 * cycle / (64 * 256))


@pytest.mark.parametrize("more", [{}, {"prefill_chunk": 512}, {"arrival_rate": 2.0},
                                  {"kv_offload_bytes": 2**36}, {"prefix_hit": 0.5}])
def test_the_estimate_lies_between_the_idle_share_and_the_figure_at_tdp(models, catalog, more):
    """Each share's power is at most the TDP and at least its idle share, over the same
    seconds as the figure at TDP counts (under a load too: the devices idle for the rest)."""
    model, h100 = models["llama-3-70b"], catalog["h100-sxm"]
    served = plan(model, WorkloadParams(tp=4), h100, 1024, 512, **more)
    assert served.points
    for p in served.points:
        assert p.joules_per_token_estimate is not None and p.joules_per_token is not None
        assert IDLE_SHARE * p.joules_per_token <= p.joules_per_token_estimate * (1 + 1e-12)
        assert p.joules_per_token_estimate <= p.joules_per_token * (1 + 1e-12)
    if "arrival_rate" in more or "kv_offload_bytes" in more:
        return  # a load's slack, and the host link's transfers, leave the large batches' roofs idle too
    share = [(p.joules_per_token_estimate or 0.0) / (p.joules_per_token or 1.0) for p in served.points]
    assert share[0] < share[-1]  # the small batch idles more of its TDP away


def test_no_estimate_without_a_tdp_or_with_speculation(models, catalog):
    model, h100 = models["llama-3-8b"], catalog["h100-sxm"]
    no_tdp = replace(h100, specs=replace(h100.specs, tdp_w=None))
    points = plan(model, WorkloadParams(), no_tdp, 512, 256).points
    assert points and all(p.joules_per_token is None and p.joules_per_token_estimate is None for p in points)
    draft = Speculation(models["llama-3-8b"], 4, 0.7)
    points = plan(models["llama-3-70b"], WorkloadParams(tp=4), h100, 512, 256, speculation=draft).points
    assert points and all(p.joules_per_token and p.joules_per_token_estimate is None for p in points)


def test_the_estimate_s_source_names_the_model_and_its_checks():
    words = estimate_source()
    assert f"TDP × ({IDLE_SHARE:g} + {1 - IDLE_SHARE:g} × occupancy)" in words
    assert f"validated against {len(read_energy_runs())} published measurements" in words


def test_two_replicas_spend_a_token_what_one_does_at_half_the_batch(models, catalog):
    """Data parallel: two replicas of batch 32 each are two devices making twice the tokens of
    one device at batch 32 in the same cycle, so a token costs the same."""
    model, h100 = models["llama-3-8b"], catalog["h100-sxm"]
    one = next(p for p in plan(model, WorkloadParams(), h100, 512, 256, batches=(32,)).points
               if p.batch == 32)
    two = next(p for p in plan(model, WorkloadParams(dp=2), h100, 512, 256, batches=(64,)).points
               if p.batch == 64)
    assert one.joules_per_token_estimate is not None
    assert two.joules_per_token_estimate == pytest.approx(one.joules_per_token_estimate, rel=1e-9)
    assert two.joules_per_token == pytest.approx(one.joules_per_token, rel=1e-9)


def test_a_pipeline_stage_s_device_is_busy_for_its_stage_only(models, catalog):
    """In inference the step runs its PP stages in turn, one device each: each of PP 2's
    devices is at its roofs for half the roofs' time of the whole step, so the same step's
    occupancy halves (analyze's estimate and serve's alike)."""
    from explorer.core.analysis.energy_report import device_busy_s
    from explorer.core.analysis.serving_energy import token_energy

    m, h100 = models["llama-3-8b"], catalog["h100-sxm"]
    one, two = (analyze(m, WorkloadParams(phase="decode", pp=pp), h100) for pp in (1, 2))
    t = one.totals
    assert two.totals.memory_time_s == pytest.approx(t.memory_time_s)  # the whole pipeline's
    assert device_busy_s(one) == pytest.approx(t.compute_time_s + t.memory_time_s)
    assert device_busy_s(two) == pytest.approx(device_busy_s(one) / 2)
    step = 0.005
    energies = [token_energy(a, step, a, 1, 128, step * 128, chunked=False) for a in (one, two)]
    assert energies[0] is not None and energies[1] is not None
    assert energies[1].decode_busy_s == pytest.approx(energies[0].decode_busy_s / 2)
    train = analyze(m, WorkloadParams(phase="train", pp=2, batch=16, seq=2048), h100)
    assert device_busy_s(train) == pytest.approx(train.totals.compute_time_s + train.totals.memory_time_s)


def test_under_a_load_the_estimate_is_the_batch_in_service_s_whatever_the_limit(models, catalog):
    """Continuous batching steps with the requests in service: under 2 requests/s every batch
    limit that keeps up spends a token what the smallest batch carrying the load does, idled
    for the rest (``idling``), not less for a larger limit."""
    from explorer.core.analysis.serving_energy import idling

    m, h100 = models["llama-3-8b"], catalog["h100-sxm"]
    loaded = plan(m, WorkloadParams(), h100, 1024, 1024, arrival_rate=2.0)
    free = plan(m, WorkloadParams(), h100, 1024, 1024, batches=tuple(p.batch for p in loaded.points))
    tokens = 2.0 * 1024  # a device's tokens/s under the load (one device)
    carrying = min((p for p in free.points if p.tokens_per_s_per_device >= tokens), key=lambda p: p.batch)
    at_tdp = loaded.points[0].joules_per_token
    expected = idling(carrying.joules_per_token_estimate, carrying.joules_per_token, at_tdp)
    kept_up = [p for p in loaded.points if p.batch >= carrying.batch]
    assert len(kept_up) > 3
    assert all(p.joules_per_token_estimate == pytest.approx(expected) for p in kept_up)
