"""Scene fields of a real run beside the step (``{step/measured…}``), checked against the
profile's own kernels added up here by their names, and against the expected time."""

from pathlib import Path

import pytest

from explorer.core.analysis.expected import expected_for
from explorer.core.model.workload import WorkloadParams
from explorer.core.words.claims import State
from explorer.core.words.placeholder_context import Context
from explorer.core.words.placeholders import fill_with_claims
from explorer.core.words.profile_claims import step_field
from explorer.profiles.reading import read_profile

TRACE = Path(__file__).parents[1] / "data" / "tracelens" / "qwen1.5-0.5b-chat-h100.pt.trace.json.gz"
PARAMS = WorkloadParams(phase="prefill", batch=16, seq=559, causal=True, attention="fused")


@pytest.fixture(scope="module")
def state(models, catalog):
    return State(models["qwen1.5-0.5b"], PARAMS, catalog["h100-sxm"], read_profile(TRACE))


def products(state):  # cuBLAS's GEMMs and one CUTLASS GEMM (FlashAttention's names hold "cutlass" too)
    names = ("sm90_xmma_gemm", "void cutlass::Kernel2")
    return [k for k in state.profile.kernels if k.name.startswith(names)]


def test_the_whole_run_against_the_expected_time_and_the_bound(state):
    e = expected_for(state.analysis())
    assert step_field(state, "measured")[0] == "31.8 ms"
    assert step_field(state, "measured-kernels")[0] == "1,029"
    text, claim = step_field(state, "measured-ratio")
    assert claim.value == pytest.approx(state.profile.time_s / e.time_s) and text == "1.74×"
    _, claim = step_field(state, "measured-bound-ratio")
    assert claim.value == pytest.approx(state.profile.time_s / state.analysis().totals.time_s)


def test_a_class_of_kernels_against_its_expected_time_and_the_roof(state, catalog):
    e = expected_for(state.analysis())
    gemms = products(state)
    seconds = sum(k.time_s for k in gemms)
    _, claim = step_field(state, "measured-ratio:products")
    assert claim.value == pytest.approx(seconds / e.parts["matrix products"])
    rate = sum(k.total_flops for k in gemms) / seconds
    text, claim = step_field(state, "measured-rate:products")
    assert claim.value == pytest.approx(rate) and text == "623 TFLOP/s"
    _, claim = step_field(state, "measured-roof:products")
    assert claim.value == pytest.approx(rate / catalog["h100-sxm"].peak("bf16", "matrix").flops_per_s)
    _, claim = step_field(state, "measured-share:products")
    assert claim.value == pytest.approx(seconds / state.profile.time_s)
    assert step_field(state, "measured-kernels:products")[1].value == sum(k.launches for k in gemms)


def test_filled_in_captions_bring_claims_that_hold(state, catalog, models):
    text, claims = fill_with_claims("{step/measured} is {step/measured-ratio:memory} of it",
                                    Context(catalog, models, state))
    assert text.startswith("31.8 ms is ") and len(claims) == 2
    assert all(c.check() is None for c in claims)


@pytest.mark.parametrize("field, message", [
    ("measured-rate:memory", "counts no FLOPs"),  # elementwise kernels: none from shapes
    ("measured-ratio:kernels", "unknown class"),
    ("measured-bound-ratio:products", "of the whole step"),
    ("measured-speed", "unknown field"),
])
def test_a_field_that_cannot_be_filled_says_why(state, field, message):
    with pytest.raises(KeyError, match=message):
        step_field(state, field)


def test_a_step_without_a_profile_says_so(state):
    from dataclasses import replace

    with pytest.raises(KeyError, match="shows no profile"):
        step_field(replace(state, profile=None), "measured")


def test_a_profile_of_several_steps_gives_one_step_s_figures(state):
    from dataclasses import replace

    two = replace(state, profile=replace(state.profile, steps=2))
    assert step_field(two, "measured")[1].value == pytest.approx(state.profile.time_s / 2)
    assert step_field(two, "measured-ratio:products")[1].value == pytest.approx(
        step_field(state, "measured-ratio:products")[1].value / 2)
    assert step_field(two, "measured-kernels")[0] == "514"  # 1,029 launches over two steps, rounded
    # shares and rates are the same whatever the steps
    for field in ("measured-share:products", "measured-rate:attention"):
        assert step_field(two, field)[1].value == pytest.approx(step_field(state, field)[1].value)


def test_a_claim_is_checked_by_a_second_route(state):
    from dataclasses import replace

    for field in ("measured", "measured-ratio", "measured-ratio:memory", "measured-roof:products"):
        _, claim = step_field(state, field)
        assert claim.check() is None
        assert replace(claim, value=claim.value * 1.01).check() is not None  # a wrong number is caught


def test_a_profile_whose_kernels_took_no_time_is_refused_by_name(state):
    from dataclasses import replace

    idle = replace(state, profile=replace(state.profile, kernels=tuple(
        replace(k, time_s=0.0) for k in state.profile.kernels)))
    with pytest.raises(KeyError, match="took no time"):
        step_field(idle, "measured-share:products")
