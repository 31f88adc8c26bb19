"""Mistral Small 3.1 / 3.2 (Mistral3ForConditionalGeneration) read as the Mistral decoder in its
text_config: the count of transformers' MistralForCausalLM shapes, with the Pixtral vision
tower and projector named as not costed."""

from explorer.core.analysis.analysis import analyze
from explorer.core.hardware.catalog import load_catalog
from explorer.core.model.hf_config import spec_from_config
from explorer.core.model.workload import WorkloadParams

# mistralai/Mistral-Small-3.1-24B-Instruct-2503's text_config, as transformers' Mistral3Config
# (0db25542, whose docstring checkpoint is that repository) builds it when a file gives none
TEXT = {"attention_dropout": 0.0, "head_dim": 128, "hidden_act": "silu", "hidden_size": 5120,
        "initializer_range": 0.02, "intermediate_size": 32768, "max_position_embeddings": 131072,
        "model_type": "mistral", "num_attention_heads": 32, "num_hidden_layers": 40, "num_key_value_heads": 8,
        "rms_norm_eps": 1e-05, "rope_theta": 1000000000.0, "sliding_window": None, "use_cache": True,
        "vocab_size": 131072}
MISTRAL_SMALL_31 = {"architectures": ["Mistral3ForConditionalGeneration"], "model_type": "mistral3",
                    "image_token_index": 10, "multimodal_projector_bias": False,
                    "projector_hidden_act": "gelu",
                    "spatial_merge_size": 2, "torch_dtype": "bfloat16", "vision_feature_layer": -1,
                    "vision_config": {"model_type": "pixtral", "hidden_size": 1024, "num_hidden_layers": 24},
                    "text_config": TEXT}


def hand_count() -> int:
    """MistralForCausalLM's modules: q, k, v, o (no biases), gate/up/down, two RMS norms a
    layer, the final norm, an embedding and a separate LM head."""
    d, layers, q, kv, f, vocab = 5120, 40, 32 * 128, 8 * 128, 32768, 131072
    layer = d * q + 2 * d * kv + q * d + 3 * d * f + 2 * d
    return 2 * vocab * d + layers * layer + d


def test_the_text_decoder_to_the_parameter():
    spec = spec_from_config(MISTRAL_SMALL_31, "mistral-small-3.1/config.json")
    assert spec.parameter_count() == hand_count() == 23_572_403_200
    # Mistral AI publishes "24B" for Small 3.1 (the text decoder's 23.6 B and the vision tower)
    assert round(spec.parameter_count() / 1e9) == 24
    assert spec.file_dtype == "bf16" and spec.sliding_window == 0


def test_a_file_without_text_config_is_mistral_small_31_s_decoder():
    bare: dict[str, object] = {"architectures": ["Mistral3ForConditionalGeneration"],
                               "model_type": "mistral3"}
    assert spec_from_config(bare, "m/config.json").parameter_count() == hand_count()


def test_the_vision_tower_is_named_as_not_costed():
    spec = spec_from_config(MISTRAL_SMALL_31, "mistral-small-3.1/config.json")
    a = analyze(spec, WorkloadParams(context=1024), load_catalog()["h100-sxm"])
    assert any("Pixtral vision encoder" in n and "not costed" in n for n in a.notes)
