"""Llama 4 from its config.json: Scout (16 experts in every layer) and Maverick (128 experts
in every other layer, dense layers between), each with a shared expert, one routed expert
per token, chunked attention on three layers in four; the counts Meta publishes (17 B
active, Maverick 400 B in all; Scout's 109 B includes a vision encoder not costed here)."""

import pytest

from explorer.core.analysis.analysis import analyze
from explorer.core.files.datafile import DataFileError
from explorer.core.hardware.catalog import load_catalog
from explorer.core.model.hf_config import spec_from_config
from explorer.core.model.workload import WorkloadParams

# meta-llama/Llama-4-Scout-17B-16E-Instruct and Llama-4-Maverick-17B-128E-Instruct config.json
SCOUT_TEXT = {"attention_chunk_size": 8192, "head_dim": 128, "hidden_act": "silu", "hidden_size": 5120,
              "intermediate_size": 8192, "intermediate_size_mlp": 16384, "interleave_moe_layer_step": 1,
              "max_position_embeddings": 10485760, "model_type": "llama4_text", "num_attention_heads": 40,
              "num_experts_per_tok": 1, "num_hidden_layers": 48, "num_key_value_heads": 8,
              "num_local_experts": 16, "use_qk_norm": True, "vocab_size": 202048}
SCOUT = {"architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4",
         "torch_dtype": "bfloat16", "text_config": SCOUT_TEXT,
         "vision_config": {"model_type": "llama4_vision_model", "hidden_size": 1408}}
MAVERICK = {**SCOUT, "text_config": {**SCOUT_TEXT, "num_local_experts": 128, "interleave_moe_layer_step": 2,
                                     "use_qk_norm": False, "max_position_embeddings": 1048576}}


def test_both_activate_17_b_a_token_and_maverick_holds_400_b():
    scout, maverick = (spec_from_config(c, f"{n}/config.json") for n, c in (("s", SCOUT), ("m", MAVERICK)))
    for spec in (scout, maverick):
        assert round(spec.parameter_count(active=True) / 1e9) == 17  # "17B active parameters"
    assert maverick.parameter_count() == pytest.approx(400e9, rel=0.005)
    # Scout's decoder: 48 layers × (attention 62.9 M + 16 experts and a shared one of 125.8 M) and
    # two 1.03 B embedding tables; Meta's 109 B adds the vision encoder
    assert scout.parameter_count() == 107_769_861_120
    assert "vision encoder is not costed" in scout.unmodelled


def test_maverick_interleaves_moe_and_dense_layers_and_three_in_four_layers_are_chunked():
    spec = spec_from_config(MAVERICK, "m/config.json")
    assert [i for i in range(8) if spec.moe_layer(i)] == [1, 3, 5, 7]
    assert spec.mlp_width == 16384 and spec.expert_width == spec.shared_width == 8192
    assert spec.sliding_window == 8192 and [i for i in range(8) if i not in spec.window_layers] == [3, 7]
    a = analyze(spec, WorkloadParams(context=16384, tp=8), load_catalog()["h100-sxm"])
    names = {o.name for o in a.ops}
    assert {"down_proj", "expert_down"} <= names  # dense layers' MLP and the experts'
    assert any("chunked attention" in note for note in a.notes)


def test_moe_layers_listed_out_of_the_regular_step_are_refused_by_name():
    odd = {**MAVERICK, "text_config": {**MAVERICK["text_config"], "moe_layers": [0, 5, 9]}}
    with pytest.raises(DataFileError, match="moe_layers"):
        spec_from_config(odd, "odd/config.json")


def test_a_null_chunk_size_means_no_chunking_and_a_null_window_no_window():
    from tests.core.test_hf_gemma3 import GEMMA3_1B

    unchunked = {**SCOUT, "text_config": {**SCOUT_TEXT, "attention_chunk_size": None}}
    spec = spec_from_config(unchunked, "u/config.json")
    assert spec.sliding_window == 0 and "chunked" not in spec.unmodelled
    assert spec_from_config({**GEMMA3_1B, "sliding_window": None}, "g/config.json").sliding_window == 0


def test_a_moe_step_longer_than_the_model_is_refused():
    long = {**SCOUT, "text_config": {**SCOUT_TEXT, "interleave_moe_layer_step": 64}}
    with pytest.raises(DataFileError, match="interleave_moe_layer_step"):
        spec_from_config(long, "l/config.json")
