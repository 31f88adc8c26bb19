"""A Hugging Face ``config.json`` as a model: the file only, nothing is downloaded.

Every model folder on the Hugging Face Hub has a ``config.json`` naming its architecture
(``architectures``) and its shape. The families read here, and what each adds to a plain
decoder block (``TransformerSpec``):

- ``LlamaForCausalLM`` (Llama 2, 3, 3.1, 3.2; ``mlp_bias`` true is refused),
  ``GraniteForCausalLM`` (IBM Granite 3: Llama's layers with four scaling multipliers that
  change no count), ``MistralForCausalLM`` (a sliding window
  on every layer when ``sliding_window`` is set), ``Qwen2ForCausalLM`` (biases on Q, K,
  V; with ``use_sliding_window`` the layers from ``max_window_layers`` on are windowed, as
  in every Qwen family),
  ``Phi3ForCausalLM`` (fused QKV and gate/up projections: the same weights),
  ``GemmaForCausalLM`` / ``Gemma2ForCausalLM`` (``head_dim`` ≠ hidden / heads, tied
  embeddings; Gemma 2 normalises before and after attention and MLP and alternates a
  4,096-token window with global attention, the even layers windowed),
  ``Gemma3ForCausalLM`` (Gemma 2's four norms plus query and key norms; five windowed
  layers to one global) and ``Gemma3ForConditionalGeneration`` (its ``text_config`` read
  as the decoder; the vision encoder is named as not costed),
  ``GlmForCausalLM`` (GLM-4-9B: biases on Q, K and V) and ``Glm4ForCausalLM`` (GLM-4-0414:
  the same with a norm after attention and after the MLP too),
  ``Llama4ForCausalLM`` / ``Llama4ForConditionalGeneration`` (Llama 4 Scout and Maverick:
  MoE layers every ``interleave_moe_layer_step`` layers with a shared expert, dense ones
  between; chunked attention on three layers in four, costed as a window of a chunk),
  ``GPT2LMHeadModel`` (learned positions, LayerNorm, biases, a plain GELU MLP),
  ``Mistral3ForConditionalGeneration`` (Mistral Small 3.1 / 3.2: the Mistral decoder in its
  ``text_config``; the Pixtral vision tower is named as not costed), ``CohereForCausalLM``
  (Command-R: one LayerNorm without a bias before attention and MLP side by side, tied
  embeddings; ``use_qk_norm`` is refused), ``FalconForCausalLM`` (``hf_readers``: Falcon-7B's
  multi-query and Falcon-40B's new decoder architecture; ALiBi refused) and
  ``InternLM2ForCausalLM`` (one fused wqkv, ``bias`` on it and on wo);
- mixtures of experts: ``MixtralForCausalLM`` (8 experts, 2 per token),
  ``PhimoeForCausalLM`` (Phi-3.5-MoE: Mixtral's shape with LayerNorm and attention biases),
  ``OlmoeForCausalLM`` (OLMoE: 64 small experts, 8 per token, query and key norms),
  ``Qwen2MoeForCausalLM`` (routed experts plus a gated shared expert, Q/K/V biases),
  ``Qwen3MoeForCausalLM`` (an RMS norm on each head's query and key, as in the dense
  ``Qwen3ForCausalLM``),
  ``DeepseekV3ForCausalLM`` (multi-head latent attention, a shared expert, the first three
  layers dense, a bias on the router's scores) and ``DeepseekV2ForCausalLM`` (the same
  blocks; V2-Lite projects queries without compressing them, ``q_lora_rank`` null; routing
  within groups picks the same number of experts per token), ``DeepseekForCausalLM``
  (deepseek-moe v1: ordinary attention, ``first_k_dense_replace`` dense layers, shared
  experts) and ``GptOssForCausalLM`` (GPT-OSS: a 128-token window on alternate layers, one
  learned sink logit per head, biases on Q, K, V, O, the router and every expert).
  ``PhiMoEForCausalLM`` is Phi-3.5-MoE's name for ``PhimoeForCausalLM``; MiniMax's
  families (linear attention) are refused by name (``REFUSED``).

A config is read as transformers reads it: by its ``architectures``, else its
``model_type`` (``MODEL_TYPES``); a field it leaves out takes the default of transformers'
configuration class where the family has one here (``TRANSFORMERS_DEFAULTS``). Anything
else, a field of the wrong kind, or a missing one without a default, is refused with the
file and the field named: nothing is half-read. The defaults a file was read with are listed
in the model's note (``hf_readers.defaults_note``).

The parameter counts these give match the published ones (tests/core/test_hf_config.py:
Mistral 7B 7.24 B, Mixtral 8×7B 46.7 B total and 12.9 B active, Qwen2.5 7B 7.62 B, Gemma 2
9B 9.24 B, Qwen3-30B-A3B 30.5 B and 3.3 B active, DeepSeek-V3 671 B and 37 B active…).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from explorer.core.files.datafile import DataFileError, brief, read_text
from explorer.core.model.applicability import Phase
from explorer.core.model.hf_experts import experts
from explorer.core.model.hf_families import (
    ALIASES,
    DEEPSEEK,
    DEEPSEEK_MOE,
    FAMILIES,
    GLM,
    LLAMA_ATTENTION,
    MODEL_TYPES,
    NESTED,
    NESTED_TEXT,
    QK_NORM,
    REFUSED,
    REFUSED_TYPES,
    TRANSFORMERS_DEFAULTS,
)
from explorer.core.model.hf_fields import ConfigFields
from explorer.core.model.hf_names import folder_name, hub_name, repository_of
from explorer.core.model.hf_quant_file import with_quant_file
from explorer.core.model.hf_readers import (
    attention_windows,
    defaults_note,
    falcon,
    internlm2_bias,
    refuse_unmodelled,
)
from explorer.core.model.models import ModelSpec, TransformerSpec
from explorer.core.model.quantization import Quantization, QuantizationError
from explorer.core.model.quantization_formats import read_quantization

if TYPE_CHECKING:
    from explorer.core.model.custom import CustomSpec
    from explorer.core.model.workload import WorkloadParams

CONFIG_MODEL = "config"  # the model id of a session's model read from a config.json
LISTED_PREFIXES = ("hf-", "gguf-")  # the ids ``models`` lists from files (``local_models``)
SOURCE = "https://huggingface.co/docs/transformers/main_classes/configuration"

def read_config_file(path: str | Path, name: str = "", named: bool = False) -> TransformerSpec:
    """The model a ``config.json`` describes; a ``DataFileError`` naming the file and field.
    ``name``: what to call it when the file names no ``_name_or_path``, or (``named``: a
    cache's "org/name" repository, which says it better than a leftover training path or a
    fine-tune's base model) whatever the file says. By default where the file lies names it
    so, the same wherever it is opened from (``hf_names``)."""
    path = Path(path)
    if not name:  # where it lies names it: a cache's repository (whatever the file says), else its folder
        where = Path(os.path.abspath(path))
        repository = repository_of(where)
        named = bool(repository)
        folder = folder_name(where.parent) if where.name.lower() == "config.json" else where.stem
        name = repository or folder
    return spec_from_config_text(with_quant_file(read_text(path), path), str(path), name, named)


def read_model_file(path: str | Path, name: str = "") -> TransformerSpec:
    """The model a config.json describes (``read_config_file``) or a GGUF file holds
    (``gguf_models``: its weights at their stored types, the file kept by reference)."""
    if str(path).lower().endswith(".gguf"):
        from explorer.core.model.gguf_models import read_gguf_model

        return read_gguf_model(path)
    return read_config_file(path, name)


def chosen_model(models: Mapping[str, ModelSpec], ident: str | None,
                 config_path: str | None = None) -> ModelSpec:
    """The preset ``ident`` in ``models``, or the config.json listed as ``ident`` (an "hf-"
    id: shipped or in the Hugging Face cache, ``local_models``; an UnknownIdError names close
    matches; a "gguf-" id: a GGUF file found on this machine), or, given ``config_path``,
    the model that config.json (or GGUF file) describes (a DataFileError names the file
    and field)."""
    if config_path:
        return read_model_file(config_path)
    if ident is None:
        raise ValueError("no model: a preset's id or a config.json is needed")
    if ident in models or not ident.startswith(LISTED_PREFIXES):
        return models[ident]
    from explorer.core.model.local_models import find_model  # (it reads the cache: only when asked)

    return find_model(ident, list(models))


def spec_from_config_text(text: str, origin: str, name: str = "", named: bool = False) -> TransformerSpec:
    try:
        config = json.loads(text)
    except ValueError as exc:
        raise DataFileError(origin, f"is not valid JSON: {exc}") from None
    except RecursionError:
        raise DataFileError(origin, "is nested too deeply to be a model configuration") from None
    if not isinstance(config, dict):
        raise DataFileError(origin, "must hold a JSON object (a Hugging Face config.json)")
    if name and (named or not hub_name(_given_name(config))):
        config = {**config, "_name_or_path": name}
    return spec_from_config(config, origin)


def spec_from_config(config: dict[str, object], origin: str) -> TransformerSpec:
    family = _family(config, origin)
    unmodelled = ""
    if family in NESTED:  # a multimodal model: its text decoder, named and stored as the file says
        outer = family
        family, unmodelled = NESTED[family]
        config = _text_config(config, origin, family, NESTED_TEXT.get(outer, {}))
    r = ConfigFields(config, origin, TRANSFORMERS_DEFAULTS.get(family))
    if family == "GPT2LMHeadModel":
        spec = _gpt2(r)
    elif family == "FalconForCausalLM":
        spec = falcon(r, **_common(r, family))
    else:
        spec = _decoder(r, family)
    _check(r, spec)
    if family in DEEPSEEK:  # DeepSeek counts activated parameters without the input embedding table
        spec = replace(spec, active_without_embedding=True)
    if family == "Llama4ForCausalLM" and spec.window_layers:
        chunked = (f"its chunked attention ({spec.sliding_window:,}-token chunks on "
                   f"{len(spec.window_layers)} of {spec.layers} layers) is costed as a window of a whole "
                   "chunk, the most a token attends to")
        unmodelled = "; ".join(filter(None, (unmodelled, chunked)))
    unmodelled = "; ".join(filter(None, (unmodelled, defaults_note(r, family))))
    return replace(spec, unmodelled=unmodelled) if unmodelled else spec


def _text_config(config: dict[str, object], origin: str, family: str,
                 default: Mapping[str, object]) -> dict[str, object]:
    """A multimodal config's ``text_config`` (``default``, the text model transformers'
    multimodal class builds, when it has none) read as ``family``, with the file's name and
    stored precision."""
    text = config.get("text_config") or dict(default)
    if not isinstance(text, dict):
        raise DataFileError(origin, f"must be an object (the text model's configuration), got {brief(text)}",
                            field="text_config")
    kept = ("_name_or_path", "torch_dtype", "dtype", "quantization_config")
    outer = {k: config[k] for k in kept if k in config}
    return {**outer, **text, "architectures": [family]}


def _family(config: dict[str, object], origin: str) -> str:
    """The family a config is read as: its ``architectures``' first class, else its
    ``model_type``'s (as transformers' AutoConfig goes by model_type)."""
    r = ConfigFields(config, origin)
    architectures = config.get("architectures")
    named = architectures[0] if isinstance(architectures, list) and architectures and \
        isinstance(architectures[0], str) else None
    if named in FAMILIES:
        return named
    if named in ALIASES:
        return ALIASES[named]
    model_type = config.get("model_type")
    refused = named if named in REFUSED else \
        REFUSED_TYPES.get(model_type) if isinstance(model_type, str) else None
    if refused:
        raise r.error("architectures", f"{refused} is not read: {REFUSED[refused]}")
    if isinstance(model_type, str) and model_type in MODEL_TYPES:
        return MODEL_TYPES[model_type]
    if named is None:
        raise r.error("architectures", "is missing: a config.json names its model class there "
                                       "(e.g. [\"LlamaForCausalLM\"]) or its model_type")
    raise r.error("architectures", f"{brief(named)} is not a family this app reads "
                                   f"(it reads {', '.join(FAMILIES)})")


def _given_name(config: dict[str, object]) -> str:
    """The config's own ``_name_or_path``, "" when it names nothing ("", ".", "/")."""
    raw = config.get("_name_or_path")
    given = raw.strip().rstrip("/") if isinstance(raw, str) else ""
    return "" if given == "." else given


def _name(r: ConfigFields, family: str) -> str:
    """A name from the file: its ``_name_or_path`` (a path there: the folder that names the
    model, ``hf_names``), else the file's own name, or its folder's for a ``config.json`` (a
    cache's repository; not a snapshot's hash nor a checkpoint-N: the folder above), else
    the family."""
    given = hub_name(_given_name(r.config))
    if given:
        return given.rsplit("/", 1)[-1][:80]
    path = Path(r.origin)
    if path.suffix.lower() != ".json":
        return family
    if path.name.lower() != "config.json":
        return path.stem[:80]  # mixtral-8x7b.json: two configs in one folder keep their names
    return folder_name(path.parent).rsplit("/", 1)[-1][:80] or family


def _ident(name: str) -> str:
    """``hf-`` and the name ("ORG/NAME" keeps the organisation); a path as ``hf_names`` reads it."""
    name = hub_name(name) or name
    return "hf-" + (re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "model")


class _Common(TypedDict):
    """A model's fields (``TransformerSpec``'s) that say where it came from."""

    id: str
    name: str
    source: str
    published_parameters: int
    parameters_source: str
    origin: str
    config: str
    file_dtype: str
    quantization: Quantization | None


TORCH_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32", "float": "fp32", "half": "fp16"}


def _common(r: ConfigFields, family: str) -> _Common:
    name = _name(r, family)
    given = _given_name(r.config)
    # An "org/name" id keeps the organisation (two caches' "x" differ); a bare name is as named.
    ident = _ident(given if given.count("/") == 1 and not given.startswith((".", "/")) else name)
    stored = r.config.get("torch_dtype", r.config.get("dtype"))
    # The name goes with the content (a session holds the content, not the file's folder).
    kept = r.config if isinstance(r.config.get("_name_or_path"), str) else {**r.config, "_name_or_path": name}
    canonical = json.dumps(kept, sort_keys=True, separators=(",", ":"))
    return {"id": ident, "name": name, "source": SOURCE, "published_parameters": 0,
            "parameters_source": SOURCE, "origin": r.origin, "config": canonical,
            "file_dtype": TORCH_DTYPES.get(stored, "") if isinstance(stored, str) else "",
            "quantization": _quantization(r)}


def _quantization(r: ConfigFields) -> Quantization | None:
    """The file's ``quantization_config`` read (``quantization``), its faults named."""
    try:
        return read_quantization(r.config)
    except QuantizationError as exc:
        raise r.error("quantization_config", str(exc)) from None


def _decoder(r: ConfigFields, family: str) -> TransformerSpec:
    refuse_unmodelled(r, family)
    cohere = family == "CohereForCausalLM"  # one LayerNorm (no bias) before attention and MLP side by side
    gpt_oss = family == "GptOssForCausalLM"
    d = r.integer("hidden_size")
    layers = r.integer("num_hidden_layers")
    heads = r.integer("num_attention_heads")
    kv_heads = r.integer("num_key_value_heads", default=heads)
    head_dim = r.integer("head_dim", default=0)  # null: the usual width; 0 is no width at all
    if head_dim * heads == d:
        head_dim = 0  # the usual width: nothing to override
    gemma = family.startswith("Gemma")
    moe = family in ("MixtralForCausalLM", "PhimoeForCausalLM", "OlmoeForCausalLM", "Qwen2MoeForCausalLM",
                     "Qwen3MoeForCausalLM", "Llama4ForCausalLM", "GptOssForCausalLM", *DEEPSEEK_MOE)
    window, window_layers = attention_windows(r, family, layers)
    return TransformerSpec(
        **_common(r, family),
        d_model=d, layers=layers, heads=heads, kv_heads=kv_heads,
        mlp_width=r.integer("intermediate_size_mlp" if family == "Llama4ForCausalLM" else "intermediate_size",
                            default=0 if moe else None, minimum=0),
        gated_mlp=True,
        activation=r.activation("hidden_activation", "hidden_act") if gemma else r.activation("hidden_act"),
        norm="layernorm" if family in ("PhimoeForCausalLM", "CohereForCausalLM") else "rmsnorm",
        norm_bias=not cohere,  # CohereLayerNorm: a weight, no bias (modeling_cohere.py)
        parallel_block=cohere,
        vocab=r.integer("vocab_size"),
        tied_embeddings=r.flag("tie_word_embeddings", default=gemma),
        bias=False,
        fused_qkv=family in ("Phi3ForCausalLM", "InternLM2ForCausalLM"),  # InternLM2: one wqkv
        positions="rope",
        max_context=r.integer("max_position_embeddings"),
        head_dim_value=head_dim,
        qkv_bias=family in ("Qwen2ForCausalLM", "Qwen2MoeForCausalLM") or internlm2_bias(r, family)
        or (family in (*LLAMA_ATTENTION, *GLM)
            and r.flag("attention_bias", default=family in ("PhimoeForCausalLM", *GLM))),
        # Llama's attention (and the families built on it) puts attention_bias on o_proj too;
        # GLM's output projection has none (GlmAttention at 008e5743)
        o_bias=internlm2_bias(r, family)
        or (family in LLAMA_ATTENTION and r.flag("attention_bias", default=family == "PhimoeForCausalLM")),
        attention_sinks=gpt_oss,  # GptOssAttention.sinks: one learned logit per head
        qk_norm=family in QK_NORM,
        norms_per_layer=4 if family in ("Gemma2ForCausalLM", "Gemma3ForCausalLM", "Glm4ForCausalLM")
        else 1 if cohere else 2,
        sliding_window=window,
        window_layers=window_layers,
        **experts(r, family),
    )


def _gpt2(r: ConfigFields) -> TransformerSpec:
    d = r.integer("n_embd", "hidden_size")
    return TransformerSpec(
        **_common(r, "GPT2LMHeadModel"),
        d_model=d, layers=r.integer("n_layer", "num_hidden_layers"), heads=r.integer("n_head"),
        kv_heads=r.integer("n_head"), mlp_width=r.integer("n_inner", default=4 * d), gated_mlp=False,
        activation=r.activation("activation_function"), norm="layernorm", vocab=r.integer("vocab_size"),
        tied_embeddings=r.flag("tie_word_embeddings", default=True), bias=True, fused_qkv=True,
        positions="learned", max_context=r.integer("n_positions", "n_ctx"),
        dropout=True,  # GPT-2's configs train with dropout (resid_pdrop, attn_pdrop: 0.1 by default)
    )


def _check(r: ConfigFields, spec: TransformerSpec) -> None:
    if not spec.head_dim_value and spec.d_model % spec.heads:
        raise r.error("num_attention_heads", f"hidden_size {spec.d_model} is not divisible by "
                                             f"{spec.heads} heads")
    if spec.heads % spec.kv_heads:
        raise r.error("num_key_value_heads", f"{spec.heads} heads cannot be shared evenly by "
                                             f"{spec.kv_heads} KV heads")
    if spec.moe and spec.experts_per_token > spec.experts:
        raise r.error("num_experts_per_tok", f"{spec.experts_per_token} experts per token but only "
                                             f"{spec.experts} experts")
    if not spec.moe and not spec.mlp_width:
        raise r.error("intermediate_size", "is missing")


def stored_precision(params: WorkloadParams, model: ModelSpec | CustomSpec) -> WorkloadParams:
    """``params`` with a config.json's weights in the precision its file stores them in
    (``torch_dtype``) where no weight precision was given: the default for a model the user
    opens (a preset keeps the compute precision). When the user gives another, the analysis
    notes what the file says. A quantized checkpoint keeps no weight precision: its
    ``quantization`` sets each weight's bytes (``quantization.applied``)."""
    stored = getattr(model, "file_dtype", "")
    if getattr(model, "quantization", None) is not None:
        return params
    if not stored or params.weight_dtype is not None or params.phase == Phase.TRAIN or stored == params.dtype:
        return params
    return replace(params, weight_dtype=stored)
