"""The blocks a transformer is made of, costed once: an attention block and an MLP block.
Presets (``workload``) and custom layer stacks (``custom``) both build their ops from these,
so a custom stack that rebuilds a preset costs exactly the same.

Each block is a list of ``Part``s (an op without the layers it repeats in); the caller
names them and places them in its layers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from explorer.core.model import ops as op
from explorer.core.model.applicability import Phase

if TYPE_CHECKING:
    from explorer.core.model.models import TransformerSpec
    from explorer.core.model.workload import WorkloadParams


class Part(NamedTuple):
    name: str
    role: str
    unit: str
    cost: op.Cost
    detail: str = ""
    vector_flops: op.Size = 0


def attention(p: WorkloadParams, batch: op.Size, d_model: int, heads: int, kv_heads: int, head_dim: int,
              bias: bool = False, fused_qkv: bool = False, qkv_bias: bool = False,
              qk_norm: bool = False, window: int = 0) -> list[Part]:
    """Q, K, V projections (K and V written to the cache at its precision), the score and
    value products (naive: the score matrix written out and read back by a softmax;
    fused: softmax on chip, its FLOPs on the vector units), and the output projection.
    ``p``: WorkloadParams. ``bias``: every projection has one; ``qkv_bias``: Q, K and V only;
    ``qk_norm``: an RMS norm over each head's query and key; ``window``: each query attends
    over at most that many tokens (a sliding window; 0: all)."""
    projections = attention_projections(p, batch, d_model, heads, kv_heads, head_dim, bias, fused_qkv,
                                        qkv_bias, qk_norm)
    return projections[:-1] + attention_core(p, batch, heads, kv_heads, head_dim, window) + projections[-1:]


def attention_projections(p: WorkloadParams, batch: op.Size, d_model: int, heads: int, kv_heads: int,
                          head_dim: int,
                          bias: bool = False, fused_qkv: bool = False, qkv_bias: bool = False,
                          qk_norm: bool = False, o_bias: bool = False) -> list[Part]:
    """The projections of an attention block, the output projection last (with a bias
    where ``bias`` or ``o_bias``)."""
    ab, wb, kb = p.act_bytes, p.weight_bytes, p.kv_bytes
    n = batch * p.device_tokens
    q_dim, kv_dim = heads * head_dim, kv_heads * head_dim
    in_bias = bias or qkv_bias
    parts = []
    if fused_qkv:
        q_and_kv = op.linear(n, d_model, q_dim + 2 * kv_dim, ab, wb, in_bias)
        # K and V land in the cache at the KV precision: correct the output bytes for them.
        cost = q_and_kv._replace(bytes=q_and_kv.bytes + 2 * n * kv_dim * (kb - ab))
        parts.append(Part("qkv_proj", "qkv_proj", op.MATRIX, cost, f"{d_model} → {q_dim + 2 * kv_dim}"))
    else:
        parts.append(Part("q_proj", "q_proj", op.MATRIX, op.linear(n, d_model, q_dim, ab, wb, in_bias),
                          f"{d_model} → {q_dim}"))
        parts += [Part(name, name, op.MATRIX, op.linear(n, d_model, kv_dim, ab, wb, in_bias, out_bytes=kb),
                       f"{d_model} → {kv_dim}") for name in ("k_proj", "v_proj")]
    if qk_norm:  # over the queries and the new keys; a head_dim-wide scale for each of the two
        cost = op.norm(n * (heads + kv_heads), head_dim, "rmsnorm", ab, wb)
        cost = cost._replace(bytes=cost.bytes + head_dim * wb, weights=cost.weights + head_dim * wb)
        parts.append(Part("qk_norm", "norm", op.VECTOR, cost, "rmsnorm per head of Q and K"))
    parts.append(Part("o_proj", "o_proj", op.MATRIX, op.linear(n, q_dim, d_model, ab, wb, bias or o_bias),
                      f"{q_dim} → {d_model}"))
    return parts


def attention_core(p: WorkloadParams, batch: op.Size, heads: int, kv_heads: int, head_dim: int,
                   window: int = 0,
                   v_dim: int | None = None, shared: bool = False) -> list[Part]:
    """The score and value products (and the softmax, when written out) over the cached
    tokens, or the last ``window`` of them. ``v_dim``: the values' width when it differs
    from the keys'; ``shared``: keys and values are one cached tensor (latent attention),
    which a fused kernel reads once."""
    ab, kb = p.act_bytes, p.kv_bytes
    t, kv_len = p.device_tokens, p.kv_tokens  # with context parallel: seq/cp queries, every key
    if window:
        kv_len = min(kv_len, window)
    parts = []
    naive = p.attention == "naive"
    shape = (batch, heads, t, kv_len)
    score = op.attention_scores(*shape, head_dim, kv_heads, ab, kb, materialise=naive)
    value = op.attention_values(*shape, v_dim or head_dim, kv_heads, ab, kb, materialise=naive)
    if shared and not naive:  # the values are part of what the scores already read
        value = op.Cost(value.flops, value.bytes - value.cache, value.weights)
    softmax = op.SOFTMAX_FLOPS_PER_ELEMENT * batch * heads * t * kv_len
    if p.causal and p.phase != Phase.DECODE:  # only the pairs the mask keeps are computed
        # with context parallel each device's two chunks hold 1/cp of the pairs (Llama 3's balance)
        pairs = (causal_pairs(p.prefix + p.query_tokens, window or kv_len)
                 - causal_pairs(p.prefix, window or kv_len)) / p.cp if p.cp > 1 else \
            causal_pairs(p.prefix + t, window or kv_len) - causal_pairs(p.prefix, window or kv_len)
        score = score._replace(flops=2 * batch * heads * pairs * head_dim)
        value = value._replace(flops=2 * batch * heads * pairs * (v_dim or head_dim))
        softmax = op.SOFTMAX_FLOPS_PER_ELEMENT * batch * heads * pairs
    span = f"{t} × {kv_len} per head" + (f" (window of {window:,})" if window else "") + \
        (", causal: masked pairs skipped" if p.causal and p.phase != Phase.DECODE else "")
    if naive:
        parts += [Part("attn_score", "attn_score", op.MATRIX, score, f"Q·Kᵀ, {span}, written out"),
                  Part("attn_softmax", "attn_softmax", op.VECTOR,
                       op.attention_softmax(*shape, ab)._replace(flops=softmax), f"{span}, read and written"),
                  Part("attn_value", "attn_value", op.MATRIX, value, f"P·V, {span}")]
    else:
        parts += [Part("attn_score", "attn_score", op.MATRIX, score._replace(flops=score.flops + softmax),
                       f"Q·Kᵀ + softmax on chip, {span}", softmax),
                  Part("attn_value", "attn_value", op.MATRIX, value, f"P·V on chip, {span}")]
    return parts


def causal_pairs(tokens: int, window: int) -> int:
    """Query-key pairs a causal mask keeps when ``tokens`` tokens attend over themselves,
    each over at most ``window`` (itself included): t(t+1)/2 without a window. The prompt
    after a cached prefix of P keeps causal_pairs(P + t) − causal_pairs(P): each of its
    tokens attends over the prefix and the prompt before it."""
    if tokens <= window:
        return tokens * (tokens + 1) // 2
    return window * (window + 1) // 2 + (tokens - window) * window


def latent_attention(p: WorkloadParams, batch: op.Size, m: TransformerSpec) -> list[Part]:
    """Multi-head latent attention (DeepSeek-V2/V3; ``m`` a TransformerSpec with its ranks),
    as inference runs it. The queries go down to q_lora and up again; each new token's
    latent and rotary key (kv_lora + rope values) go to the cache. Decode absorbs the key
    and value up-projections into the query and the output, so attention runs over the
    cached latent itself (one tensor for keys and values, shared by every head); prefill
    expands the latent into per-head keys and values first."""
    ab, wb, kb = p.act_bytes, p.weight_bytes, p.kv_bytes
    d, h = m.d_model, m.heads
    nope, rope, v, rank = m.qk_nope_head_dim, m.qk_rope_head_dim, m.v_head_dim, m.kv_lora_rank
    n = batch * p.device_tokens
    if m.q_lora_rank:
        parts = [Part("q_down", "q_proj", op.MATRIX, op.linear(n, d, m.q_lora_rank, ab, wb),
                      f"{d} → {m.q_lora_rank}"),
                 Part("q_norm", "norm", op.VECTOR, op.norm(n, m.q_lora_rank, "rmsnorm", ab, wb), "rmsnorm"),
                 Part("q_up", "q_proj", op.MATRIX, op.linear(n, m.q_lora_rank, h * (nope + rope), ab, wb),
                      f"{m.q_lora_rank} → {h}×{nope + rope}")]
    else:
        parts = [Part("q_proj", "q_proj", op.MATRIX, op.linear(n, d, h * (nope + rope), ab, wb),
                      f"{d} → {h}×{nope + rope}")]
    parts += [Part("kv_down", "k_proj", op.MATRIX, op.linear(n, d, rank + rope, ab, wb, out_bytes=kb),
                   f"{d} → {rank} latent + {rope} rotary key, to the cache"),
              Part("kv_norm", "norm", op.VECTOR, op.norm(n, rank, "rmsnorm", ab, wb), "rmsnorm")]
    if p.phase == Phase.DECODE:
        absorb = op.linear(n * h, nope, rank, ab, 0)
        weights = h * nope * rank * wb
        parts.append(Part("k_up_absorbed", "q_proj", op.MATRIX,
                          absorb._replace(bytes=absorb.bytes + weights, weights=weights),
                          f"each head's query {nope} → {rank} (the key up-projection, absorbed)"))
        parts += attention_core(p, batch, h, 1, rank + rope, v_dim=rank, shared=True)
        out = op.linear(n * h, rank, v, ab, 0)
        weights = h * rank * v * wb
        parts.append(Part("v_up_absorbed", "o_proj", op.MATRIX,
                          out._replace(bytes=out.bytes + weights, weights=weights),
                          f"each head's output {rank} → {v} (the value up-projection, absorbed)"))
    else:
        parts.append(Part("kv_up", "v_proj", op.MATRIX,
                          op.linear(batch * p.kv_tokens, rank, h * (nope + v), ab, wb),
                          f"{rank} → {h}×({nope} key + {v} value), every token"))
        parts += attention_core(p, batch, h, h, nope + rope, v_dim=v)
    parts.append(Part("o_proj", "o_proj", op.MATRIX, op.linear(n, h * v, d, ab, wb), f"{h}×{v} → {d}"))
    return parts


def mlp(p: WorkloadParams, n: op.Size, d_model: int, width: int, gated: bool, activation: str,
        bias: bool = False) -> list[Part]:
    """A gated MLP (gate and up projections, activation(gate) × up, down projection) or a
    plain one (fc1, activation, fc2), for ``n`` tokens."""
    ab, wb = p.act_bytes, p.weight_bytes
    act = op.ACTIVATION_FLOPS_PER_ELEMENT[activation]
    up, down = f"{d_model} → {width}", f"{width} → {d_model}"
    if gated:
        return [Part("gate_proj", "gate_proj", op.MATRIX, op.linear(n, d_model, width, ab, wb, bias), up),
                Part("up_proj", "up_proj", op.MATRIX, op.linear(n, d_model, width, ab, wb, bias), up),
                Part("activation", "activation", op.VECTOR, op.elementwise(n * width, act + 1, 2, ab),
                     f"{activation}(gate) × up"),
                Part("down_proj", "down_proj", op.MATRIX, op.linear(n, width, d_model, ab, wb, bias), down)]
    return [Part("fc1", "fc1", op.MATRIX, op.linear(n, d_model, width, ab, wb, bias), up),
            Part("activation", "activation", op.VECTOR, op.elementwise(n * width, act, 1, ab), activation),
            Part("fc2", "fc2", op.MATRIX, op.linear(n, width, d_model, ab, wb, bias), down)]


def moe(p: WorkloadParams, n: op.Size, d_model: int, experts: int, per_token: int, width: int,
        activation: str,
        shared_width: int = 0, shared_gate: bool = False, router_bias: bool = False) -> list[Part]:
    """A mixture-of-experts MLP (gated experts) for ``n`` tokens: the router (a d → E
    projection), each token's ``per_token`` experts (gate and up fused, the activation,
    down), and the shared experts every token goes through. The routed experts' weights
    read are those of the distinct experts the step's tokens touch
    (``ops.experts_touched``, under ``p.routing``)."""
    ab, wb = p.act_bytes, p.weight_bytes
    pairs = n * per_token  # token-expert pairs
    touched = op.experts_touched(experts, per_token, n, p.routing)

    def routed(cost: op.Cost, weights_per_expert: int) -> op.Cost:
        weights = touched * weights_per_expert * wb
        return cost._replace(bytes=cost.bytes - cost.weights + weights, weights=weights)

    act = op.ACTIVATION_FLOPS_PER_ELEMENT[activation]
    touched_text = "all" if p.routing == "all" else "expected distinct (uniform routing)"
    router = op.linear(n, d_model, experts, ab, wb)
    if router_bias:  # a bias per expert on the scores, read with the weights (DeepSeek-V3)
        router = router._replace(bytes=router.bytes + experts * wb, weights=router.weights + experts * wb)
    parts = [Part("router", "router", op.MATRIX, router, f"{d_model} → {experts}"),
             Part("expert_up", "expert_up", op.MATRIX,
                  routed(op.linear(pairs, d_model, 2 * width, ab, wb), 2 * d_model * width),
                  f"{per_token} of {experts} experts per token, gate and up {d_model} → 2×{width}; "
                  f"weights of the {touched_text} experts"),
             Part("expert_activation", "activation", op.VECTOR, op.elementwise(pairs * width, act + 1, 2, ab),
                  f"{activation}(gate) × up"),
             Part("expert_down", "expert_down", op.MATRIX,
                  routed(op.linear(pairs, width, d_model, ab, wb), width * d_model),
                  f"{width} → {d_model}, weighted sum of the {per_token}")]
    if shared_width:
        parts += [Part("shared_up", "shared_up", op.MATRIX, op.linear(n, d_model, 2 * shared_width, ab, wb),
                       f"shared experts, gate and up {d_model} → 2×{shared_width}"),
                  Part("shared_activation", "activation", op.VECTOR,
                       op.elementwise(n * shared_width, act + 1, 2, ab), f"{activation}(gate) × up"),
                  Part("shared_down", "shared_down", op.MATRIX, op.linear(n, shared_width, d_model, ab, wb),
                       f"{shared_width} → {d_model}")]
        if shared_gate:
            parts.append(Part("shared_gate", "router", op.MATRIX, op.linear(n, d_model, 1, ab, wb),
                              f"{d_model} → 1, sigmoid gate on the shared output"))
    return parts
