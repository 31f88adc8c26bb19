"""Sentences that state a weight figure of a quantized checkpoint recompute it at the bytes its
file stores (``quantization.bytes_of_class``), the figure the analysis draws: DeepSeek-R1's fp8
blocks, GPT-OSS's mxfp4 experts (on Mixtral's shape, as in test_hf_quantization), and a tied
table that an LM head quantization leaves at the embedding's precision."""

import pytest

from explorer.core.hardware.catalog import load_catalog
from explorer.core.model.hf_config import spec_from_config, stored_precision
from explorer.core.model.workload import WorkloadParams
from explorer.core.words import parallel_claims
from explorer.core.words.alternatives import lower_precision
from explorer.core.words.claims import State
from explorer.core.words.placeholder_context import Context
from explorer.core.words.placeholders import fill_with_claims
from explorer.core.words.step_claims import weights_read
from tests.core.test_hf_config import GRANITE_33_8B, MIXTRAL_8X7B
from tests.core.test_hf_quantization import GPT_OSS_MXFP4, _r1

BLOCK = 1 + 4 / (128 * 128)  # bytes a weight in DeepSeek's fp8 blocks, a float32 scale per 128 × 128


def _state(spec, params, device="h200-sxm"):
    return State(spec, stored_precision(params, spec), load_catalog()[device])


def _mixtral_mxfp4():
    return spec_from_config({**MIXTRAL_8X7B, "torch_dtype": "bfloat16", "quantization_config": GPT_OSS_MXFP4},
                            "gpt-oss-like/config.json")


def _weights_read_claim(state):
    text, claims = fill_with_claims("{step/weights-read}", Context(load_catalog(), None, state))
    [claim] = claims
    return text, claim


def test_weights_read_of_mxfp4_experts_is_the_analysis_figure_by_hand():
    """One decode token of Mixtral's shape with GPT-OSS's mxfp4 block: per layer the attention
    (4096 × 10,240), the router (4096 × 8) and two norms at bf16, the 2 experts the token
    takes at 4.25 bits a weight; one embedding row, the final norm and the LM head at bf16."""
    state = _state(_mixtral_mxfp4(), WorkloadParams(batch=1, context=1))
    d, width, layers = 4096, 14336, 32
    bf16 = layers * (d * (d + 2 * 1024 + d) + d * 8 + 2 * d) + d + d + 32000 * d
    expected = bf16 * 2 + layers * 2 * 3 * d * width * 4.25 / 8
    text, claim = _weights_read_claim(state)
    assert claim.value == pytest.approx(expected, rel=1e-12)  # the analysis's ops
    assert weights_read(state) == pytest.approx(expected, rel=1e-12)  # the sentence's own route
    assert claim.check() is None and text == "8.32 GiB"
    everything_bf16 = weights_read(State(state.model, WorkloadParams(batch=1, context=1, weight_dtype="bf16"),
                                         state.hardware))
    assert everything_bf16 == pytest.approx(bf16 * 2 + layers * 2 * 3 * d * width * 2, rel=1e-12)


@pytest.mark.parametrize("batch", [1, 64])
def test_weights_read_of_deepseek_r1_fp8_holds(batch):
    """DeepSeek-R1's fp8 blocks: the sentence's weights read equal the analysis's, decode at 1
    and 64 sequences (the routed experts a step touches differ); the norms inside MLA stay bf16
    both ways."""
    state = _state(_r1(), WorkloadParams(batch=batch, context=4096))
    analysed = float(sum(o.weight_bytes * o.count for o in state.analysis().ops))
    _, claim = _weights_read_claim(state)
    assert claim.value == analysed and claim.check() is None
    assert weights_read(state) == pytest.approx(analysed, rel=1e-12)
    # about a byte a weight: at bf16 the same step reads close to twice as much
    bf16 = State(state.model, WorkloadParams(batch=batch, context=4096, weight_dtype="bf16"), state.hardware)
    assert 1.9 < weights_read(bf16) / analysed < 2


def test_weights_per_device_of_deepseek_r1_on_8_h200s_is_recomputed_at_its_stored_bytes():
    """The "about" figure (every weight split evenly over 8) at the fp8 blocks: 79.3 GiB a
    device as drawn, the even split 1.2 % under it (within the claim's 3 %); at the bf16 count
    it was twice."""
    state = _state(_r1(), WorkloadParams(tp=8))
    text, claim = parallel_claims.step_field(state, "weights-per-device")
    assert claim is not None and text == "79.3 GiB"
    assert claim.value == state.analysis().totals.weight_bytes
    assert claim.check() is None
    # the routers, norms and latent projections each device holds whole: 1.2 % more than an even split
    assert claim.recompute() / claim.value == pytest.approx(0.988, abs=0.001)
    assert state.model.parameter_count() * 2 / 8 / claim.recompute() == pytest.approx(1.994, abs=0.001)


def test_a_tied_table_read_as_the_lm_head_stays_at_the_embedding_s_precision():
    """Granite 3.3 8B ties its LM head to the embedding table. A compressed-tensors int4 block
    with nothing ignored converts the LM head's class, but a tied model stores the table once,
    as the embedding (bf16): the head op, the memory and the sentence all read it at 2 bytes."""
    block = {"quant_method": "compressed-tensors", "format": "pack-quantized", "ignore": [],
             "config_groups": {"group_0": {"targets": ["Linear"],
                                           "weights": {"num_bits": 4, "type": "int", "symmetric": True,
                                                       "strategy": "group", "group_size": 128}}}}
    spec = spec_from_config({**GRANITE_33_8B, "quantization_config": block}, "granite-w4/config.json")
    state = _state(spec, WorkloadParams(batch=1, context=1), "h100-sxm")
    ops = {o.name: o for o in state.analysis().ops}
    assert ops["lm_head"].weight_bytes == 49159 * 4096 * 2
    _, claim = _weights_read_claim(state)
    assert claim.check() is None and weights_read(state) == pytest.approx(claim.value, rel=1e-12)


def test_lower_precision_says_a_quantized_checkpoint_s_weights_stay_as_stored():
    """bf16 → fp8 halves the activations and the cache; the weights of DeepSeek-R1 stay the
    file's fp8 blocks (the analysis leaves them so), which the sentence says."""
    state = _state(_r1(), WorkloadParams(tp=8))
    explanation = lower_precision(state.analysis())
    assert explanation is not None
    assert explanation.text.startswith("In fp8 the activations and the KV cache take (the weights stay "
                                       "as the checkpoint stores them) half the bytes.")
    assert state.at(dtype="fp8").analysis().totals.weight_bytes == state.analysis().totals.weight_bytes


@pytest.mark.parametrize("quantized", ["r1-fp8", "mxfp4-experts"])
@pytest.mark.parametrize("batch", [1, 256])
def test_every_explain_sentence_of_a_quantized_checkpoint_holds(quantized, batch):
    """Explain on an H200 for a quantized checkpoint at its stored bytes: every claim
    recomputes, every number it states is in the text."""
    from explorer.core.words.explain import explain_state
    from explorer.core.words.sentences import Explanation

    spec = _r1() if quantized == "r1-fp8" else _mixtral_mxfp4()
    params = stored_precision(WorkloadParams(batch=batch, context=2048, tp=8 if quantized == "r1-fp8" else 1),
                              spec)
    catalog = load_catalog()
    for e in explain_state(spec, params, [catalog["h200-sxm"]], "expert_down"):
        assert isinstance(e, Explanation)
        assert e.problems() == [], (e.title, e.text)
