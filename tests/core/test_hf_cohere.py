"""Command-R (CohereForCausalLM) read from its config.json: one LayerNorm without a bias before
attention and MLP side by side, tied embeddings, logit_scale (a scalar, no parameter); the
counts of transformers' modeling_cohere.py shapes and of Cohere's model cards."""

import pytest

from explorer.core.files.datafile import DataFileError
from explorer.core.model.hf_config import spec_from_config

# CohereForAI/c4ai-command-r-v01's config.json, the fields other projects copy from it (a
# CommandRConfig test in a Rust engine; keras-hub's COHERE_CONFIG for the kv heads)
COMMAND_R_V01 = {"architectures": ["CohereForCausalLM"], "model_type": "cohere", "hidden_size": 8192,
                 "num_attention_heads": 64, "num_key_value_heads": 64, "num_hidden_layers": 40,
                 "intermediate_size": 22528, "vocab_size": 256000, "max_position_embeddings": 8192,
                 "layer_norm_eps": 1e-5, "rope_theta": 8000000.0, "logit_scale": 0.0625,
                 "tie_word_embeddings": True, "use_qk_norm": False}
# CohereForAI/c4ai-command-r-08-2024: 8 KV heads, a 24,576-wide MLP (keras-hub's COHERE_CONFIG)
COMMAND_R_0824 = {**COMMAND_R_V01, "num_key_value_heads": 8, "intermediate_size": 24576,
                  "rope_theta": 4000000.0, "max_position_embeddings": 131072}


def hand_count(kv_heads: int, width: int) -> int:
    """CohereForCausalLM: q, k, v, o without biases, gate/up/down, one CohereLayerNorm (a weight
    of hidden_size) a layer and one at the end, the embedding shared with the LM head."""
    d, layers, hd, vocab = 8192, 40, 128, 256000
    layer = d * d + 2 * d * kv_heads * hd + d * d + 3 * d * width + d
    return vocab * d + layers * layer + d


# Model cards: "C4AI Command-R is a research release of a 35 billion parameter highly performant
# generative model"; c4ai-command-r-08-2024: "a 32 billion parameter" model
@pytest.mark.parametrize("config, kv, width, published", [(COMMAND_R_V01, 64, 22528, 35),
                                                          (COMMAND_R_0824, 8, 24576, 32)])
def test_model_card_and_hand_counts(config, kv, width, published):
    spec = spec_from_config(config, "command-r/config.json")
    assert spec.parameter_count() == hand_count(kv, width)
    assert round(spec.parameter_count() / 1e9) == published
    assert spec.tied_embeddings and spec.norms_per_layer == 1 and not spec.norm_bias and spec.parallel_block


def test_v01_to_the_parameter():
    assert spec_from_config(COMMAND_R_V01, "c.json").parameter_count() == 34_980_831_232


def test_query_and_key_norms_are_refused_by_name():
    with pytest.raises(DataFileError, match="use_qk_norm"):
        spec_from_config({**COMMAND_R_V01, "use_qk_norm": True}, "plus/config.json")


def test_the_weight_classes_count_norms_without_a_bias():
    spec = spec_from_config(COMMAND_R_V01, "c.json")
    assert spec.layer_parameter_classes()["norm"] == spec.d_model  # one norm, a weight only
    layers = spec.layers * sum(spec.layer_parameter_classes().values())
    assert layers + sum(spec.end_parameter_classes().values()) == spec.parameter_count()
