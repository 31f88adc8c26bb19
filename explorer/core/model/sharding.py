"""What each device holds of a training run's state, and the work done on it once a step:
weights, gradients and Adam's state, sharded across the data-parallel replicas by ZeRO
stage (Rajbhandari et al. 2020, https://arxiv.org/abs/1910.02054); the optimizer's step and
the gradients' synchronisation.

Conventions:
- mixed-precision Adam(W): 16-bit weights, fp32 master weights and two fp32 moments, and
  gradients in ``WorkloadParams.grad_bytes``: fp32 by default when training in bf16, as
  Megatron-LM keeps them (its megatron/training/arguments.py: "bfloat16 requires gradient
  accumulation and all-reduce to be done in fp32", at 000c4ac2), 18 bytes per parameter and
  with its distributed optimizer over d replicas 6 + 12/d (docs/source/api-guide/
  dist_optimizer.md at 50b073cc: "float16 param, fp32 grads | 18 | 6 + 12/d"); with
  ``--grad-dtype 16-bit`` the ZeRO paper's and DeepSpeed's 16 bytes, 4 + 12/d with
  ZeRO-1 (Megatron's own table gives 4 + 16/d for 16-bit gradients: it keeps an fp32 copy
  of its shard of them, left out here). fp32 training: weights, gradients and moments, 16
  bytes. The optimizer's step reads gradients, master weights and moments and writes them
  back with the 16-bit weights (28 bytes per parameter it updates with 16-bit gradients,
  30 with fp32 ones) and ``ADAM_FLOPS_PER_PARAMETER`` FLOPs;
- a weight's replicas are its data-parallel group: every device of dp for weights each
  replica holds whole, and with expert parallel dp × ep for the weights every device of
  the expert group holds (attention, shared layers), dp for each device's experts; with
  context parallel each of these times cp (Megatron-LM reduces gradients over its
  data-and-context-parallel group: the CP devices hold the same weights);
- ZeRO stage 1 shards the optimizer state (master weights and moments) over the group,
  as Megatron-LM's distributed optimizer does; stage 2 the gradients too; stage 3 the
  16-bit weights too, each layer's gathered while it runs (one layer's whole weights are
  added to the device's memory);
- synchronisation over the group of n replicas, each reduce-scatter or all-gather moving
  (n−1)/n of its tensor (a ring all-reduce is one of each): stage 0 all-reduces the
  gradients once a step; stage 1 reduce-scatters them once a step and all-gathers the
  updated 16-bit weights; stage 2 keeps only its shard of the gradients, so it
  reduce-scatters them after every micro-batch's backward (m micro-batches: m times) and
  all-gathers the updated weights once; stage 3 gathers each layer's weights in every
  micro-batch's forward and again in its backward and reduce-scatters its gradients: 3m
  collectives a step, nothing after the update (the next forward gathers the new shards).
  So ZeRO-2 and 3 cost more with more accumulation steps; DeepSpeed refuses them with a
  pipeline (``WorkloadParams`` refuses them too). None of it is overlapped with compute:
  the roofline adds link time to the step as for every op. DeepSpeed prefetches the next
  layer's gather and reduce-scatters buckets during the backward (``overlap_comm``), so a
  real run hides part of it: the time here is what is exposed without that overlap, an
  upper bound. DeepSpeed, FSDP (stage 3 as FULL_SHARD, 2 as SHARD_GRAD_OP) and
  Megatron-LM's distributed optimizer (stage 1) shard so.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from explorer.core.model import ops as op
from explorer.core.model import parallel
from explorer.core.model.collective_costs import collective_steps
from explorer.core.model.models import ModelSpec, TransformerSpec

if TYPE_CHECKING:
    from explorer.core.model.workload import WorkloadParams

ADAM_FLOPS_PER_PARAMETER = 14  # moments 3 + 4, update 7 (sqrt, +ε, ÷, weight decay ×, +, ×lr, −)
MASTER_BYTES = 4  # fp32 master weights kept beside 16-bit ones
MOMENT_BYTES = 8  # Adam's two fp32 moments


def state_bytes_per_parameter(params: WorkloadParams) -> int:
    """Weights, gradients, master weights (below fp32) and Adam's moments: 18 for bf16 with
    fp32 gradients (Megatron-LM's), 16 with 16-bit ones (ZeRO's)."""
    return params.act_bytes + params.grad_bytes + optimizer_state_bytes(params)


def optimizer_state_bytes(params: WorkloadParams) -> int:
    """Master weights (below fp32) and Adam's two moments, per parameter."""
    return (MASTER_BYTES if params.act_bytes < 4 else 0) + MOMENT_BYTES


def optimizer_bytes_per_parameter(params: WorkloadParams) -> int:
    """Read gradients, master weights, moments; write master weights, moments, 16-bit weights."""
    weights = params.act_bytes
    master = weights < 4
    read = params.grad_bytes + (MASTER_BYTES if master else weights) + MOMENT_BYTES
    write = (MASTER_BYTES if master else weights) + MOMENT_BYTES + (weights if master else 0)
    return read + write


def gradient_words(params: WorkloadParams) -> str:
    """"fp32 gradients, as Megatron-LM keeps them in bf16", "bf16 gradients, ZeRO's accounting"."""
    if params.grad_bytes == params.act_bytes:
        return f"{params.dtype} gradients" + (", ZeRO's accounting" if params.grad_dtype == "16-bit" else "")
    return "fp32 gradients" + (", as Megatron-LM keeps them in bf16" if params.grad_dtype == "auto" else "")


@dataclass(frozen=True)
class Holding:
    """Parameters the busiest device holds that share one data-parallel group."""

    count: int
    group: int  # devices holding a replica of them
    link: str  # the group's name in group_links.GROUPS
    what: str


def holdings(model: ModelSpec, split: parallel.Split) -> tuple[Holding, ...]:
    """The device's parameters by the group of their replicas (see the conventions)."""
    parameters = parallel.device_parameters(model, split)
    experts = parallel.expert_parameters(model, split) if split.ep > 1 else 0
    replicas = split.dp * split.cp  # context parallel replicates the weights too
    shared = Holding(parameters - experts, replicas * split.ep, "data-expert" if split.ep > 1 else "data",
                     "gradients of the weights every replica holds")
    if not experts:
        return (shared,)
    return shared, Holding(experts, replicas, "data", "gradients of this device's experts")


def _shards(params: WorkloadParams, holding: Holding, stage: int) -> int:
    """Shards a holding's part of the state is cut into at ZeRO ``stage`` and above."""
    return holding.group if params.zero >= stage else 1


@dataclass(frozen=True)
class DeviceState:
    """Bytes of the training state on the busiest device."""

    weights: float  # 16-bit (or fp32) weights, with ZeRO-3 one layer's gathered whole
    gradients: float
    optimizer: float  # master weights and Adam's moments

    @property
    def state(self) -> float:
        """Gradients and optimizer state: what training adds to the weights."""
        return self.gradients + self.optimizer


@lru_cache(maxsize=32)  # weights, state and the batch limit each ask, on every frame of a drag
def device_state(model: ModelSpec, params: WorkloadParams) -> DeviceState:
    """What the busiest device holds of weights, gradients and optimizer state."""
    wb, split = params.weight_bytes, params.split
    optimizer_bpp = optimizer_state_bytes(params)
    weights = gradients = optimizer = 0.0
    for h in holdings(model, split):
        weights += h.count * wb / _shards(params, h, 3)
        gradients += h.count * params.grad_bytes / _shards(params, h, 2)
        optimizer += h.count * optimizer_bpp / _shards(params, h, 1)
    if params.zero >= 3 and split.dp * split.cp * split.ep > 1 and isinstance(model, TransformerSpec):
        shard = parallel.expert_shard(parallel.tensor_shard(model, split.tp), split.ep)
        weights += max(shard.layer_parameters(i) for i in range(model.layers)) * wb
    return DeviceState(weights, gradients, optimizer)


def step_ops(model: ModelSpec, params: WorkloadParams, split: parallel.Split) -> list[op.Op]:
    """The once-a-step ops of training: the optimizer over the device's share of the state,
    and each holding's gradient synchronisation over its replicas."""
    hold = holdings(model, split)
    updated = sum(h.count // _shards(params, h, 1) for h in hold)
    zero = f" (ZeRO-{params.zero}: its 1/{hold[0].group} shard)" if params.zero and hold[0].group > 1 else ""
    out = [op.Op("optimizer", op.Role.OPTIMIZER, op.VECTOR, ADAM_FLOPS_PER_PARAMETER * updated,
                 optimizer_bytes_per_parameter(params) * updated, (),
                 f"Adam(W) over {updated:,} parameters{zero}, once a step", once_per_step=True)]
    names = ("grad_all_reduce", "expert_grad_all_reduce")
    for name, h in zip(names, hold, strict=False):
        n = h.group
        if n < 2 or not h.count:
            continue
        gathers, scatters, how = _collectives(params)
        grad_gathers = 1 if params.zero == 0 else 0  # an all-reduce gathers the summed gradients
        # bytes a parameter
        tensors = gathers * params.act_bytes + (scatters + grad_gathers) * params.grad_bytes
        halves = gathers + scatters + grad_gathers  # a reduce-scatter or all-gather is half a ring all-reduce
        out.append(op.Op(name, op.Role.ALL_REDUCE, op.LINK, scatters * (n - 1) * h.count // n,
                         (n - 1) * h.count * tensors / n, (),
                         f"{h.what}, over {n} devices ({how})", link=h.link,
                         steps=halves * collective_steps(op.Role.ALL_REDUCE, n) // 2,
                         once_per_step=True, algorithm=params.allreduce, group=n))
    return out


def _collectives(params: WorkloadParams) -> tuple[int, int, str]:
    """(all-gathers of the 16-bit weights, reduce-scatters of the gradients, in words) a
    step (see the conventions); stage 0's all-reduce is a reduce-scatter and an all-gather
    of the gradients."""
    m, grads = params.accumulation_steps, gradient_words(params)
    micro = f"each of {m} micro-batches" if m > 1 else "the one micro-batch"
    if params.zero >= 3:
        return 2 * m, m, (f"ZeRO-3: for {micro}, all-gather of the weights in the forward and again in "
                          f"the backward pass and reduce-scatter of the {grads}; not overlapped")
    if params.zero == 2:
        return 1, m, (f"ZeRO-2: reduce-scatter of the {grads} after {micro}'s backward, all-gather of "
                      "the updated weights once a step; not overlapped")
    if params.zero == 1:
        return 1, 1, f"ZeRO-1: reduce-scatter of the {grads}, all-gather of the updated weights, once a step"
    return 0, 1, f"all-reduce of the {grads}, once a step"
