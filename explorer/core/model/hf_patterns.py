"""Per-layer patterns of Hugging Face configs (``hf_config``): which layers attend within a
window (Gemma 3's five local to one global, Llama 4's chunked RoPE layers) and which hold
the experts (Llama 4's interleaved MoE layers). Each takes the config's reader."""

from __future__ import annotations

from typing import Protocol, TypedDict

from explorer.core.files.datafile import DataFileError


class ConfigReader(Protocol):
    """What these read of ``hf_config``'s reader: the file's own fields and checked values."""

    config: dict[str, object]

    def error(self, field: str | None, message: str) -> DataFileError: ...

    def integer(self, *keys: str, default: int | None = None, minimum: int = 1) -> int: ...


class ExpertFields(TypedDict, total=False):
    """A model's expert fields (``TransformerSpec``'s) as a config gives them."""

    experts: int
    experts_per_token: int
    expert_width: int
    shared_width: int
    shared_gate: bool
    dense_layers: int
    moe_step: int
    router_bias: bool
    expert_bias: bool
    q_lora_rank: int
    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int


def null(r: ConfigReader, key: str) -> bool:
    """Whether the file sets ``key`` to null (no window), which its class's default does not undo."""
    return key in r.config and r.config[key] is None


def local_layers(r: ConfigReader, layers: int, local: str) -> tuple[int, ...]:
    """The layers that attend within a window: those the file's ``layer_types`` calls
    ``local``, else by the family's rule. Gemma 3: all but every ``sliding_window_pattern``-th
    (HF Gemma3's ``is_sliding = (layer_idx + 1) % pattern``); Llama 4: its RoPE layers
    (``no_rope_layers`` 1), by default all but every ``no_rope_layer_interval``-th."""
    types = r.config.get("layer_types")
    if types is not None:
        if not isinstance(types, list) or len(types) != layers or \
                not all(t in (local, "full_attention") for t in types):
            raise r.error("layer_types", f"must list \"{local}\" or \"full_attention\" for each of the "
                                         f"{layers} layers")
        return tuple(i for i, t in enumerate(types) if t == local)
    if local == "chunked_attention":
        rope = r.config.get("no_rope_layers")
        if rope:
            if not isinstance(rope, list) or len(rope) < layers or not all(v in (0, 1) for v in rope):
                raise r.error("no_rope_layers", f"must hold 1 (RoPE, chunked) or 0 for each of the "
                                                f"{layers} layers")
            return tuple(i for i in range(layers) if rope[i])
        interval = r.integer("no_rope_layer_interval")
        return tuple(i for i in range(layers) if (i + 1) % interval)
    pattern = r.integer("sliding_window_pattern")
    return tuple(i for i in range(layers) if (i + 1) % pattern)


def llama4_experts(r: ConfigReader) -> ExpertFields:
    """Llama 4's MoE layers: every ``interleave_moe_layer_step``-th layer (Scout: each,
    Maverick: every other), routed experts and a shared one, each ``intermediate_size`` wide."""
    layers = r.integer("num_hidden_layers")
    step = r.integer("interleave_moe_layer_step")
    if step > layers:
        raise r.error("interleave_moe_layer_step", f"{step} is more than the {layers} layers: no layer "
                                                   "would have experts")
    listed = r.config.get("moe_layers")
    if listed is not None and listed != list(range(step - 1, layers, step)):
        raise r.error("moe_layers", f"only every {step}th layer as the MoE layers is read "
                                    "(interleave_moe_layer_step)")
    width = r.integer("intermediate_size")
    return {"experts": r.integer("num_local_experts"), "experts_per_token": r.integer("num_experts_per_tok"),
            "expert_width": width, "shared_width": width, "moe_step": step}
