"""attention_bias as transformers builds it: Llama's attention (and Granite's, Qwen3's and
Phi-3.5-MoE's, built on it) puts a bias on Q, K, V and the output projection; GLM's on Q, K
and V only. The counts are ``num_parameters()`` of each family's model built from these
small configs by transformers 5.24.0 (random weights), so a missing or extra bias of the
output projection (d_model values a layer) shows."""

import pytest

from explorer.core.analysis.analysis import analyze
from explorer.core.model.hf_config import spec_from_config
from explorer.core.model.workload import WorkloadParams

SMALL = {"hidden_size": 128, "intermediate_size": 256, "num_hidden_layers": 2, "num_attention_heads": 8,
         "num_key_value_heads": 2, "vocab_size": 152000, "max_position_embeddings": 4096,
         "tie_word_embeddings": False, "hidden_act": "silu", "attention_bias": True}
TRANSFORMERS_COUNTS = {
    "LlamaForCausalLM": ({"model_type": "llama"}, 39_191_808),
    "GraniteForCausalLM": ({"model_type": "granite"}, 39_191_808),
    "Qwen3ForCausalLM": ({"model_type": "qwen3", "head_dim": 16}, 39_191_872),
    "GlmForCausalLM": ({"model_type": "glm", "head_dim": 16}, 39_191_552),
    "PhimoeForCausalLM": ({"model_type": "phimoe", "num_local_experts": 4, "num_experts_per_tok": 2},
                          39_783_296),
}


@pytest.mark.parametrize("family", TRANSFORMERS_COUNTS)
def test_attention_bias_gives_transformers_own_count(family):
    extra, count = TRANSFORMERS_COUNTS[family]
    spec = spec_from_config({**SMALL, **extra, "architectures": [family]}, f"{family}/config.json")
    assert spec.parameter_count() == count
    assert spec.o_bias == (family != "GlmForCausalLM")


def test_the_output_projection_s_bias_is_in_its_flops_and_bytes(catalog):
    extra, _ = TRANSFORMERS_COUNTS["LlamaForCausalLM"]
    with_bias = spec_from_config({**SMALL, **extra, "architectures": ["LlamaForCausalLM"]}, "a/config.json")
    plain = {**SMALL, **extra, "attention_bias": False, "architectures": ["LlamaForCausalLM"]}
    without = spec_from_config(plain, "b/config.json")
    params = WorkloadParams(batch=4, dtype="bf16")
    o_proj = [next(o for o in analyze(s, params, catalog["h100-sxm"]).ops if o.role.value == "o_proj")
              for s in (with_bias, without)]
    assert o_proj[0].flops - o_proj[1].flops == 4 * 128  # one add a token and output
    assert o_proj[0].weight_bytes - o_proj[1].weight_bytes == 128 * 2  # 128 bf16 values
