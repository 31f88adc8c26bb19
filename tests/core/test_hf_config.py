"""Hugging Face config.json files read as models: each published configuration below (the
fields that matter, as the model's config.json on the Hub has them) must give the model's
published parameter count, and what cannot be read is refused naming the file and field."""

import json

import pytest

from explorer.core.analysis.analysis import analyze
from explorer.core.files.datafile import DataFileError
from explorer.core.model import ops
from explorer.core.model.hf_config import read_config_file, spec_from_config
from explorer.core.model.step_ops import build_ops
from explorer.core.model.workload import WorkloadParams

LLAMA_3_8B = {"architectures": ["LlamaForCausalLM"], "attention_bias": False, "hidden_act": "silu",
              "hidden_size": 4096, "intermediate_size": 14336, "max_position_embeddings": 8192,
              "model_type": "llama", "num_attention_heads": 32, "num_hidden_layers": 32,
              "num_key_value_heads": 8, "rms_norm_eps": 1e-05, "rope_theta": 500000.0,
              "tie_word_embeddings": False, "torch_dtype": "bfloat16", "vocab_size": 128256}
MISTRAL_7B = {"architectures": ["MistralForCausalLM"], "hidden_act": "silu", "hidden_size": 4096,
              "intermediate_size": 14336, "max_position_embeddings": 32768, "num_attention_heads": 32,
              "num_hidden_layers": 32, "num_key_value_heads": 8, "rms_norm_eps": 1e-05,
              "rope_theta": 10000.0, "sliding_window": 4096, "tie_word_embeddings": False,
              "vocab_size": 32000}
MIXTRAL_8X7B = {"architectures": ["MixtralForCausalLM"], "hidden_act": "silu", "hidden_size": 4096,
                "intermediate_size": 14336, "max_position_embeddings": 32768, "num_attention_heads": 32,
                "num_experts_per_tok": 2, "num_hidden_layers": 32, "num_key_value_heads": 8,
                "num_local_experts": 8, "rms_norm_eps": 1e-05, "rope_theta": 1e6, "sliding_window": None,
                "tie_word_embeddings": False, "vocab_size": 32000}
QWEN25_7B = {"architectures": ["Qwen2ForCausalLM"], "hidden_act": "silu", "hidden_size": 3584,
             "intermediate_size": 18944, "max_position_embeddings": 131072, "max_window_layers": 28,
             "num_attention_heads": 28, "num_hidden_layers": 28, "num_key_value_heads": 4,
             "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "sliding_window": 131072,
             "tie_word_embeddings": False, "use_sliding_window": False, "vocab_size": 152064}
GEMMA_7B = {"architectures": ["GemmaForCausalLM"], "head_dim": 256, "hidden_act": "gelu",
            "hidden_size": 3072, "intermediate_size": 24576, "max_position_embeddings": 8192,
            "num_attention_heads": 16, "num_hidden_layers": 28, "num_key_value_heads": 16,
            "rms_norm_eps": 1e-06, "vocab_size": 256000}
GEMMA2_9B = {"architectures": ["Gemma2ForCausalLM"], "attn_logit_softcapping": 50.0,
             "final_logit_softcapping": 30.0, "head_dim": 256, "hidden_act": "gelu_pytorch_tanh",
             "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 3584, "intermediate_size": 14336,
             "max_position_embeddings": 8192, "num_attention_heads": 16, "num_hidden_layers": 42,
             "num_key_value_heads": 8, "query_pre_attn_scalar": 256, "rms_norm_eps": 1e-06,
             "sliding_window": 4096, "vocab_size": 256000}
PHI3_MINI = {"architectures": ["Phi3ForCausalLM"], "hidden_act": "silu", "hidden_size": 3072,
             "intermediate_size": 8192, "max_position_embeddings": 4096, "num_attention_heads": 32,
             "num_hidden_layers": 32, "num_key_value_heads": 32, "rms_norm_eps": 1e-05,
             "sliding_window": 2047, "tie_word_embeddings": False, "vocab_size": 32064}
GPT2 = {"activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"], "n_ctx": 1024,
        "n_embd": 768, "n_head": 12, "n_layer": 12, "n_positions": 1024, "vocab_size": 50257}
QWEN15_MOE = {"architectures": ["Qwen2MoeForCausalLM"], "decoder_sparse_step": 1, "hidden_act": "silu",
              "hidden_size": 2048, "intermediate_size": 5632, "max_position_embeddings": 8192,
              "moe_intermediate_size": 1408, "num_attention_heads": 16, "num_experts": 60,
              "num_experts_per_tok": 4, "num_hidden_layers": 24, "num_key_value_heads": 16,
              "shared_expert_intermediate_size": 5632, "tie_word_embeddings": False, "vocab_size": 151936}
QWEN3_30B_A3B = {"architectures": ["Qwen3MoeForCausalLM"], "decoder_sparse_step": 1, "head_dim": 128,
                 "hidden_act": "silu", "hidden_size": 2048, "intermediate_size": 6144,
                 "max_position_embeddings": 40960, "mlp_only_layers": [], "moe_intermediate_size": 768,
                 "num_attention_heads": 32, "num_experts": 128, "num_experts_per_tok": 8,
                 "num_hidden_layers": 48, "num_key_value_heads": 4, "tie_word_embeddings": False,
                 "vocab_size": 151936}

QWEN3_8B = {"architectures": ["Qwen3ForCausalLM"], "attention_bias": False, "head_dim": 128,
            "hidden_act": "silu", "hidden_size": 4096, "intermediate_size": 12288,
            "max_position_embeddings": 40960, "max_window_layers": 36, "model_type": "qwen3",
            "num_attention_heads": 32, "num_hidden_layers": 36, "num_key_value_heads": 8,
            "rms_norm_eps": 1e-06, "rope_theta": 1000000, "sliding_window": None,
            "tie_word_embeddings": False, "torch_dtype": "bfloat16", "use_sliding_window": False,
            "vocab_size": 151936}

DEEPSEEK_V2_LITE = {"architectures": ["DeepseekV2ForCausalLM"], "model_type": "deepseek_v2",
                    "hidden_size": 2048, "intermediate_size": 10944, "num_hidden_layers": 27,
                    "num_attention_heads": 16, "num_key_value_heads": 16, "vocab_size": 102400,
                    "max_position_embeddings": 163840, "tie_word_embeddings": False, "hidden_act": "silu",
                    "q_lora_rank": None, "kv_lora_rank": 512, "qk_nope_head_dim": 128,
                    "qk_rope_head_dim": 64, "v_head_dim": 128, "n_routed_experts": 64,
                    "num_experts_per_tok": 6, "n_shared_experts": 2, "moe_intermediate_size": 1408,
                    "first_k_dense_replace": 1, "moe_layer_freq": 1, "topk_method": "greedy",
                    "n_group": 1, "topk_group": 1}

OLMOE_1B_7B = {"architectures": ["OlmoeForCausalLM"], "model_type": "olmoe", "hidden_size": 2048,
               "intermediate_size": 1024, "num_hidden_layers": 16, "num_attention_heads": 16,
               "num_key_value_heads": 16, "num_experts": 64, "num_experts_per_tok": 8, "vocab_size": 50304,
               "max_position_embeddings": 4096, "tie_word_embeddings": False, "hidden_act": "silu"}
# microsoft/Phi-3.5-MoE-instruct names its remote-code class PhiMoEForCausalLM: read by model_type
PHI35_MOE = {"architectures": ["PhiMoEForCausalLM"], "model_type": "phimoe", "hidden_size": 4096,
             "intermediate_size": 6400, "num_hidden_layers": 32, "num_attention_heads": 32,
             "num_key_value_heads": 8, "num_local_experts": 16, "num_experts_per_tok": 2, "vocab_size": 32064,
             "max_position_embeddings": 131072, "tie_word_embeddings": False, "hidden_act": "silu",
             "attention_bias": True, "lm_head_bias": True, "sliding_window": 131072}

MISTRAL_SMALL_3 = {"architectures": ["MistralForCausalLM"], "head_dim": 128, "hidden_act": "silu",
                   "hidden_size": 5120, "intermediate_size": 32768, "max_position_embeddings": 32768,
                   "num_attention_heads": 32, "num_hidden_layers": 40, "num_key_value_heads": 8,
                   "rms_norm_eps": 1e-05, "rope_theta": 100000000.0, "sliding_window": None,
                   "tie_word_embeddings": False, "vocab_size": 131072}
# mistralai/Ministral-8B-Instruct-2410's config.json (the fields that matter): transformers reads
# its sliding_window for every layer (MistralConfig has no layer pattern)
MINISTRAL_8B = {"architectures": ["MistralForCausalLM"], "hidden_size": 4096, "intermediate_size": 12288,
                "num_hidden_layers": 36, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
                "vocab_size": 131072, "max_position_embeddings": 32768, "sliding_window": 32768,
                "tie_word_embeddings": False, "hidden_act": "silu", "torch_dtype": "bfloat16"}
# ibm-granite/granite-3.3-8b-instruct's config.json (its multipliers scale values only)
GRANITE_33_8B = {"architectures": ["GraniteForCausalLM"], "attention_bias": False,
                 "attention_multiplier": 0.0078125, "embedding_multiplier": 12.0, "hidden_act": "silu",
                 "hidden_size": 4096, "intermediate_size": 12800, "logits_scaling": 16.0,
                 "max_position_embeddings": 131072, "mlp_bias": False, "model_type": "granite",
                 "num_attention_heads": 32, "num_hidden_layers": 40, "num_key_value_heads": 8,
                 "residual_multiplier": 0.22, "rms_norm_eps": 1e-05, "rope_theta": 10000000.0,
                 "tie_word_embeddings": True, "torch_dtype": "bfloat16", "vocab_size": 49159}
# (config, total parameters, active parameters per token): an int is the exact published
# count; a string the figure as published, to its digits.
PUBLISHED = {
    "llama-3-8b": (LLAMA_3_8B, 8_030_261_248, None),  # the preset's count
    "mistral-7b": (MISTRAL_7B, 7_241_732_096, None),  # safetensors metadata
    "gpt2": (GPT2, 124_439_808, None),  # the preset's count
    "phi-3-mini": (PHI3_MINI, 3_821_079_552, None),
    "qwen2.5-7b": (QWEN25_7B, "7.62e9", None),  # model card
    "gemma-7b": (GEMMA_7B, "8.54e9", None),
    "gemma-2-9b": (GEMMA2_9B, "9.24e9", None),
    "mixtral-8x7b": (MIXTRAL_8X7B, "46.7e9", "12.9e9"),  # Mistral AI: 46.7B total, 12.9B per token
    "qwen1.5-moe-a2.7b": (QWEN15_MOE, "14.3e9", "2.7e9"),  # 14.3B total, 2.7B activated
    "qwen3-30b-a3b": (QWEN3_30B_A3B, "30.5e9", "3.3e9"),  # 30.5B total, 3.3B activated
    "qwen3-8b": (QWEN3_8B, 8_190_735_360, None),  # safetensors metadata (model card: 8.2B)
    "deepseek-v2-lite": (DEEPSEEK_V2_LITE, "15.7e9", "2.4e9"),  # model card: 15.7B, activates 2.4B
    "olmoe-1b-7b": (OLMOE_1B_7B, "6.92e9", "1.3e9"),  # OLMoE paper: 6.9B total, 1.3B active
    "phi-3.5-moe": (PHI35_MOE, "41.9e9", "6.6e9"),  # model card: 42B (41.9B), 6.6B active
    # Mistral Small 3 (mistralai/Mistral-Small-24B-Instruct-2501): head_dim 128, not 5120 / 32
    "mistral-small-24b": (MISTRAL_SMALL_3, "23.6e9", None),  # the Hub's model size: 23.6B
    "granite-3.3-8b": (GRANITE_33_8B, "8.17e9", None),  # the Hub's model size: 8.17B
    "ministral-8b": (MINISTRAL_8B, "8.02e9", None),  # the Hub's model size: 8.02B
}


def _matches(count: int, published: int | str) -> bool:
    """Whether ``count`` is ``published``: exactly (an int), or to the digits of the published
    figure, rounded or cut ("3.3B activated" for 3.35 billion)."""
    if isinstance(published, int):
        return count == published
    mantissa, exponent = published.split("e")
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    unit = 10 ** (int(exponent) - decimals)
    return float(published) - unit / 2 <= count < float(published) + unit


@pytest.mark.parametrize("name", PUBLISHED)
def test_each_config_gives_the_published_parameter_count(name):
    config, total, active = PUBLISHED[name]
    spec = spec_from_config(config, f"{name}/config.json")
    assert _matches(spec.parameter_count(), total), spec.parameter_count()
    if active is None:
        assert spec.parameter_count(active=True) == spec.parameter_count()
    else:
        counted = spec.parameter_count(active=True)
        assert _matches(counted, active), counted
        # only DeepSeek's count leaves the input table out; the others' counts need it
        assert spec.active_without_embedding == (name in WITHOUT_INPUT_EMBEDDINGS)


# DeepSeek counts "activated" parameters without the input embedding table (a token reads
# one row of it), and so does a DeepSeek config's active count (docs/commands.md): V2-Lite's
# 2.4 B holds so (2.45 B; with the table 2.66 B), as does V3's 37 B (36.6 B). Mistral and Qwen
# count the table: Mixtral's 12.9 B needs it.
WITHOUT_INPUT_EMBEDDINGS = ("deepseek-v2-lite",)


def test_deepseek_v3_s_activated_count_follows_the_same_convention():
    from pathlib import Path

    configs = Path(__file__).parents[2] / "resources" / "models" / "configs"
    spec = read_config_file(configs / "deepseek-v3.json")
    active = spec.parameter_count(active=True)
    assert _matches(active, "37e9") and round(active / 1e8) == 366  # 36.6 B: without the table
    lite = spec_from_config(DEEPSEEK_V2_LITE, "lite/config.json")
    # 2.45 B; with its 102,400 × 2,048 input table it would be 2.66 B, past the card's "2.4B"
    assert lite.parameter_count(active=True) == 2_451_435_008 == 2_661_150_208 - 102_400 * 2_048


def test_a_config_gives_the_same_model_as_the_preset(models):
    spec = spec_from_config(LLAMA_3_8B, "Meta-Llama-3-8B/config.json")
    preset = models["llama-3-8b"]
    params = WorkloadParams(phase="decode", batch=8, context=2048)
    mine, theirs = analyze(spec, params, _device()), analyze(preset, params, _device())
    assert mine.totals.flops == theirs.totals.flops and mine.totals.bytes == theirs.totals.bytes
    assert spec.name == "Meta-Llama-3-8B" and spec.id == "hf-meta-llama-3-8b"


def _device():
    from explorer.core.hardware.catalog import load_catalog

    return load_catalog()["h100-sxm"]


def test_the_file_is_read_and_kept_as_canonical_json(tmp_path):
    path = tmp_path / "Mistral-7B-v0.1" / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps(MISTRAL_7B, indent=2))
    spec = read_config_file(path)
    assert spec.name == "Mistral-7B-v0.1"
    assert json.loads(spec.config) == {**MISTRAL_7B, "_name_or_path": "Mistral-7B-v0.1"}  # the name kept
    assert spec_from_config(json.loads(spec.config), "again").parameter_count() == spec.parameter_count()


@pytest.mark.parametrize(("change", "field", "words"), [
    ({"architectures": ["BertModel"], "model_type": "bert"}, "architectures", "not a family this app reads"),
    ({"architectures": None, "model_type": None}, "architectures", "is missing"),
    ({"architectures": ["MixtralForCausalLM"], "num_local_experts": None}, "num_local_experts", "is missing"),
    ({"hidden_size": "4096"}, "hidden_size", "must be a whole number"),
    ({"num_hidden_layers": 0}, "num_hidden_layers", "must be between 1"),
    ({"num_key_value_heads": 5}, "num_key_value_heads", "cannot be shared evenly"),
    ({"hidden_act": "tanh"}, "hidden_act", "is not one of"),
    ({"tie_word_embeddings": "no"}, "tie_word_embeddings", "must be true or false"),
    ({"vocab_size": 1 << 40}, "vocab_size", "must be between"),
    ({"head_dim": 0}, "head_dim", "must be between 1"),  # not "absent": a width of nothing
])
def test_what_cannot_be_read_is_refused_naming_the_field(change, field, words):
    config = {**LLAMA_3_8B, **change}
    with pytest.raises(DataFileError) as caught:
        spec_from_config(config, "x/config.json")
    assert caught.value.field == field and words in str(caught.value)
    assert str(caught.value).startswith("x/config.json: field")


def test_a_broken_file_is_refused_with_the_file_named(tmp_path):
    for text, words in (("{", "is not valid JSON"), ("[1, 2]", "must hold a JSON object")):
        path = tmp_path / "config.json"
        path.write_text(text)
        with pytest.raises(DataFileError, match=words) as caught:
            read_config_file(path)
        assert str(path) in str(caught.value)
    with pytest.raises(DataFileError, match="cannot be read"):
        read_config_file(tmp_path / "missing.json")


def _op(spec, params, name):
    [found] = [o for o in build_ops(spec, params) if o.name == name]
    return found


def test_moe_decode_reads_the_experts_its_tokens_touch():
    """Uniform routing: E·(1 − (1 − k/E)^n) distinct experts for n tokens; all E at worst."""
    spec = spec_from_config(MIXTRAL_8X7B, "Mixtral/config.json")
    per_expert = 2 * 4096 * 14336 * 2  # gate and up, bf16
    one = _op(spec, WorkloadParams(batch=1), "expert_up")
    assert one.weight_bytes == pytest.approx(2 * per_expert)  # one token: its 2 experts
    four = _op(spec, WorkloadParams(batch=4), "expert_up")
    assert four.weight_bytes == pytest.approx(8 * (1 - (6 / 8) ** 4) * per_expert)
    worst = _op(spec, WorkloadParams(batch=4, routing="all"), "expert_up")
    assert worst.weight_bytes == pytest.approx(8 * per_expert)
    assert ops.experts_touched(8, 2, 10_000) == pytest.approx(8)


def test_moe_intensity_grows_more_slowly_with_batch_than_a_dense_models():
    device = _device()
    moe = spec_from_config(MIXTRAL_8X7B, "Mixtral/config.json")
    dense = spec_from_config(MISTRAL_7B, "Mistral/config.json")

    def growth(spec):
        low, high = (analyze(spec, WorkloadParams(batch=b, context=1024), device).totals for b in (1, 16))
        return (high.flops / high.bytes) / (low.flops / low.bytes)

    assert growth(moe) < 0.5 * growth(dense)


def test_a_sliding_window_caps_attention_and_the_kv_cache():
    mistral = spec_from_config(MISTRAL_7B, "Mistral/config.json")
    long, at_window = WorkloadParams(context=32768), WorkloadParams(context=4096)
    assert _op(mistral, long, "attn_score").bytes == _op(mistral, at_window, "attn_score").bytes
    assert mistral.kv_cache_values(32768) == mistral.kv_cache_values(4096)
    assert mistral.kv_cache_values(4096) == 4096 * mistral.kv_values_per_token()
    gemma = spec_from_config(GEMMA2_9B, "gemma-2-9b/config.json")
    assert gemma.window_layers == tuple(range(0, 42, 2))  # every other layer local, the first too
    per_layer = 2 * 8 * 256
    assert gemma.kv_cache_values(8192) == per_layer * (21 * 8192 + 21 * 4096)
    local = _op(gemma, WorkloadParams(context=8192), "local_attn_score")
    full = _op(gemma, WorkloadParams(context=8192), "attn_score")
    assert local.layers == tuple(range(0, 42, 2)) and full.layers == tuple(range(1, 42, 2))
    assert local.flops * 2 == full.flops  # 4,096 of 8,192 tokens


def test_qwen2_s_sliding_window_follows_use_sliding_window():
    """HF Qwen2Config: the window applies only with use_sliding_window, and then to the
    layers from max_window_layers on; Qwen2.5 ships it off (131,072 and false)."""
    off = spec_from_config(QWEN25_7B, "qwen/config.json")
    assert off.sliding_window == 0 and off.window_layers == ()
    on = spec_from_config({**QWEN25_7B, "use_sliding_window": True, "sliding_window": 4096,
                           "max_window_layers": 20}, "qwen/config.json")
    assert on.sliding_window == 4096 and on.window_layers == tuple(range(20, 28))
    per_layer = 2 * 4 * 128
    assert on.kv_cache_values(8192) == per_layer * (20 * 8192 + 8 * 4096)
    with pytest.raises(DataFileError, match="must be true or false") as caught:
        spec_from_config({**QWEN25_7B, "use_sliding_window": "yes"}, "qwen/config.json")
    assert caught.value.field == "use_sliding_window"


def test_a_context_past_the_trained_one_is_noted_in_every_phase():
    spec = spec_from_config({**MISTRAL_7B, "max_position_embeddings": 1024}, "m/config.json")
    for params in (WorkloadParams(phase="decode", context=4096), WorkloadParams(phase="prefill", seq=2048),
                   WorkloadParams(phase="train", seq=2048)):
        notes = analyze(spec, params, _device()).notes
        assert any(f"{params.kv_tokens:,} tokens exceed" in n and "trained context of 1,024" in n
                   for n in notes), notes


DEEPSEEK_V3 = {"architectures": ["DeepseekV3ForCausalLM"], "first_k_dense_replace": 3, "hidden_act": "silu",
               "hidden_size": 7168, "intermediate_size": 18432, "kv_lora_rank": 512,
               "max_position_embeddings": 163840, "moe_intermediate_size": 2048, "moe_layer_freq": 1,
               "n_group": 8, "n_routed_experts": 256, "n_shared_experts": 1, "norm_topk_prob": True,
               "num_attention_heads": 128, "num_experts_per_tok": 8, "num_hidden_layers": 61,
               "num_key_value_heads": 128, "num_nextn_predict_layers": 1, "q_lora_rank": 1536,
               "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "rms_norm_eps": 1e-06,
               "routed_scaling_factor": 2.5, "scoring_func": "sigmoid", "tie_word_embeddings": False,
               "topk_group": 4, "topk_method": "noaux_tc", "v_head_dim": 128, "vocab_size": 129280}


def test_deepseek_v3_gives_its_published_counts_and_caches_its_latent():
    """671B total and 37B activated (the DeepSeek-V3 report; the 14B next-token-prediction
    module on the Hub is not part of either); the cache holds 512 + 64 values per token and
    layer instead of 2 × 128 heads × 128."""
    spec = spec_from_config(DEEPSEEK_V3, "DeepSeek-V3/config.json")
    assert _matches(spec.parameter_count(), "671e9") and _matches(spec.parameter_count(active=True), "37e9")
    assert spec.kv_cache_values(1000) == 61 * 576 * 1000
    decode = {o.name: o for o in build_ops(spec, WorkloadParams(batch=1, context=4096))}
    assert decode["attn_score"].cache_bytes == 4096 * 576 * 2  # the latent and rotary key, bf16
    assert decode["attn_value"].cache_bytes == 0  # a fused kernel reads the latent once
    assert decode["attn_score"].flops == 2 * 128 * 4096 * 576 + 5 * 128 * 4096  # products + softmax
    prefill = {o.name for o in build_ops(spec, WorkloadParams(phase="prefill", seq=256))}
    assert "kv_up" in prefill and "k_up_absorbed" not in prefill
    assert decode["router"].layers == tuple(range(3, 61))  # the first three layers are dense
    assert decode["gate_proj"].layers == (0, 1, 2)


def test_fields_a_config_leaves_out_take_transformers_defaults():
    """A Llama config without hidden_act or num_key_value_heads reads as transformers reads
    it (LlamaConfig: silu, one KV head per head); a Qwen3 config without head_dim takes 128."""
    bare = {k: v for k, v in LLAMA_3_8B.items() if k not in ("hidden_act", "num_key_value_heads")}
    spec = spec_from_config(bare, "x/config.json")
    assert spec.activation == "silu" and spec.kv_heads == spec.heads == 32
    qwen = spec_from_config({k: v for k, v in QWEN3_8B.items() if k != "head_dim"}, "q/config.json")
    assert qwen.parameter_count() == 8_190_735_360 and qwen.qk_norm
    assert json.loads(spec.config) == {**bare, "_name_or_path": "x"}  # the file as it was, no defaults


@pytest.mark.parametrize("architectures", [["Gemma2Model"], None, []])
def test_a_class_the_app_does_not_list_is_read_by_its_model_type(architectures):
    config = {**GEMMA2_9B, "architectures": architectures, "model_type": "gemma2"}
    assert _matches(spec_from_config(config, "g/config.json").parameter_count(), "9.24e9")


@pytest.mark.parametrize("path, name", [("Mistral-7B-v0.1/config.json", "Mistral-7B-v0.1"),
                                        ("configs/mistral-7b.json", "mistral-7b"),
                                        ("configs/mixtral.json", "mixtral")])
def test_a_config_without_its_name_is_named_after_its_file_or_folder(tmp_path, path, name):
    file = tmp_path / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(json.dumps(MISTRAL_7B))
    spec = read_config_file(file)
    assert spec.name == name and spec.id == "hf-" + name.lower().replace(".", "-")


def test_a_file_stored_in_another_precision_is_said(models):
    """gemma-2-2b's config says float32: analysed in bf16 (the default), a note says so;
    analysed in fp32, nothing to say."""
    spec = spec_from_config({**GEMMA2_9B, "torch_dtype": "float32"}, "gemma/config.json")
    assert spec.file_dtype == "fp32"
    noted = [n for n in analyze(spec, WorkloadParams(), _device()).notes if "stores its weights" in n]
    assert noted == ["gemma's config.json stores its weights in fp32; analysed with bf16 weights "
                     "(--dtype or --weight-dtype to change)"]
    assert not [n for n in analyze(spec, WorkloadParams(dtype="fp32"), _device()).notes if "stores" in n]
    assert spec_from_config(LLAMA_3_8B, "l/config.json").file_dtype == "bf16"


@pytest.mark.parametrize("given", ["", ".", "  "])
def test_a_name_that_names_nothing_is_not_taken(given):
    spec = spec_from_config({**MISTRAL_7B, "_name_or_path": given}, "Mistral-7B-v0.1/config.json")
    assert spec.name == "Mistral-7B-v0.1"


def test_a_context_past_the_sliding_window_is_said():
    spec = spec_from_config(MISTRAL_7B, "Mistral-7B-v0.1/config.json")
    notes = analyze(spec, WorkloadParams(context=8192), _device()).notes
    assert ("past 4,096 tokens Mistral-7B-v0.1's sliding window applies: all 32 of its layers attend to "
            "and cache only the last 4,096 tokens") in notes
    assert not [n for n in analyze(spec, WorkloadParams(context=2048), _device()).notes if "window" in n]


def test_granite_counts_as_llama_and_mlp_biases_are_refused():
    """8,170,864,640: Llama's layers at Granite 3.3 8B's sizes, the embeddings tied; an MLP
    with biases (mlp_bias) would hold parameters the Llama layout does not count."""
    spec = spec_from_config(GRANITE_33_8B, "granite/config.json")
    d, layers, kv = 4096, 40, 8 * 128
    per_layer = 2 * d * d + 2 * d * kv + 3 * d * 12800 + 2 * d
    assert spec.parameter_count() == 49159 * d + layers * per_layer + d == 8_170_864_640
    with pytest.raises(DataFileError, match=r"mlp_bias.*not modelled"):
        spec_from_config({**GRANITE_33_8B, "mlp_bias": True}, "granite/config.json")
    as_llama = {**GRANITE_33_8B, "architectures": ["LlamaForCausalLM"], "model_type": "llama"}
    llama = spec_from_config(as_llama, "l/config.json")
    assert llama.parameter_count() == spec.parameter_count()


def test_an_opened_config_s_weights_default_to_the_precision_its_file_stores():
    """torch_dtype is the default weight precision of a config the user opens: gemma in
    float32 is analysed with fp32 weights; a weight precision given, or training, keeps its
    own (and the note says what the file holds)."""
    from explorer.core.model.hf_config import stored_precision

    spec = spec_from_config({**GEMMA2_9B, "torch_dtype": "float32"}, "gemma/config.json")
    assert stored_precision(WorkloadParams(), spec).weight_dtype == "fp32"
    assert stored_precision(WorkloadParams(weight_dtype="int4"), spec).weight_dtype == "int4"
    assert stored_precision(WorkloadParams(phase="train"), spec).weight_dtype is None
    bf16 = spec_from_config(LLAMA_3_8B, "l/config.json")
    assert stored_precision(WorkloadParams(), bf16) == WorkloadParams()  # stored as computed


def test_analyze_reads_an_opened_config_s_weights_as_its_file_stores_them(tmp_path):
    from tests.cli.test_cli import run

    path = tmp_path / "gemma" / "config.json"  # named after its folder
    path.parent.mkdir()
    path.write_text(json.dumps({**GEMMA2_9B, "torch_dtype": "float32"}))
    argv = ["analyze", "--hardware", "h100-sxm", "--model-config", str(path), "--json"]
    code, out, err = run(*argv)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["workload"]["weight_dtype"] == "fp32"
    assert not any("stores its weights" in n for n in doc["notes"])
    code, out, _ = run(*argv, "--weight-dtype", "bf16")
    assert json.loads(out)["notes"].count(
        "gemma's config.json stores its weights in fp32; analysed with bf16 weights (--dtype or "
        "--weight-dtype to change)") == 1


def test_a_compute_precision_given_on_the_command_line_holds_the_weights_too(tmp_path):
    from tests.cli.test_cli import run

    path = tmp_path / "llama" / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps({**LLAMA_3_8B, "torch_dtype": "float32"}))
    code, out, err = run("analyze", "--hardware", "h100-sxm", "--model-config", str(path), "--dtype", "fp8",
                         "--json")
    assert code == 0, err
    assert json.loads(out)["workload"]["weight_dtype"] == "fp8"  # --dtype given: the file's fp32 set aside


def test_chosen_model_without_an_id_or_a_config_says_so(models):
    from explorer.core.model.hf_config import chosen_model

    with pytest.raises(ValueError, match="no model"):
        chosen_model(models, None)
