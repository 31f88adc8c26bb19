"""The families of Hugging Face configs the app reads (``hf_config``): each family's class
name, transformers' ``model_type`` for it, and the defaults of transformers' configuration
classes that fill any field a config.json leaves out."""

FAMILIES = ("LlamaForCausalLM", "MistralForCausalLM", "MixtralForCausalLM", "Qwen2ForCausalLM",
            "Qwen2MoeForCausalLM", "Qwen3ForCausalLM", "Qwen3MoeForCausalLM", "GemmaForCausalLM",
            "Gemma2ForCausalLM", "Phi3ForCausalLM", "PhimoeForCausalLM", "OlmoeForCausalLM",
            "GPT2LMHeadModel", "DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", "Gemma3ForCausalLM",
            "Gemma3ForConditionalGeneration", "GlmForCausalLM", "Glm4ForCausalLM", "Llama4ForCausalLM",
            "Llama4ForConditionalGeneration", "GraniteForCausalLM")
GLM = ("GlmForCausalLM", "Glm4ForCausalLM")  # biases on Q, K and V by default; GLM-4-0414: four norms
# Llama's attention, attention_bias on Q, K, V and the output projection (LlamaAttention at
# 008e5743; Granite, Qwen3 and Phi-3.5-MoE's attention are built on it)
LLAMA_ATTENTION = ("LlamaForCausalLM", "GraniteForCausalLM", "Qwen3ForCausalLM", "PhimoeForCausalLM")
# A multimodal model's text decoder, nested in its config: the family it is read as, and what
# is left out (transformers' Gemma3Config: its text_config is a Gemma3TextConfig).
NESTED = {"Gemma3ForConditionalGeneration": ("Gemma3ForCausalLM", "its SigLIP vision encoder (about 0.4 B "
                                             "parameters) is not costed: the analysis is the text decoder's"),
          "Llama4ForConditionalGeneration": ("Llama4ForCausalLM", "its vision encoder is not costed: the "
                                             "analysis is the text decoder's")}
DEEPSEEK = ("DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM")
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
               "granite": "GraniteForCausalLM"}
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
GEMMA3_SOURCE = ("https://github.com/huggingface/transformers/blob/008f5c8c29be84d4721dc6d1e0fcd72300580be4/"
                 "src/transformers/models/gemma3/configuration_gemma3.py")
TRANSFORMERS_SOURCE = "https://github.com/huggingface/transformers/tree/008e574391258935f3ecc3035c882e73bbcac419"
