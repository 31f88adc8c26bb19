"""Each mixture-of-experts family's experts as its Hugging Face config gives them
(``hf_config``'s decoder takes these fields): how many, how many a token is routed to, their
width, shared experts, the first dense layers, router and expert biases, and DeepSeek V2/V3's
latent attention ranks, which those configs give beside their experts."""

from __future__ import annotations

from explorer.core.model.hf_families import DEEPSEEK, DEEPSEEK_MOE
from explorer.core.model.hf_fields import ConfigFields
from explorer.core.model.hf_patterns import ExpertFields, llama4_experts, null


def experts(r: ConfigFields, family: str) -> ExpertFields:
    """The expert fields of a mixture-of-experts family's config ({} for a dense one)."""
    if family in DEEPSEEK_MOE:  # V2 routes within groups (n_group, topk_group): the same work per token
        every = r.integer("moe_layer_freq", default=1)
        if every != 1:
            raise r.error("moe_layer_freq", "only configurations with an MoE MLP in every layer after "
                                            "the first dense ones are read")
        # DeepseekMoE: routed experts and n_shared_experts × moe_intermediate_size of shared MLP;
        # the layers before first_k_dense_replace keep a dense MLP of intermediate_size
        routed: ExpertFields = {
            "experts": r.integer("n_routed_experts"), "experts_per_token": r.integer("num_experts_per_tok"),
            "expert_width": r.integer("moe_intermediate_size"),
            "shared_width": r.integer("n_shared_experts", default=0, minimum=0)
            * r.integer("moe_intermediate_size"),
            "dense_layers": r.integer("first_k_dense_replace", default=0, minimum=0)}
        if family not in DEEPSEEK:  # deepseek-moe (v1): ordinary multi-head attention
            return routed
        return {**routed,
                "router_bias": r.config.get("topk_method") == "noaux_tc",
                # V2-Lite's null q_lora_rank (no query compression) stands, DeepseekV2Config's 1,536 aside
                "q_lora_rank": 0 if null(r, "q_lora_rank")
                else r.integer("q_lora_rank", default=0, minimum=0),
                "kv_lora_rank": r.integer("kv_lora_rank"),
                "qk_nope_head_dim": r.integer("qk_nope_head_dim"),
                "qk_rope_head_dim": r.integer("qk_rope_head_dim"),
                "v_head_dim": r.integer("v_head_dim")}
    if family in ("MixtralForCausalLM", "PhimoeForCausalLM", "OlmoeForCausalLM"):  # Mixtral-shaped
        return {"experts": r.integer("num_experts" if family == "OlmoeForCausalLM" else "num_local_experts"),
                "experts_per_token": r.integer("num_experts_per_tok"),
                "expert_width": r.integer("intermediate_size")}
    if family == "Llama4ForCausalLM":  # one shared expert as wide as the routed ones
        return llama4_experts(r)
    if family == "GptOssForCausalLM":  # GptOssTopKRouter: weight and bias; GptOssExperts: biases too
        return {"experts": r.integer("num_local_experts"),
                "experts_per_token": r.integer("num_experts_per_tok"),
                "expert_width": r.integer("intermediate_size"), "router_bias": True, "expert_bias": True}
    if family in ("Qwen2MoeForCausalLM", "Qwen3MoeForCausalLM"):
        every = r.integer("decoder_sparse_step", default=1)
        if every != 1:
            raise r.error("decoder_sparse_step",
                          "only configurations with an MoE MLP in every layer are read")
        if r.config.get("mlp_only_layers"):
            raise r.error("mlp_only_layers", "only configurations with an MoE MLP in every layer are read "
                                             "(no dense-only layers)")
        shared = r.integer("shared_expert_intermediate_size", default=0, minimum=0)
        return {"experts": r.integer("num_experts"),
                "experts_per_token": r.integer("num_experts_per_tok"),
                "expert_width": r.integer("moe_intermediate_size"), "shared_width": shared,
                "shared_gate": shared > 0}
    return {}
