"""The op lists of a model under a step's workload parameters.

``build_ops(model, params)`` turns a model description and a step's parameters
into a list of ``Op``. A transformer's per-layer ops are listed once with the
layers they repeat in, so the same list costs the whole model (multiply by the
layer count) and expands into one row per layer for tables.

Conventions beyond ops.py:
- prefill: each of ``batch`` sequences processes ``seq`` prompt tokens and
  attends over them; the LM head runs for the last position only (what a
  server needs to sample the first new token);
- decode: each sequence produces one token attending over ``context`` cached
  tokens (the KV cache holds ``context`` tokens per sequence);
- train: each of ``batch`` sequences of ``seq`` tokens goes forward (every position
  through the LM head), backward and through the optimizer (``explorer.core.model.training``);
- ``tp``, ``pp``, ``dp``, ``ep`` spread the step over devices (``explorer.core.model.parallel``):
  the ops are then those of one device, with the communication ops added, and ``batch``
  is the whole job's;
- a decoder's attention is causal (``causal``, the default): a prefill or training step
  counts only the query-key pairs the mask keeps (t(t+1)/2 of t², capped by a sliding
  window), as kernels that skip masked tiles do; the bytes stay (every key and value is
  still read; a naive kernel still writes the whole score matrix). ``causal`` false counts
  the full square, as papers that quote 6·N·D plus the whole s² score matrix do;
- rotary position embeddings are not costed (an elementwise op on Q and K,
  well under 1 % of a layer's bytes);
- a CNN step is one forward pass over ``batch`` images (``seq``, ``context`` and
  ``phase`` do not apply).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from explorer.core.model import blocks, parallel, training
from explorer.core.model import ops as op
from explorer.core.model.applicability import Phase
from explorer.core.model.custom import CustomSpec, custom_ops
from explorer.core.model.models import CnnSpec, ModelSpec, TransformerSpec, VitSpec
from explorer.core.model.quantization import stored_ops
from explorer.core.model.workload import WorkloadError, WorkloadParams


def build_ops(model: ModelSpec, params: WorkloadParams, batch: op.Size | None = None) -> list[op.Op]:
    """The ops of one step (on one device, when the step is spread over several). ``batch``
    overrides ``params.batch`` (a NumPy array for sweeps)."""
    batch = params.batch if batch is None else batch
    split = params.split
    if split.devices == 1 and params.phase != Phase.TRAIN:
        return _model_ops(model, params, batch)
    try:
        parallel.check_split(model, split)
        chunks = split.pp * params.vpp
        if (params.phase == Phase.TRAIN and split.pp > 1 and isinstance(model, TransformerSpec)  # (staged)
                and chunks > model.layers + 2 * split.trim):  # (a trimmed end chunk may hold none)
            raise parallel.ParallelError(f"{model.name} has {model.layers} layers: {split.pp} stages × "
                                         f"{params.vpp} virtual stages make {chunks} chunks; use fewer")
        return _device_ops(model, params, split, batch)
    except parallel.ParallelError as error:
        raise WorkloadError(str(error)) from None


def _device_ops(model: ModelSpec, params: WorkloadParams, split: parallel.Split,
                batch: op.Size) -> list[op.Op]:
    """One device's ops: its share of the model and the batch, the communication between
    devices, and in training the backward pass and the optimizer."""
    local = parallel.local_batch(batch, split.batch_share)
    shard = parallel.tensor_shard(model, split.tp) if isinstance(model, TransformerSpec) else model
    ops = _model_ops(shard, params, local)
    if split.ep > 1 and isinstance(shard, TransformerSpec):  # the experts see every token routed to them
        group = _model_ops(parallel.expert_shard(shard, split.ep), params, local * split.ep)
        experts = {o.name: o for o in group if o.name in parallel.EXPERT_OPS}
        ops = [experts.get(o.name, o) for o in ops]
    comm = parallel.communication_ops(model, params, split, local)
    out: list[op.Op] = []
    for o in ops:
        out.extend(comm.get(o.name, []))
        out.append(o)
    out.extend(comm["end"])
    return training.training_ops(out, model, params, split) if params.phase == Phase.TRAIN else out


def _model_ops(model: ModelSpec | CustomSpec, params: WorkloadParams, batch: op.Size) -> list[op.Op]:
    if isinstance(model, TransformerSpec):
        return _transformer_ops(model, params, batch)
    if isinstance(model, CnnSpec):
        return _cnn_ops(model, params, batch)
    if isinstance(model, VitSpec):
        return _vit_ops(model, params, batch)
    if isinstance(model, CustomSpec):
        if not model.layers:
            raise WorkloadError("the custom stack has no layers: add one in the layer editor")
        return custom_ops(model, params, batch)
    raise TypeError(f"no op builder for {type(model).__name__}")


def _transformer_ops(m: TransformerSpec, p: WorkloadParams, batch: op.Size) -> list[op.Op]:
    ab, wb = p.act_bytes, p.weight_bytes
    n = batch * p.device_tokens
    d, f = m.d_model, m.mlp_width
    every = tuple(range(m.layers))
    out: list[op.Op] = []

    def add(name: str, role: str, unit: str, cost: op.Cost, layers: tuple[int, ...] = every, detail: str = "",
            vector_flops: op.Size = 0) -> None:
        out.append(op.Op.of(name, role, unit, cost, layers, detail, vector_flops))

    def layer_norm(name: str) -> None:
        add(name, "norm", op.VECTOR, op.norm(n, d, m.norm, ab, wb), detail=m.norm)

    def block(parts: Iterable[blocks.Part], layers: tuple[int, ...] = every, prefix: str = "") -> None:
        for part in parts:
            add(prefix + part.name, part.role, part.unit, part.cost, layers, part.detail, part.vector_flops)

    # The layers where ``test`` holds, and the others.
    def split(test: Callable[[int], bool]) -> tuple[tuple[int, ...], tuple[int, ...]]:
        return tuple(i for i in every if test(i)), tuple(i for i in every if not test(i))

    windowed, full = split(m.windowed)
    routed, dense = split(m.moe_layer)
    layer_norm("attn_norm")
    if m.mla:
        block(blocks.latent_attention(p, batch, m))
    else:
        projections = blocks.attention_projections(p, batch, d, m.heads, m.kv_heads, m.head_dim, m.bias,
                                                   m.fused_qkv, m.qkv_bias, m.qk_norm, m.o_bias)
        block(projections[:-1])
        if full:
            block(blocks.attention_core(p, batch, m.heads, m.kv_heads, m.head_dim), full)
        if windowed:  # a sliding window: its own ops where some layers attend over everything
            block(blocks.attention_core(p, batch, m.heads, m.kv_heads, m.head_dim, m.sliding_window),
                  windowed, "local_" if full else "")
        block(projections[-1:])
    if m.norms_per_layer == 4:
        layer_norm("post_attn_norm")
    add("attn_residual", "residual", op.VECTOR, op.elementwise(n * d, 1, 2, ab))
    if m.norms_per_layer != 1:  # one norm: attention and MLP side by side read the same (Cohere, Falcon-7B)
        layer_norm("mlp_norm")
    if dense:
        block(blocks.mlp(p, n, d, f, m.gated_mlp, m.activation, m.bias), dense)
    if routed:
        block(blocks.moe(p, n, d, m.experts, m.experts_per_token, m.expert_width, m.activation,
                         m.shared_width, m.shared_gate, m.router_bias), routed)
    if m.norms_per_layer == 4:
        layer_norm("post_mlp_norm")
    add("mlp_residual", "residual", op.VECTOR, op.elementwise(n * d, 1, 2, ab))
    embedding, final_norm, lm_head = _model_level_ops(m, p, batch)
    return stored_ops(m, p, [embedding, *out, final_norm, lm_head])  # a quantized checkpoint's bytes


def _model_level_ops(m: TransformerSpec, p: WorkloadParams, batch: op.Size) -> tuple[op.Op, op.Op, op.Op]:
    """The ops listed around the layers: the embedding lookup, the final norm, the LM head.
    A lookup reads one table row per token (two with learned positions, then added: one
    FLOP per element)."""
    ab, wb = p.act_bytes, p.weight_bytes
    n, d = batch * p.device_tokens, m.d_model
    rows = 2 if m.positions == "learned" else 1
    embedding = op.Op.of("embedding", "embedding", op.VECTOR,
                         op.Cost((rows - 1) * n * d, rows * n * d * wb + n * d * ab, rows * n * d * wb),
                         (), "token rows" + (" + position rows" if rows == 2 else ""))
    # Only the rows that produce logits go through the final norm and the LM head: the
    # last position of each sequence in prefill, the one new token in decode, every
    # position in training.
    logits_rows = batch * p.device_tokens if p.phase == Phase.TRAIN else batch
    final_norm = op.Op.of("final_norm", "norm", op.VECTOR, op.norm(logits_rows, d, m.norm, ab, wb),
                          (), m.norm)
    lm_head = op.Op.of("lm_head", "lm_head", op.MATRIX, op.linear(logits_rows, d, m.vocab, ab, wb),
                       (), f"{d} → {m.vocab}" + (" (tied to embedding)" if m.tied_embeddings else ""))
    return embedding, final_norm, lm_head


def _vit_ops(m: VitSpec, p: WorkloadParams, batch: op.Size) -> list[op.Op]:
    """One forward pass over ``batch`` images: every token attends over all of the image's
    tokens (an encoder: no mask, no KV cache; keys and values stay activations)."""
    tokens = m.tokens
    step = replace(p, phase=Phase.PREFILL, seq=tokens, prefix=0, kv_dtype=None, causal=False)
    ab, wb = step.act_bytes, step.weight_bytes
    n = batch * tokens
    d, f = m.d_model, m.mlp_width
    every = tuple(range(m.layers))
    grid = m.image_size // m.patch
    size = m.image_size
    patches = op.conv2d(batch, size, size, m.in_channels, d, m.patch, m.patch, 0, ab, wb, bias=True)
    out = [op.Op.of("patch_embed", "conv", op.MATRIX, patches, (),
                    f"{m.patch}×{m.patch}/{m.patch}, {m.in_channels} → {d}: {grid}×{grid} patches")]
    added, table = op.elementwise(n * d, 1, 2, ab), (tokens + 1) * d * wb  # the class token, the positions
    out.append(op.Op.of("positions", "embedding", op.VECTOR, op.Cost(added.flops, added.bytes + table, table),
                        (), f"class token + learned positions, {tokens} tokens"))

    def add(part: blocks.Part) -> None:
        out.append(op.Op.of(part.name, part.role, part.unit, part.cost, every, part.detail,
                            part.vector_flops))

    def layer_norm(name: str) -> None:
        out.append(op.Op.of(name, "norm", op.VECTOR, op.norm(n, d, "layernorm", ab, wb), every, "layernorm"))

    layer_norm("attn_norm")
    for part in blocks.attention(step, batch, d, m.heads, m.heads, d // m.heads, bias=True, fused_qkv=True):
        add(part)
    out.append(op.Op.of("attn_residual", "residual", op.VECTOR, op.elementwise(n * d, 1, 2, ab), every))
    layer_norm("mlp_norm")
    for part in blocks.mlp(step, n, d, f, gated=False, activation="gelu", bias=True):
        add(part)
    out.append(op.Op.of("mlp_residual", "residual", op.VECTOR, op.elementwise(n * d, 1, 2, ab), every))
    out.append(op.Op.of("final_norm", "norm", op.VECTOR, op.norm(n, d, "layernorm", ab, wb), (), "layernorm"))
    out.append(op.Op.of("head", "lm_head", op.MATRIX, op.linear(batch, d, m.classes, ab, wb, bias=True), (),
                        f"class token {d} → {m.classes}"))
    return out


def _cnn_ops(m: CnnSpec, p: WorkloadParams, batch: op.Size) -> list[op.Op]:
    ab, wb = p.act_bytes, p.weight_bytes
    out: list[op.Op] = []

    def conv(name: str, layer: int | None, size: int, c_in: int, c_out: int, kernel: int, stride: int) -> int:
        padding = kernel // 2
        cost = op.conv2d(batch, size, size, c_in, c_out, kernel, stride, padding, ab, wb)
        layers = () if layer is None else (layer,)
        out.append(op.Op.of(name, "conv", op.MATRIX, cost, layers,
                            f"{kernel}×{kernel}/{stride}, {c_in} → {c_out}, {size}×{size} in"))
        return op.conv2d_output(size, kernel, stride, padding)

    def pointwise(name: str, role: str, layer: int | None, size: int, channels: int, flops_per_element: int,
                  inputs: int) -> None:
        elements = batch * size * size * channels
        params_bytes = 2 * channels * wb if role == op.Role.NORM else 0  # batch norm scale and shift
        cost = op.elementwise(elements, flops_per_element, inputs, ab)
        layers = () if layer is None else (layer,)
        out.append(op.Op.of(name, role, op.VECTOR,
                            op.Cost(cost.flops, cost.bytes + params_bytes, params_bytes), layers,
                            f"{channels} × {size}×{size}"))

    size = conv("stem.conv", None, m.image_size, m.in_channels, m.stem_channels,
                m.stem_kernel, m.stem_stride)
    pointwise("stem.bn", "norm", None, size, m.stem_channels, 2, 1)
    pointwise("stem.relu", "activation", None, size, m.stem_channels, 1, 1)
    pool = op.pool2d(batch, size, size, m.stem_channels, m.pool_kernel, m.pool_stride,
                     m.pool_kernel // 2, ab)
    out.append(op.Op.of("stem.maxpool", "pool", op.VECTOR, pool, (),
                        f"{m.pool_kernel}×{m.pool_kernel} max"))
    size = op.conv2d_output(size, m.pool_kernel, m.pool_stride, m.pool_kernel // 2)

    c_in, block_index = m.stem_channels, 0
    for stage_index, stage in enumerate(m.stages):
        width, c_out = stage.width, stage.width * m.expansion
        for block in range(stage.blocks):
            stride = stage.stride if block == 0 else 1
            prefix = f"stage{stage_index + 1}.{block}"
            b = block_index
            conv(f"{prefix}.conv1", b, size, c_in, width, 1, 1)
            pointwise(f"{prefix}.bn1", "norm", b, size, width, 2, 1)
            pointwise(f"{prefix}.relu1", "activation", b, size, width, 1, 1)
            out_size = conv(f"{prefix}.conv2", b, size, width, width, 3, stride)
            pointwise(f"{prefix}.bn2", "norm", b, out_size, width, 2, 1)
            pointwise(f"{prefix}.relu2", "activation", b, out_size, width, 1, 1)
            conv(f"{prefix}.conv3", b, out_size, width, c_out, 1, 1)
            pointwise(f"{prefix}.bn3", "norm", b, out_size, c_out, 2, 1)
            if block == 0:
                conv(f"{prefix}.downsample", b, size, c_in, c_out, 1, stride)
                pointwise(f"{prefix}.downsample_bn", "norm", b, out_size, c_out, 2, 1)
            pointwise(f"{prefix}.residual", "residual", b, out_size, c_out, 1, 2)
            pointwise(f"{prefix}.relu3", "activation", b, out_size, c_out, 1, 1)
            size, c_in, block_index = out_size, c_out, block_index + 1

    avg = op.pool2d(batch, size, size, c_in, size, 1, 0, ab)
    out.append(op.Op.of("avgpool", "pool", op.VECTOR, avg, (), f"global average, {size}×{size}"))
    fc = op.linear(batch, c_in, m.classes, ab, wb, bias=True)
    # The classifier is the network's one fully connected layer: role fc1.
    out.append(op.Op.of("fc", "fc1", op.MATRIX, fc, (), f"{c_in} → {m.classes}"))
    return out
