"""The blocks a transformer is made of, costed once: an attention block and an MLP block.
Presets (``workload``) and custom layer stacks (``custom``) both build their ops from these,
so a custom stack that rebuilds a preset costs exactly the same.

Each block is a list of ``Part``s (an op without the layers it repeats in); the caller
names them and places them in its layers.
"""

from __future__ import annotations

from typing import NamedTuple

from explorer.core import ops as op


class Part(NamedTuple):
    name: str
    role: str
    unit: str
    cost: op.Cost
    detail: str = ""
    vector_flops: op.Size = 0


def attention(p, batch, d_model: int, heads: int, kv_heads: int, head_dim: int,
              bias: bool = False, fused_qkv: bool = False) -> list[Part]:
    """Q, K, V projections (K and V written to the cache at its precision), the score and
    value products (naive: the score matrix written out and read back by a softmax;
    fused: softmax on chip, its FLOPs on the vector units), and the output projection.
    ``p``: WorkloadParams."""
    ab, wb, kb = p.act_bytes, p.weight_bytes, p.kv_bytes
    t, kv_len = p.query_tokens, p.kv_tokens
    n = batch * t
    q_dim, kv_dim = heads * head_dim, kv_heads * head_dim
    parts = []
    if fused_qkv:
        q_and_kv = op.linear(n, d_model, q_dim + 2 * kv_dim, ab, wb, bias)
        # K and V land in the cache at the KV precision: correct the output bytes for them.
        cost = q_and_kv._replace(bytes=q_and_kv.bytes + 2 * n * kv_dim * (kb - ab))
        parts.append(Part("qkv_proj", "qkv_proj", op.MATRIX, cost, f"{d_model} → {q_dim + 2 * kv_dim}"))
    else:
        parts.append(Part("q_proj", "q_proj", op.MATRIX, op.linear(n, d_model, q_dim, ab, wb, bias),
                          f"{d_model} → {q_dim}"))
        parts += [Part(name, name, op.MATRIX, op.linear(n, d_model, kv_dim, ab, wb, bias, out_bytes=kb),
                       f"{d_model} → {kv_dim}") for name in ("k_proj", "v_proj")]
    naive = p.attention == "naive"
    shape = (batch, heads, t, kv_len)
    score = op.attention_scores(*shape, head_dim, kv_heads, ab, kb, materialise=naive)
    value = op.attention_values(*shape, head_dim, kv_heads, ab, kb, materialise=naive)
    span = f"{t} × {kv_len} per head"
    if naive:
        parts += [Part("attn_score", "attn_score", op.MATRIX, score, f"Q·Kᵀ, {span}, written out"),
                  Part("attn_softmax", "attn_softmax", op.VECTOR, op.attention_softmax(*shape, ab),
                       f"{span}, read and written"),
                  Part("attn_value", "attn_value", op.MATRIX, value, f"P·V, {span}")]
    else:
        softmax = op.SOFTMAX_FLOPS_PER_ELEMENT * batch * heads * t * kv_len
        parts += [Part("attn_score", "attn_score", op.MATRIX, score._replace(flops=score.flops + softmax),
                       f"Q·Kᵀ + softmax on chip, {span}", softmax),
                  Part("attn_value", "attn_value", op.MATRIX, value, f"P·V on chip, {span}")]
    parts.append(Part("o_proj", "o_proj", op.MATRIX, op.linear(n, q_dim, d_model, ab, wb, bias),
                      f"{q_dim} → {d_model}"))
    return parts


def mlp(p, n, d_model: int, width: int, gated: bool, activation: str, bias: bool = False) -> list[Part]:
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
