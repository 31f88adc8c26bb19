"""What a step holds in a device's memory: weights, training's gradients and optimizer state,
the KV cache and activations; the budget it may fill, and the largest batch that fits."""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from explorer.core.hardware.hardware import Hardware
from explorer.core.model import ops as op
from explorer.core.model import parallel, sharding, training
from explorer.core.model.applicability import Phase
from explorer.core.model.models import ModelSpec, TransformerSpec
from explorer.core.model.parameters import MAX_BATCH
from explorer.core.model.quantization import applied, total_bytes, unquantized_bytes
from explorer.core.model.step_ops import build_ops
from explorer.core.model.workload import WorkloadParams


def state_bytes(model: ModelSpec, params: WorkloadParams) -> int:
    """Training's gradients and optimizer state on the busiest device (0 at inference)."""
    if params.phase != Phase.TRAIN:
        return 0
    return int(sharding.device_state(model, params).state)


def weights_and_kv(model: ModelSpec, params: WorkloadParams) -> tuple[float, float]:
    """(weight bytes, KV-cache bytes of one sequence of ``params.kv_tokens`` tokens) on the
    busiest device. Layers with a sliding window cache at most the window's tokens; training
    keeps no cache."""
    split = params.split
    if params.phase == Phase.TRAIN:  # ZeRO-3 shards the weights too
        return int(sharding.device_state(model, params).weights), 0
    quantization = applied(model, params)
    if quantization is None:
        weights = parallel.device_parameters(model, split) * params.weight_bytes
    else:  # a quantized checkpoint: each class of weight at the bytes the file stores it in
        weights = total_bytes(parallel.device_parameter_classes(model, split), quantization,
                              unquantized_bytes(model, params))
    if split.devices == 1:
        return weights, model.kv_cache_values(params.kv_tokens) * params.kv_bytes
    shard = parallel.tensor_shard(model, split.tp) if isinstance(model, TransformerSpec) else model
    kv = shard.kv_cache_values(params.kv_tokens) * params.kv_bytes // split.cp  # CP: each its chunks' keys
    if split.pp > 1 and isinstance(model, TransformerSpec):  # the longest stage's layers (only it has stages)
        kv = kv * max(len(layers) for layers in split.rank_layers(model.layers)) // model.layers
    return weights, kv


def memory_budget(hardware: Hardware, params: WorkloadParams) -> float:
    """Bytes the step may occupy: the usable memory times the serving engine's share."""
    return hardware.usable_memory_bytes * params.budget_share


def max_batch_that_fits(model: ModelSpec, params: WorkloadParams, hardware: Hardware,
                        alongside: ModelSpec | None = None) -> int:
    """Largest batch whose weights (with training's state), KV cache and activations fit in
    the memory budget (at most MAX_BATCH), a multiple of the batch's split. KV cache and
    activations grow linearly with the batch. ``alongside``: a second model whose weights
    and KV cache share the memory (speculative decoding's draft)."""
    weight_bytes, kv_per_sequence = weights_and_kv(model, params)
    if alongside is not None:
        more_weights, more_kv = weights_and_kv(alongside, params)
        weight_bytes, kv_per_sequence = weight_bytes + more_weights, kv_per_sequence + more_kv
    share = params.split.batch_share
    free = memory_budget(hardware, params) - weight_bytes - state_bytes(model, params)
    if free < 0:
        return 0
    per_sequence = kv_per_sequence + activations_per_sequence(model, params)  # per device sequence
    return int(min(MAX_BATCH, free // per_sequence * share))


@lru_cache(maxsize=32)  # the same for every move of a roof drag
def activations_per_sequence(model: ModelSpec, params: WorkloadParams) -> int:
    """The activations one device holds for each sequence of its share of the batch: the
    largest op's at inference, those kept for the backward pass in training."""
    share = params.split.batch_share
    one = replace(params, batch=share, micro_batch=0)  # one sequence on each device, in one micro-batch
    ops = build_ops(model, one)
    if params.phase == Phase.TRAIN:
        return training.activation_bytes(model, one, one.split, ops)
    return max(int(o.activation_bytes) for o in ops if o.unit != op.LINK)
