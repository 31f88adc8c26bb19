"""The step energy fields at the 45 nm table's energies, by hand: bytes at a DRAM read's
1.3 nJ per 64 bits, FLOPs at half of a multiply and an add; and scene 13's directions."""

import pytest

from explorer.core.analysis.analysis import analyze
from explorer.core.model.workload import WorkloadParams
from explorer.core.words.claims import State
from explorer.core.words.energy_claims import step_field


@pytest.fixture
def llama(models, catalog):
    return models["llama-3-8b"], catalog["h100-sxm"]


def value(state: State, field: str) -> float:
    return step_field(state, field)[1].value


def test_the_energy_of_a_decode_step_by_hand(llama):
    model, h100 = llama
    state = State(model, WorkloadParams(context=1024), h100)
    t = analyze(model, state.params, h100).totals
    assert value(state, "energy-memory") == pytest.approx(t.bytes * 1.3e-9 / 8)
    assert value(state, "energy-arithmetic") == pytest.approx(t.flops * (1.1e-12 + 0.4e-12) / 2)  # fp16's
    assert value(state, "energy-balance") == pytest.approx((1.3e-9 / 8) / 0.75e-12)  # 216.7 FLOP/byte
    assert value(state, "energy-ratio") > 100  # a decode token: the bytes cost hundreds of times more


def test_a_token_s_energy_counts_every_device(llama):
    model, h100 = llama
    one = value(State(model, WorkloadParams(), h100), "energy-per-token")
    two = value(State(model, WorkloadParams(tp=2), h100), "energy-per-token")
    assert two == pytest.approx(one, rel=0.05)  # the same work split two ways (plus its all-reduces)


def test_an_fp8_step_has_memory_energy_but_no_arithmetic_energy(llama):
    model, h100 = llama
    state = State(model, WorkloadParams(dtype="fp8"), h100)
    assert value(state, "energy-memory") > 0
    with pytest.raises(KeyError, match="no fp8 arithmetic"):
        value(state, "energy-arithmetic")


def test_scene_13_says_the_directions_its_numbers_show(llama):
    """Step 1: the bytes cost more; step 3 (a 2,048-token prompt): the arithmetic does, past
    the energy balance."""
    model, h100 = llama
    decode = State(model, WorkloadParams(context=1024), h100)
    prompt = State(model, WorkloadParams(phase="prefill", seq=2048), h100)
    assert value(decode, "energy-ratio") > 1 > value(prompt, "energy-ratio")
    intensity = analyze(model, prompt.params, h100).totals.intensity
    assert intensity > value(prompt, "energy-balance")
