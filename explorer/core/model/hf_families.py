"""The families of Hugging Face configs the app reads (``hf_config``): each family's class
name, transformers' ``model_type`` for it, and the defaults of transformers' configuration
classes that fill any field a config.json leaves out."""

FAMILIES = ("LlamaForCausalLM", "MistralForCausalLM", "MixtralForCausalLM", "Qwen2ForCausalLM",
            "Qwen2MoeForCausalLM", "Qwen3ForCausalLM", "Qwen3MoeForCausalLM", "GemmaForCausalLM",
            "Gemma2ForCausalLM", "Phi3ForCausalLM", "PhimoeForCausalLM", "OlmoeForCausalLM",
            "GPT2LMHeadModel", "DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", "Gemma3ForCausalLM",
            "Gemma3ForConditionalGeneration", "GlmForCausalLM", "Glm4ForCausalLM", "Llama4ForCausalLM",
            "Llama4ForConditionalGeneration", "GraniteForCausalLM", "Mistral3ForConditionalGeneration",
            "GptOssForCausalLM", "CohereForCausalLM", "FalconForCausalLM", "InternLM2ForCausalLM",
            "DeepseekForCausalLM")
# Other names of a family's class: the Phi-3.5-MoE repository's config.json names its remote
# code's "PhiMoEForCausalLM", transformers' class is PhimoeForCausalLM (model_type "phimoe").
ALIASES = {"PhiMoEForCausalLM": "PhimoeForCausalLM"}
# Families whose layers are not attention as the app costs it: refused by name, with the reason.
_LINEAR = ("MiniMax's lightning attention is a linear attention (a running state per head, no KV cache) on "
           "most layers, with softmax attention every few: the app costs softmax attention only")
REFUSED = {"MiniMaxForCausalLM": _LINEAR, "MiniMaxText01ForCausalLM": _LINEAR,
           "MiniMaxM1ForCausalLM": _LINEAR}
REFUSED_TYPES = {"minimax": "MiniMaxForCausalLM", "minimax_text_01": "MiniMaxText01ForCausalLM",
                 "minimax_m1": "MiniMaxM1ForCausalLM"}
GLM = ("GlmForCausalLM", "Glm4ForCausalLM")  # biases on Q, K and V by default; GLM-4-0414: four norms
# Llama's attention, attention_bias on Q, K, V and the output projection (LlamaAttention at
# 008e5743; Granite, Qwen3 and Phi-3.5-MoE's attention are built on it)
LLAMA_ATTENTION = ("LlamaForCausalLM", "GraniteForCausalLM", "Qwen3ForCausalLM", "PhimoeForCausalLM",
                   "GptOssForCausalLM", "CohereForCausalLM", "DeepseekForCausalLM")
# A multimodal model's text decoder, nested in its config: the family it is read as, and what
# is left out (transformers' Gemma3Config: its text_config is a Gemma3TextConfig).
NESTED = {"Gemma3ForConditionalGeneration": ("Gemma3ForCausalLM", "its SigLIP vision encoder (about 0.4 B "
                                             "parameters) is not costed: the analysis is the text decoder's"),
          "Llama4ForConditionalGeneration": ("Llama4ForCausalLM", "its vision encoder is not costed: the "
                                             "analysis is the text decoder's"),
          # Mistral3Config (transformers 0db25542): a MistralConfig text_config, a Pixtral vision tower
          "Mistral3ForConditionalGeneration": ("MistralForCausalLM", "its Pixtral vision encoder and "
                                               "multimodal projector are not costed: the analysis is the "
                                               "text decoder's")}
# The text model a multimodal config without a text_config stands for (Mistral3Config at 0db25542
# builds Mistral Small 3.1's decoder; Gemma 3 and Llama 4 take their text class's own defaults).
NESTED_TEXT = {"Mistral3ForConditionalGeneration": {
    "head_dim": 128, "hidden_act": "silu", "hidden_size": 5120, "intermediate_size": 32768,
    "max_position_embeddings": 131072, "model_type": "mistral", "num_attention_heads": 32,
    "num_hidden_layers": 40, "num_key_value_heads": 8, "sliding_window": None, "vocab_size": 131072}}
DEEPSEEK = ("DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM")  # multi-head latent attention
# DeepSeek's MoE layers: deepseek-moe (v1, DeepseekForCausalLM: ordinary attention) and V2/V3
DEEPSEEK_MOE = ("DeepseekForCausalLM", *DEEPSEEK)
QK_NORM = ("Qwen3ForCausalLM", "Qwen3MoeForCausalLM", "OlmoeForCausalLM", "Gemma3ForCausalLM")
QWEN = ("Qwen2ForCausalLM", "Qwen2MoeForCausalLM", "Qwen3ForCausalLM", "Qwen3MoeForCausalLM")
# transformers' model_type of each family: a config whose ``architectures`` names a class of
# the family the app does not list (``Gemma2Model``) is read by its model_type, as
# transformers' AutoConfig reads it.
MODEL_TYPES = {"llama": "LlamaForCausalLM", "mistral": "MistralForCausalLM", "mixtral": "MixtralForCausalLM",
               "qwen2": "Qwen2ForCausalLM", "qwen2_moe": "Qwen2MoeForCausalLM", "qwen3": "Qwen3ForCausalLM",
               "qwen3_moe": "Qwen3MoeForCausalLM", "gemma": "GemmaForCausalLM", "gemma2": "Gemma2ForCausalLM",
               "phi3": "Phi3ForCausalLM", "phimoe": "PhimoeForCausalLM", "olmoe": "OlmoeForCausalLM",
               "gpt2": "GPT2LMHeadModel", "deepseek_v2": "DeepseekV2ForCausalLM",
               "deepseek_v3": "DeepseekV3ForCausalLM", "gemma3_text": "Gemma3ForCausalLM",
               "gemma3": "Gemma3ForConditionalGeneration", "glm": "GlmForCausalLM", "glm4": "Glm4ForCausalLM",
               "llama4_text": "Llama4ForCausalLM", "llama4": "Llama4ForConditionalGeneration",
               "granite": "GraniteForCausalLM", "mistral3": "Mistral3ForConditionalGeneration",
               "gpt_oss": "GptOssForCausalLM", "cohere": "CohereForCausalLM", "falcon": "FalconForCausalLM",
               "internlm2": "InternLM2ForCausalLM", "deepseek": "DeepseekForCausalLM"}
# The defaults of transformers' configuration classes, which fill any field a config.json
# leaves out (transformers at 008e5743: LlamaConfig, Qwen2Config, Qwen3Config, Gemma2Config;
# MistralConfig at 001f85b3). Families not listed take no defaults: a missing field is refused.
TRANSFORMERS_DEFAULTS = {
    "LlamaForCausalLM": {"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008,
                         "num_hidden_layers": 32, "num_attention_heads": 32, "hidden_act": "silu",
                         "max_position_embeddings": 2048, "tie_word_embeddings": False},
    "MistralForCausalLM": {"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336,
                           "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
                           "hidden_act": "silu", "max_position_embeddings": 4096 * 32,
                           "tie_word_embeddings": False},
    "Qwen2ForCausalLM": {"vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016,
                         "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
                         "hidden_act": "silu", "max_position_embeddings": 32768, "tie_word_embeddings": False,
                         "max_window_layers": 28},
    "Qwen3ForCausalLM": {"vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016,
                         "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
                         "head_dim": 128, "hidden_act": "silu", "max_position_embeddings": 32768,
                         "tie_word_embeddings": False, "max_window_layers": 28},
    "Gemma2ForCausalLM": {"vocab_size": 256000, "hidden_size": 2304, "intermediate_size": 9216,
                          "num_hidden_layers": 26, "num_attention_heads": 8, "num_key_value_heads": 4,
                          "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh",
                          "max_position_embeddings": 8192, "tie_word_embeddings": True,
                          "sliding_window": 4096},
    # Gemma3TextConfig at 008f5c8c (the text_config of Gemma3ForConditionalGeneration too)
    "Gemma3ForCausalLM": {"vocab_size": 262208, "hidden_size": 2304, "intermediate_size": 9216,
                          "num_hidden_layers": 26, "num_attention_heads": 8, "num_key_value_heads": 4,
                          "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh",
                          "max_position_embeddings": 131072, "tie_word_embeddings": True,
                          "sliding_window": 4096, "sliding_window_pattern": 6},
}
# GraniteConfig at 008e5743: LlamaConfig's defaults; its four multipliers (embedding,
# attention, residual, logits) scale values and change no parameter or FLOP count that matters
TRANSFORMERS_DEFAULTS["GraniteForCausalLM"] = {**TRANSFORMERS_DEFAULTS["LlamaForCausalLM"],
                                               "attention_bias": False, "mlp_bias": False}
# Glm4Config at 008e5743 (GlmConfig has the same defaults)
_GLM = {"vocab_size": 151552, "hidden_size": 4096, "intermediate_size": 13696, "num_hidden_layers": 40,
        "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128, "hidden_act": "silu",
        "max_position_embeddings": 131072, "tie_word_embeddings": False, "attention_bias": True}
TRANSFORMERS_DEFAULTS.update({family: _GLM for family in GLM})
# Llama4TextConfig at 008e5743 (the text_config of Llama4ForConditionalGeneration too)
TRANSFORMERS_DEFAULTS["Llama4ForCausalLM"] = {
    "vocab_size": 202048, "hidden_size": 5120, "intermediate_size": 8192, "intermediate_size_mlp": 16384,
    "num_hidden_layers": 48, "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128,
    "hidden_act": "silu", "max_position_embeddings": 4096 * 32, "tie_word_embeddings": False,
    "num_experts_per_tok": 1, "num_local_experts": 16, "interleave_moe_layer_step": 1,
    "no_rope_layer_interval": 4, "attention_chunk_size": 8192, "attention_bias": False}
# GptOssConfig (transformers 02b8f42b, configuration_gpt_oss.py); layer_types: odd layers full,
# even ones windowed ("sliding_attention" if (i + 1) % 2)
TRANSFORMERS_DEFAULTS["GptOssForCausalLM"] = {
    "num_hidden_layers": 36, "num_local_experts": 128, "vocab_size": 201088, "hidden_size": 2880,
    "intermediate_size": 2880, "head_dim": 64, "num_attention_heads": 64, "num_key_value_heads": 8,
    "sliding_window": 128, "tie_word_embeddings": False, "hidden_act": "silu",
    "max_position_embeddings": 131072, "num_experts_per_tok": 4, "attention_bias": True}
# CohereConfig (transformers 008e5743, configuration_cohere.py)
TRANSFORMERS_DEFAULTS["CohereForCausalLM"] = {
    "vocab_size": 256000, "hidden_size": 8192, "intermediate_size": 22528, "num_hidden_layers": 40,
    "num_attention_heads": 64, "hidden_act": "silu", "max_position_embeddings": 8192,
    "tie_word_embeddings": True, "attention_bias": False, "use_qk_norm": False}
# DeepseekV2Config (transformers 008e5743, configuration_deepseek_v2.py): DeepSeek-V2's configs on
# the Hub leave hidden_act out
TRANSFORMERS_DEFAULTS["DeepseekV2ForCausalLM"] = {
    "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
    "num_attention_heads": 32, "hidden_act": "silu", "max_position_embeddings": 2048,
    "tie_word_embeddings": False, "first_k_dense_replace": 0, "kv_lora_rank": 512, "q_lora_rank": 1536,
    "n_routed_experts": 64, "n_shared_experts": 2, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
    "v_head_dim": 128, "moe_intermediate_size": 1407}
# FalconConfig (transformers 5fd8edad, configuration_falcon.py; the defaults are falcon-7b's):
# num_kv_heads defaults to the heads. modeling_falcon.py at 00dcc6dd reads two later fields,
# config.activation and config.ffn_hidden_size; their defaults ("gelu"; 4 × hidden_size, in
# hf_readers.falcon) are those of the later FalconConfig as other projects copy it (that file
# itself was not opened). FalconDecoderLayer sets num_ln_in_parallel_attn to 2 in the new
# architecture.
TRANSFORMERS_DEFAULTS["FalconForCausalLM"] = {
    "vocab_size": 65024, "hidden_size": 4544, "num_hidden_layers": 32, "num_attention_heads": 71,
    "alibi": False, "new_decoder_architecture": False, "multi_query": True, "parallel_attn": True,
    "bias": False, "max_position_embeddings": 2048, "activation": "gelu", "tie_word_embeddings": True}
GEMMA3_SOURCE = ("https://github.com/huggingface/transformers/blob/008f5c8c29be84d4721dc6d1e0fcd72300580be4/"
                 "src/transformers/models/gemma3/configuration_gemma3.py")
TRANSFORMERS_SOURCE = "https://github.com/huggingface/transformers/tree/008e574391258935f3ecc3035c882e73bbcac419"
