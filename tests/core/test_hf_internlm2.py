"""InternLM2 (InternLM2ForCausalLM, remote code) read from its config.json: one fused wqkv,
``bias`` on wqkv and wo only; the count equals the one measured on the loaded weights."""

from explorer.core.model.hf_config import spec_from_config

# internlm/internlm2_5-7b-chat's config.json, the fields an MLX port's test copies from
# internlm2_5-7b-chat-4bit (its quantization block left out)
INTERNLM25_7B = {"architectures": ["InternLM2ForCausalLM"], "model_type": "internlm2", "hidden_size": 4096,
                 "num_hidden_layers": 32, "intermediate_size": 14336, "num_attention_heads": 32,
                 "num_key_value_heads": 8, "rms_norm_eps": 1e-05, "vocab_size": 92544, "bias": False,
                 "max_position_embeddings": 32768, "rope_theta": 1000000,
                 "rope_scaling": {"type": "dynamic", "factor": 2.0}, "tie_word_embeddings": False,
                 "hidden_act": "silu"}


def test_the_count_of_the_loaded_weights():
    spec = spec_from_config(INTERNLM25_7B, "internlm2_5-7b/config.json")
    # a parameter report of the loaded 7B checkpoint (source "ACTUAL_LOADED_WEIGHTS" in a public
    # test): total_parameters 7,737,708,544, embedding_parameters 758,120,448 (two tables)
    assert spec.parameter_count() == 7_737_708_544
    assert 2 * spec.vocab * spec.d_model == 758_120_448
    assert spec.fused_qkv and not spec.qkv_bias


def test_hand_count_and_the_bias_flag():
    d, q, kv, f, vocab = 4096, 4096, 1024, 14336, 92544
    layer = d * (q + 2 * kv) + q * d + 3 * d * f + 2 * d
    assert spec_from_config(INTERNLM25_7B, "c.json").parameter_count() == 2 * vocab * d + 32 * layer + d
    biased = spec_from_config({**INTERNLM25_7B, "bias": True}, "c.json")  # wqkv and wo biases
    assert biased.parameter_count() - 2 * vocab * d - 32 * layer - d == 32 * (q + 2 * kv + d)
