"""GLM-4 from its config.json: GLM-4-9B (GlmForCausalLM) and GLM-4-9B-0414 (Glm4ForCausalLM,
a norm after attention and after the MLP too) give the Hub's published size, biases on Q, K
and V by default (Glm4Config: attention_bias true) and two KV heads of 128."""

import pytest

from explorer.core.model.hf_config import spec_from_config

# zai-org/glm-4-9b-chat-hf and zai-org/GLM-4-9B-0414 config.json (the fields that matter)
GLM4_9B = {"architectures": ["GlmForCausalLM"], "model_type": "glm", "attention_bias": True, "head_dim": 128,
           "hidden_act": "silu", "hidden_size": 4096, "intermediate_size": 13696,
           "max_position_embeddings": 131072, "num_attention_heads": 32, "num_hidden_layers": 40,
           "num_key_value_heads": 2, "partial_rotary_factor": 0.5, "rms_norm_eps": 1.5625e-07,
           "tie_word_embeddings": False, "torch_dtype": "bfloat16", "vocab_size": 151552}
GLM4_9B_0414 = {**GLM4_9B, "architectures": ["Glm4ForCausalLM"], "model_type": "glm4",
                "max_position_embeddings": 32768}


@pytest.mark.parametrize(("config", "norms"), [(GLM4_9B, 2), (GLM4_9B_0414, 4)])
def test_glm4_9b_gives_the_hub_s_9_4_b_with_its_biases_and_norms(config, norms):
    spec = spec_from_config(config, "glm/config.json")
    assert round(spec.parameter_count() / 1e8) == 94  # "9.4B params" on the Hub's model pages
    assert spec.qkv_bias and spec.norms_per_layer == norms and (spec.kv_heads, spec.head_dim) == (2, 128)
    # the 0414 file's two norms more per layer: 2 × 4,096 values × 40 layers
    if norms == 4:
        assert spec.parameter_count() - spec_from_config(GLM4_9B, "g").parameter_count() == 2 * 4096 * 40


def test_a_glm_config_without_its_optional_fields_takes_glm4config_s_defaults():
    spec = spec_from_config({"architectures": ["Glm4ForCausalLM"]}, "bare/config.json")
    shape = (spec.d_model, spec.layers, spec.kv_heads, spec.vocab, spec.qkv_bias)
    assert shape == (4096, 40, 2, 151552, True)
    assert not spec.tied_embeddings
