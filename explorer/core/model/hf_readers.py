"""Readers for Hugging Face families whose config.json is laid out apart from Llama's
(``hf_config`` reads the rest): Falcon's fields and block variants, GPT-OSS's windowed
layers, and the sentence that lists the transformers defaults a file was read with.

Falcon (transformers' FalconConfig and modeling_falcon.py, 5fd8edad / 00dcc6dd): a fused
query_key_value projection of (heads + 2 × KV heads) × head_dim outputs, KV heads being
``num_kv_heads`` with ``new_decoder_architecture`` (Falcon-40B, 180B), one with
``multi_query`` (Falcon-7B), else every head; a dense output projection; a plain MLP
(dense_h_to_4h, the activation, dense_4h_to_h) of ``ffn_hidden_size`` (4 × hidden by
default); ``bias`` on all four; LayerNorms with biases: one per layer when attention and MLP
run side by side from the same norm (``parallel_attn``, one norm), two otherwise
(``ln_attn`` and ``ln_mlp`` in the new architecture, or norms before attention and MLP in
sequence); a final ``ln_f``; the LM head tied to the embedding. ALiBi (``alibi``: Falcon-RW)
is refused: its position biases are not costed. The KV cache is the model's KV heads' (8 for
Falcon-40B), as serving engines hold it; transformers' own FalconAttention broadcasts keys and
values to every head before caching them in the new architecture.
"""

from __future__ import annotations

from explorer.core.model.hf_families import QWEN, TRANSFORMERS_DEFAULTS
from explorer.core.model.hf_fields import ConfigFields
from explorer.core.model.hf_patterns import local_layers, null
from explorer.core.model.models import TransformerSpec

# The configuration class each family's defaults come from (for the note that lists them)
CONFIG_CLASSES = {"GptOssForCausalLM": "GptOssConfig", "CohereForCausalLM": "CohereConfig",
                  "DeepseekV2ForCausalLM": "DeepseekV2Config", "FalconForCausalLM": "FalconConfig",
                  "MistralForCausalLM": "MistralConfig", "LlamaForCausalLM": "LlamaConfig",
                  "Qwen2ForCausalLM": "Qwen2Config", "Qwen3ForCausalLM": "Qwen3Config",
                  "Gemma2ForCausalLM": "Gemma2Config", "Gemma3ForCausalLM": "Gemma3TextConfig",
                  "GraniteForCausalLM": "GraniteConfig", "GlmForCausalLM": "GlmConfig",
                  "Glm4ForCausalLM": "Glm4Config", "Llama4ForCausalLM": "Llama4TextConfig"}


def defaults_note(r: ConfigFields, family: str) -> str:
    """The transformers defaults that stood in for fields the file leaves out, "" if none."""
    if not r.defaulted or family not in TRANSFORMERS_DEFAULTS:
        return ""
    listed = ", ".join(f"{key} {_shown(value)}" for key, value in sorted(r.defaulted.items()))
    named = CONFIG_CLASSES.get(family, family)
    return f"read with transformers' {named} defaults for fields the file leaves out: {listed}"


def _shown(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"{value:,}" if isinstance(value, int) else str(value)


def gpt_oss_windows(r: ConfigFields, layers: int) -> tuple[int, ...]:
    """GPT-OSS's windowed layers: those its ``layer_types`` calls "sliding_attention", by
    default (GptOssConfig) the even ones, ``(i + 1) % 2``, alternating with full attention."""
    types = r.config.get("layer_types")
    if types is None:
        return tuple(i for i in range(layers) if (i + 1) % 2)
    if not isinstance(types, list) or len(types) != layers or \
            not all(t in ("sliding_attention", "full_attention") for t in types):
        raise r.error("layer_types", f"must list \"sliding_attention\" or \"full_attention\" for each of the "
                                     f"{layers} layers")
    return tuple(i for i, t in enumerate(types) if t == "sliding_attention")


def falcon(r: ConfigFields, **common: object) -> TransformerSpec:
    """A ``FalconForCausalLM`` config (``common``: ``hf_config``'s naming fields)."""
    if r.flag("alibi", default=False):
        raise r.error("alibi", "ALiBi position biases (Falcon-RW) are not modelled: the app reads Falcon's "
                               "rotary configurations, alibi false")
    d = r.integer("hidden_size", "n_embed")
    heads = r.integer("num_attention_heads", "n_head")
    new = r.flag("new_decoder_architecture", default=False)
    if new:
        kv_heads = r.integer("num_kv_heads", "n_head_kv", default=heads)
    elif r.flag("multi_query", default=True):
        kv_heads = 1
    else:
        kv_heads = heads  # qkv_out_dim 3 × hidden_size
    parallel = r.flag("parallel_attn", default=True)
    # FalconDecoderLayer: num_ln_in_parallel_attn is 2 by default in the new architecture
    in_parallel = r.integer("num_ln_in_parallel_attn", default=2 if new else 1)
    norms = 2 if not parallel or in_parallel == 2 else 1
    return TransformerSpec(
        **common,  # type: ignore[arg-type]
        d_model=d, layers=r.integer("num_hidden_layers", "n_layer"), heads=heads, kv_heads=kv_heads,
        mlp_width=r.integer("ffn_hidden_size", default=4 * d), gated_mlp=False,
        activation=r.activation("activation"), norm="layernorm", vocab=r.integer("vocab_size"),
        tied_embeddings=r.flag("tie_word_embeddings", default=True), bias=r.flag("bias", default=False),
        fused_qkv=True, positions="rope", max_context=r.integer("max_position_embeddings"),
        norms_per_layer=norms, parallel_block=parallel or new)


def refuse_unmodelled(r: ConfigFields, family: str) -> None:
    if family in ("LlamaForCausalLM", "GraniteForCausalLM") and r.flag("mlp_bias", default=False):
        raise r.error("mlp_bias", "biases in the MLP's projections are not modelled (their parameters "
                                  "would be left out of the count): the app reads mlp_bias false only")
    if family == "CohereForCausalLM" and r.flag("use_qk_norm", default=False):
        raise r.error("use_qk_norm", "Cohere's query and key norms (a LayerNorm per head, heads × head_dim "
                                     "weights each) are not modelled: the app reads use_qk_norm false only")


def attention_windows(r: ConfigFields, family: str, layers: int) -> tuple[int, tuple[int, ...]]:
    """The sliding (or chunked) attention window and the layers that use it ((0, ()): none)."""
    if family in ("MistralForCausalLM", "MixtralForCausalLM") and r.has("sliding_window"):
        return r.integer("sliding_window"), tuple(range(layers))
    if family == "Gemma2ForCausalLM":
        return r.integer("sliding_window", default=4096), tuple(range(0, layers, 2))  # even layers local (HF)
    if family == "Gemma3ForCausalLM" and not null(r, "sliding_window"):
        return r.integer("sliding_window"), local_layers(r, layers, "sliding_attention")
    if family == "Llama4ForCausalLM" and not null(r, "attention_chunk_size"):
        return r.integer("attention_chunk_size"), local_layers(r, layers, "chunked_attention")
    if family == "GptOssForCausalLM" and not null(r, "sliding_window"):
        return r.integer("sliding_window"), gpt_oss_windows(r, layers)
    if family in QWEN and r.flag("use_sliding_window", default=False) and r.has("sliding_window"):
        # HF Qwen2Config: with use_sliding_window, layers from max_window_layers on are local.
        first = r.integer("max_window_layers", default=28, minimum=0)
        return r.integer("sliding_window"), tuple(range(min(first, layers), layers))
    return 0, ()


def internlm2_bias(r: ConfigFields, family: str) -> bool:
    """InternLM2's ``bias``: on its fused wqkv and its wo (InternLM2Config: true by default);
    its MLP (w1, w3, w2) has none."""
    return family == "InternLM2ForCausalLM" and r.flag("bias", default=True)
