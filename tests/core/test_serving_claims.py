"""The serving fields of a scene's decode step: per user, per device, the price of a
million tokens and the TDP bound on joules per token, each against the step's time."""

import pytest

from explorer.core.analysis.analysis import analyze
from explorer.core.analysis.expected import expected_for
from explorer.core.model.workload import WorkloadParams
from explorer.core.words import serving_claims
from explorer.core.words.claims import State


@pytest.fixture
def state(catalog, models):
    return State(models["llama-3-70b"], WorkloadParams(phase="decode", batch=32, context=2048, tp=4),
                 catalog["h100-sxm"])


def test_the_fields_follow_from_the_expected_step_time(state):
    step = expected_for(analyze(state.model, state.params, state.hardware)).time_s
    fields = {f: serving_claims.step_field(state, f) for f in ("per-user", "per-device", "cost:2.5",
                                                                "joules-per-token")}
    assert fields["per-user"][1].value == pytest.approx(1 / step)
    assert fields["per-device"][1].value == pytest.approx(32 / step / 4)  # 32 tokens a step over 4 devices
    assert fields["cost:2.5"][1].value == pytest.approx(2.5 / (32 / step / 4 * 3600) * 1e6)
    assert fields["joules-per-token"][1].value == pytest.approx(700 / (32 / step / 4))  # H100 SXM: 700 W
    assert fields["per-user"][0] == f"{1 / step:,.0f} tokens/s"
    assert all(claim.check() is None for _, claim in fields.values())


def test_a_stale_number_fails_its_check(state):
    from dataclasses import replace

    _, claim = serving_claims.step_field(state, "cost:2.5")
    assert replace(claim, value=claim.value * 1.1).check() is not None


def test_only_a_decode_step_is_served(state):
    with pytest.raises(KeyError, match="decode step"):
        serving_claims.step_field(state.at(phase="prefill", seq=512), "per-user")


def test_explain_says_what_a_decode_step_means_for_serving(catalog, models):
    """Llama 3 70B at TP 4, batch 32: the rates at the expected time, the KV wall, and the
    same at batch 64; no paragraph for a step that does not fit."""
    from explorer.core.words.explain import explain_state

    params = WorkloadParams(phase="decode", batch=32, context=2048, tp=4)
    [serving] = [e for e in explain_state(models["llama-3-70b"], params, [catalog["h100-sxm"]])
                 if e.title == "Serving"]
    step = expected_for(analyze(models["llama-3-70b"], params, catalog["h100-sxm"])).time_s
    assert serving.numbers["tokens_per_s_per_user"] == pytest.approx(1 / step)
    assert serving.numbers["tokens_per_s_per_device"] == pytest.approx(32 / step / 4)
    assert serving.numbers["max_batch"] == 248 and "holds at most 248 such sequences" in serving.text
    assert "At batch 64:" in serving.text and "trades each user's speed" in serving.text
    assert all(claim.check() is None for claim in serving.claims)
    unfit = explain_state(models["llama-3-70b"], WorkloadParams(), [catalog["h100-sxm"]])
    assert not [e for e in unfit if e.title == "Serving"]
