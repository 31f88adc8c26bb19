"""GPT-OSS read from its config.json: 120b and 20b give the model card's totals and active
counts, and the hand count of transformers' modeling_gpt_oss.py shapes (biases on Q, K, V, O,
one sink logit per head, a biased router, biased experts); even layers attend within 128
tokens, odd ones over everything."""

import pytest

from explorer.core.analysis.analysis import analyze
from explorer.core.hardware.catalog import load_catalog
from explorer.core.model.hf_config import spec_from_config
from explorer.core.model.workload import WorkloadParams

# https://huggingface.co/openai/gpt-oss-120b/raw/main/config.json, as copied (read 2026-10-02)
# into a public test of another project (REAL in a gpt-oss parity test, repository "kiln")
GPT_OSS_120B = {
    "architectures": ["GptOssForCausalLM"], "attention_bias": True, "attention_dropout": 0.0,
    "eos_token_id": 200002,
    "experts_per_token": 4, "head_dim": 64, "hidden_act": "silu", "hidden_size": 2880,
    "initial_context_length": 4096, "initializer_range": 0.02, "intermediate_size": 2880,
    "layer_types": ["sliding_attention", "full_attention"] * 18, "max_position_embeddings": 131072,
    "model_type": "gpt_oss", "num_attention_heads": 64, "num_experts_per_tok": 4, "num_hidden_layers": 36,
    "num_key_value_heads": 8, "num_local_experts": 128, "output_router_logits": False, "pad_token_id": 199999,
    "quantization_config": {"modules_to_not_convert": ["model.layers.*.self_attn",
                                                       "model.layers.*.mlp.router",
                                                       "model.embed_tokens", "lm_head"],
                            "quant_method": "mxfp4"},
    "rms_norm_eps": 1e-05,
    "rope_scaling": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0,
                     "original_max_position_embeddings": 4096, "rope_type": "yarn", "truncate": False},
    "rope_theta": 150000, "router_aux_loss_coef": 0.9, "sliding_window": 128, "swiglu_limit": 7.0,
    "tie_word_embeddings": False, "transformers_version": "4.55.0.dev0", "use_cache": True,
    "vocab_size": 201088}
# openai/gpt-oss-20b's config.json: the same but for 24 layers and 32 experts (as copied into
# circuit-tracer's tests, gpt_oss_config)
GPT_OSS_20B = {**GPT_OSS_120B, "num_hidden_layers": 24, "num_local_experts": 32,
               "layer_types": ["sliding_attention", "full_attention"] * 12}


def hand_count(layers: int, experts: int, active: int) -> tuple[int, int]:
    """transformers' GptOss modules, shape by shape (modeling_gpt_oss.py)."""
    d, heads, kv, hd, f, vocab = 2880, 64, 8, 64, 2880, 201088
    attention = (d * heads * hd + heads * hd) + 2 * (d * kv * hd + kv * hd) + (heads * hd * d + d)
    attention += heads  # the sinks
    router = experts * d + experts
    expert = (d * 2 * f + 2 * f) + (f * d + d)  # gate_up_proj (+ bias), down_proj (+ bias)
    norms = 2 * d
    embed, head, final = vocab * d, vocab * d, d
    total = embed + layers * (attention + router + experts * expert + norms) + final + head
    used = embed + layers * (attention + router + active * expert + norms) + final + head
    return total, used


# gpt-oss model card (arXiv 2508.10925), as quoted: "gpt-oss-120b: 116.8B total parameters
# (5.1B active) ... gpt-oss-20b: 20.9B total parameters (3.6B active)"; the card's active
# counts leave the embedding table out
@pytest.mark.parametrize("config, layers, experts, total_b, active_b", [
    (GPT_OSS_120B, 36, 128, 116.8, 5.1), (GPT_OSS_20B, 24, 32, 20.9, 3.6)])
def test_model_card_counts_and_the_hand_count(config, layers, experts, total_b, active_b):
    spec = spec_from_config(config, "gpt-oss/config.json")
    total, used = hand_count(layers, experts, 4)
    assert spec.parameter_count() == total
    assert spec.parameter_count(active=True) == used
    assert round(total / 1e9, 1) == total_b
    assert round((used - spec.vocab * spec.d_model) / 1e9, 1) == active_b
    assert spec.attention_sinks and spec.expert_bias and spec.router_bias and spec.qkv_bias and spec.o_bias


def test_120b_to_the_parameter():
    assert spec_from_config(GPT_OSS_120B, "c.json").parameter_count() == 116_829_156_672


def test_alternating_windows_and_their_cache():
    spec = spec_from_config(GPT_OSS_120B, "c.json")
    assert spec.sliding_window == 128 and spec.window_layers == tuple(range(0, 36, 2))
    # 18 full layers hold every token, 18 windowed ones at most 128: 2 × 8 × 64 values a token a layer
    assert spec.kv_cache_values(4096) == 2 * 8 * 64 * (18 * 4096 + 18 * 128)
    # without layer_types, GptOssConfig's default pattern is the same
    bare = {k: v for k, v in GPT_OSS_120B.items() if k != "layer_types"}
    assert spec_from_config(bare, "c.json").window_layers == spec.window_layers


def test_fields_left_out_take_gpt_oss_config_defaults_and_are_noted():
    spec = spec_from_config({"architectures": ["GptOssForCausalLM"]}, "bare/config.json")
    assert spec.parameter_count() == hand_count(36, 128, 4)[0]  # GptOssConfig's defaults: 120b's shape
    a = analyze(spec, WorkloadParams(context=1024), load_catalog()["h100-sxm"])
    note = next(n for n in a.notes if "GptOssConfig defaults" in n)
    assert "num_local_experts 128" in note and "sliding_window 128" in note and "attention_bias true" in note


def test_the_weight_classes_hold_every_parameter():
    # the classes a quantized checkpoint's bytes are worked out by (attention with its sinks,
    # experts with their biases, the router with its bias) add up to the count
    spec = spec_from_config(GPT_OSS_120B, "c.json")
    classes = sum(sum(spec.layer_parameter_classes(i).values()) for i in range(spec.layers))
    assert classes + sum(spec.end_parameter_classes().values()) == spec.parameter_count()
