"""What each device holds of a training run's state, and the work done on it once a step:
weights, gradients and Adam's state, sharded across the data-parallel replicas by ZeRO
stage (Rajbhandari et al. 2020, https://arxiv.org/abs/1910.02054); the optimizer's step and
the gradients' synchronisation.

Conventions:
- mixed-precision Adam(W), the ZeRO paper's accounting: 16-bit weights and gradients, fp32
  master weights and two fp32 moments, 16 bytes per parameter (fp32 training: weights,
  gradients and moments, 16 bytes too). Its step reads gradients, master weights and
  moments and writes them back with the 16-bit weights: 28 bytes and
  ``ADAM_FLOPS_PER_PARAMETER`` FLOPs per parameter it updates;
- a weight's replicas are its data-parallel group: every device of dp for weights each
  replica holds whole, and with expert parallel dp × ep for the weights every device of
  the expert group holds (attention, shared layers), dp for each device's experts;
- ZeRO stage 1 shards the optimizer state (master weights and moments) over the group,
  as Megatron-LM's distributed optimizer does; stage 2 the gradients too; stage 3 the
  16-bit weights too, each layer's gathered while it runs (one layer's whole weights are
  added to the device's memory);
- synchronisation, once a step after the pipeline drains, not overlapped with compute: a
  ring all-reduce of the gradients (stage 0), or a reduce-scatter of the gradients and an
  all-gather of the updated weights (stages 1 and 2: the same bytes, 2(n−1)/n of the
  gradients, in as many steps); stage 3 gathers the weights in the forward and again in the
  backward pass: 1.5 times those bytes. DeepSpeed, FSDP (stage 3 as FULL_SHARD, 2 as
  SHARD_GRAD_OP) and Megatron-LM's distributed optimizer (stage 1) shard so.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from explorer.core.model import collective_costs, parallel
from explorer.core.model import ops as op
from explorer.core.model.models import ModelSpec, TransformerSpec

if TYPE_CHECKING:
    from explorer.core.model.workload import WorkloadParams

ADAM_FLOPS_PER_PARAMETER = 14  # moments 3 + 4, update 7 (sqrt, +ε, ÷, weight decay ×, +, ×lr, −)
MASTER_BYTES = 4  # fp32 master weights kept beside 16-bit ones
MOMENT_BYTES = 8  # Adam's two fp32 moments


def state_bytes_per_parameter(params: WorkloadParams) -> int:
    """Weights, gradients, master weights (below fp32) and Adam's moments: 16 for bf16."""
    weights = params.act_bytes
    return weights + weights + (MASTER_BYTES if weights < 4 else 0) + MOMENT_BYTES


def optimizer_bytes_per_parameter(params: WorkloadParams) -> int:
    """Read gradients, master weights, moments; write master weights, moments, 16-bit weights."""
    weights = params.act_bytes
    master = weights < 4
    read = weights + (MASTER_BYTES if master else weights) + MOMENT_BYTES
    write = (MASTER_BYTES if master else weights) + MOMENT_BYTES + (weights if master else 0)
    return read + write


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
    shared = Holding(parameters - experts, split.dp * split.ep, "data-expert" if split.ep > 1 else "data",
                     "gradients of the weights every replica holds")
    if not experts:
        return (shared,)
    return shared, Holding(experts, split.dp, "data", "gradients of this device's experts")


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
    optimizer_bpp = state_bytes_per_parameter(params) - 2 * params.act_bytes
    weights = gradients = optimizer = 0.0
    for h in holdings(model, split):
        weights += h.count * wb / _shards(params, h, 3)
        gradients += h.count * params.act_bytes / _shards(params, h, 2)
        optimizer += h.count * optimizer_bpp / _shards(params, h, 1)
    if params.zero >= 3 and split.dp * split.ep > 1 and isinstance(model, TransformerSpec):
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
        message = h.count * params.act_bytes
        gathers = 1.5 if params.zero >= 3 else 1.0
        gathered = "weights in the forward and backward pass" if params.zero >= 3 else "the updated weights"
        how = (f"ZeRO-{params.zero}: reduce-scatter of gradients, all-gather of {gathered}" if params.zero
               else "all-reduce")
        out.append(op.Op(name, op.Role.ALL_REDUCE, op.LINK, (n - 1) * h.count // n,
                         gathers * collective_costs.ring_all_reduce_bytes(message, n), (),
                         f"{h.what}, over {n} devices ({how}), once a step", link=h.link,
                         steps=int(gathers * collective_costs.collective_steps(op.Role.ALL_REDUCE, n)),
                         once_per_step=True, algorithm=params.allreduce, group=n))
    return out
