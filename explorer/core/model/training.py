"""A training step: forward, backward and the optimizer, and what it keeps in memory.

Conventions:
- the backward pass of an op costs twice its forward, in FLOPs and in bytes: a linear
  layer's backward is two products of the forward's shape (the input's gradient dY·Wᵀ and
  the weights' gradient Xᵀ·dY), each reading and writing tensors of the forward's sizes;
  the same factor is taken for every other op (so training costs about 6 FLOPs per
  parameter and token, 2 forward and 4 backward, as in Kaplan et al. 2020:
  https://arxiv.org/abs/2001.08361). A recomputed op's forward runs twice (Korthikanti et
  al. 2022, https://arxiv.org/abs/2205.05198): ×4 instead of ×3, for every op with full
  recomputation, for a naive kernel's attention scores with selective recomputation;
- communication follows the passes: the tensor-parallel all-reduces and expert all-to-alls
  of the forward run again (on gradients) in the backward, and once more with full
  recomputation; a pipeline's sends run twice (activations forward, gradients back: a
  recomputed stage starts from the inputs it kept). With sequence parallel each
  all-reduce is a reduce-scatter and an all-gather: the same bytes in as many steps;
- the optimizer and the gradients' synchronisation run once a step, after the pipeline
  drains (``Op.once_per_step``): outside the pipeline's bubble; their state and ZeRO
  sharding: ``explorer.core.model.sharding``;
- activations kept for the backward pass, per transformer layer and sequence: counted from
  the layer's shapes as Korthikanti et al. (2022) count a GPT layer's (``layer_activation_
  bytes``; for a GPT layer it is their eq. 2, s·h·(10 + 24/t) + 5·a·s²/t with tensor
  parallel t, and eq. 4, s·h·34/t, with sequence parallel), so grouped-query attention,
  gated MLPs, experts and training without dropout (Llama, Mistral, Qwen) count what they
  keep. A fused attention kernel keeps no scores. With full recomputation only each layer's
  input, 2·s·h bytes (/t with sequence parallel), plus one layer's full set while it is
  recomputed. Scaled to the activation precision. Other models keep every op's input: half
  of each op's activation bytes;
- gradient accumulation: a device (data-parallel replica) runs its local batch as m
  micro-batches of ``micro_sequences`` sequences each (``--micro-batch``; by default one
  sequence with a pipeline, the whole local batch without), so global batch = micro-batch
  × m × DP, as DeepSpeed asserts (train_batch_size == micro_batch_size × micro_batches ×
  data_parallel_size). It holds one micro-batch's activations at a time; with pipeline
  parallel the first stage holds up to pp micro-batches in flight (1F1B; Narayanan et al.
  2021, https://arxiv.org/abs/2104.04473), so it keeps about as much as the whole model for
  one micro-batch (1 + (pp−1)/(pp·vpp) times that with vpp virtual stages); the step takes
  (1 + (pp−1)/(vpp·m)) × its stage's work (the pipeline bubble, shrunk vpp times by the
  interleaved schedule). The ops are those of the whole local batch: m micro-batches do
  the same arithmetic, each reading the weights again, which is left out (training's
  products are compute-bound at thousands of tokens a micro-batch). ZeRO-2 and 3
  communicate once per micro-batch (``sharding``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from numpy.typing import ArrayLike

from explorer.core.hardware.hardware import ComputePeak, Hardware
from explorer.core.model import ops as op
from explorer.core.model import parallel, sharding
from explorer.core.model.applicability import Phase
from explorer.core.model.models import ModelSpec, TransformerSpec

if TYPE_CHECKING:
    from explorer.core.model.workload import WorkloadParams
from explorer.core.model.sharding import (  # noqa: F401  (re-exported: the state's accounting)
    ADAM_FLOPS_PER_PARAMETER,
    optimizer_bytes_per_parameter,
    state_bytes_per_parameter,
)

TRAINING_DTYPES = ("fp32", "bf16", "fp16")


# The ops selective recomputation runs again: the attention scores, their softmax and their
# product with the values (Korthikanti et al. 2022, section 5), which a naive kernel stores.
ATTENTION_CORE = ("attn_score", "attn_softmax", "attn_value")


def op_passes(o: op.Op, params: WorkloadParams) -> int:
    """How many times one op's forward work is done in a training step: 3 (forward and
    backward), 4 when it is recomputed. A fused attention kernel keeps no scores and its
    backward already recomputes them: selective recomputation adds nothing to it.
    Communication: once a step for the gradients' synchronisation, twice for a pipeline's
    sends (and their gathers), twice for the rest (3 times with full recomputation)."""
    if o.once_per_step:
        return 1
    if o.unit == op.LINK:
        if o.link == "pipeline" or o.name == "stage_gather":
            return 2
        return 3 if params.recompute == "full" else 2
    if params.recompute == "full":
        return 4
    naive = params.attention == "naive"
    return 4 if params.recompute == "selective" and naive and o.name in ATTENTION_CORE else 3


def _scaled(o: op.Op, factor: int, note: str) -> op.Op:
    return replace(o, flops=o.flops * factor, bytes=o.bytes * factor, weight_bytes=o.weight_bytes * factor,
                   cache_bytes=o.cache_bytes * factor, vector_flops=o.vector_flops * factor,
                   steps=o.steps * factor, detail=f"{o.detail}; {note}" if o.detail else note)


def training_ops(forward: list[op.Op], model: ModelSpec, params: WorkloadParams,
                 split: parallel.Split) -> list[op.Op]:
    """The ops of a training step on one device, from the ops of its forward pass."""
    out = []
    for o in forward:
        work = op_passes(o, params)
        if o.unit != op.LINK:
            note = f"forward + backward (2×){', recomputed' if work == 4 else ''}: ×{work}"
        elif work == 2 and (o.link == "pipeline" or o.name == "stage_gather"):
            note = "forward activations, backward gradients: ×2"  # a recomputed stage starts from its inputs
        else:
            note = f"forward + backward{', recomputed' if work == 3 else ''}: ×{work}"
        out.append(_scaled(o, work, note))
    out += sharding.step_ops(model, params, split)
    return out


def layer_activation_bytes(model: TransformerSpec, params: WorkloadParams, split: parallel.Split,
                           layer: int) -> float:
    """Bytes of 16-bit activations one layer keeps for one sequence on one device, from the
    layer's shapes as Korthikanti et al. (2022, section 4.1) count a GPT layer's: the inputs
    of the norms (2h each), of the Q/K/V and MLP products (2h each), the dropout masks (h
    each, when the model is trained with dropout) kept whole on every device of the TP group
    unless sequence parallel splits them too; Q, K, V and the output projection's input
    (2 bytes per value of the device's heads), the MLP's hidden activations (two tensors of
    its width, three when gated; a routed expert's for each of a token's picks, each pick's
    copy of the token too) split by tp; a naive kernel's scores, 2·heads·s per token (5 with
    dropout's mask and output) unless recomputed. A GPT layer (MLP 4h, dropout) comes to
    s·h·(10 + 24/t) + 5·a·s²/t, their eq. 2; s·h·34/t with sequence parallel, eq. 4."""
    s, h, t = params.device_tokens, model.d_model, split.tp  # a sequence's tokens on this device (CP: 1/cp)
    shard = parallel.tensor_shard(model, t)
    whole = 2 * h * (model.norms_per_layer + 2) + (2 * h if model.dropout else 0)
    heads_part = 4 * shard.heads * shard.head_dim + 4 * shard.kv_heads * shard.head_dim
    tensors = 3 if model.gated_mlp else 2
    if model.moe_layer(layer):
        k = model.experts_per_token
        mlp = k * (2 * h + 2 * tensors * shard.expert_width) + 2 * tensors * shard.shared_width
    else:
        mlp = 2 * tensors * shard.mlp_width
    per_token = whole / (t if params.sp else 1) + heads_part + mlp
    if params.attention == "naive" and params.recompute == "none":
        per_token += (5 if model.dropout else 2) * shard.heads * params.seq  # scores over every key
    return s * per_token


def in_flight(params: WorkloadParams, split: parallel.Split) -> float:
    """Sequences whose activations the first pipeline stage keeps at once: one micro-batch's
    without a pipeline; with one, up to pp micro-batches (1F1B), times 1 + (pp−1)/(pp·vpp)
    with virtual stages (Korthikanti et al. 2022, section 4.2.3)."""
    micro = params.micro_sequences
    if split.pp == 1:
        return micro
    held = min(split.pp, params.accumulation_steps) * micro
    return held * (1 + (split.pp - 1) / (split.pp * params.vpp)) if params.vpp > 1 else held


def activation_bytes(model: ModelSpec, params: WorkloadParams, split: parallel.Split,
                     forward: list[op.Op]) -> int:
    """Activations one device keeps for the backward pass (see the module's conventions)."""
    if not isinstance(model, TransformerSpec):
        ops_bytes = sum(int(o.activation_bytes) * o.count for o in forward if o.unit != op.LINK) // 2
        return int(ops_bytes * params.micro_sequences // max(params.local_batch, 1))
    scale = params.act_bytes / 2
    kept = in_flight(params, split)
    stage = split.rank_layers(model.layers)[0]
    layers = [layer_activation_bytes(model, params, split, i) for i in stage]
    if params.recompute == "full":  # each layer's input kept; one layer's full set while it is recomputed
        layer_input = 2 * params.device_tokens * model.d_model / (split.tp if params.sp else 1)
        return int((layer_input * len(stage) * kept + max(layers) * params.micro_sequences) * scale)
    return int(sum(layers) * kept * scale)


def _layer_work(model: TransformerSpec, layer: int, seq: int) -> float:
    """A layer's forward FLOPs per token, the measure of a pipeline stage's share: its
    products (2 per active parameter) and causal attention's scores and values over
    seq/2 keys on average (2 × 2 × query width × keys; a sliding window's at most)."""
    keys = seq / 2
    if model.windowed(layer):
        keys = min(keys, model.sliding_window)
    return 2 * model.layer_parameters(layer, active=True) + 4 * model.q_dim * keys


def stage_imbalance(model: ModelSpec, split: parallel.Split, seq: int) -> float:
    """The slowest pipeline device's work over the mean device's (1: balanced): each device's
    forward FLOPs per token (``_layer_work``) over the layers ``rank_layers`` gives it, the
    LM head (2 × vocab × d_model a token) on the last; the embedding is a lookup. A
    1F1B pipeline runs at its slowest stage's pace, each micro-batch and each slot of the
    bubble alike (the bubble is p − 1 of a stage's forward and backward passes, Narayanan et
    al. 2021, taken here at the slowest stage's), so the pipelined time is the mean stage's
    × this. Llama 3 names the imbalance this measures: "After the last layer of the model,
    we need to calculate output and loss, making this stage the execution latency
    bottleneck" (arXiv 2407.21783, section 3.3.2)."""
    if not isinstance(model, TransformerSpec) or split.pp == 1:
        return 1.0
    work = [sum(_layer_work(model, i, seq) for i in layers) for layers in split.rank_layers(model.layers)]
    # the LM head's product runs on the last device (tied to the embedding: the same matrix)
    work[-1] += 2 * model.vocab * model.d_model
    return max(work) / (sum(work) / len(work))


def pipeline_factor(params: WorkloadParams, split: parallel.Split, batch: ArrayLike,
                    model: ModelSpec | None = None) -> Any:
    """The step's time over the time of all its ops in sequence: 1 at inference (one batch
    passes every stage in turn); (1 + (pp−1)/(vpp·m)) / pp in training, m micro-batches of
    ``micro_batch`` sequences each, one by default (the bubble; interleaved 1F1B shrinks it
    by vpp), times the slowest stage's share over the mean's (``stage_imbalance``, with
    ``model``: an uneven split's slowest stage sets the pace of the micro-batches and of
    the bubble)."""
    if params.phase != Phase.TRAIN or split.pp == 1:
        return 1.0
    local = np.ceil(np.asarray(batch, dtype=float) / split.batch_share)  # the busiest replica's
    micro = np.ceil(local / params.micro_sequences) if params.micro_batch else local
    factor = (1 + (split.pp - 1) / (params.vpp * micro)) / split.pp
    if model is not None:
        factor = factor * stage_imbalance(model, split, params.seq)
    return float(factor) if factor.ndim == 0 else factor


class _StepTime(Protocol):
    @property
    def time_s(self) -> float: ...


class _Roofs(Protocol):
    @property
    def matrix(self) -> ComputePeak: ...


class AnalysedStep(Protocol):
    """What a training run reads of an analysed step (``analysis.Analysis``, a layer above)."""

    @property
    def params(self) -> WorkloadParams: ...
    @property
    def totals(self) -> _StepTime: ...
    @property
    def roofs(self) -> _Roofs: ...
    @property
    def hardware(self) -> Hardware: ...
    @property
    def model_flops(self) -> float: ...


DEFAULT_MFU = 0.4  # a stated default: large dense runs report 0.35–0.55 (PaLM 0.46, Llama 3 0.38–0.43)
MFU_SOURCES = ("https://arxiv.org/abs/2204.02311", "https://arxiv.org/abs/2407.21783")


@dataclass(frozen=True)
class Run:
    """Training a model on ``tokens`` tokens with the analysed step, two ways: at the
    roofline's step time (which counts recomputation and adds communication without
    overlap) and at a stated model-FLOPs utilisation."""

    tokens: float
    devices: int
    tokens_per_step: int
    model_flops_per_step: float  # forward + backward over every device, recomputation left out
    roofline_step_s: float
    mfu: float
    peak_flops_per_s: float
    tdp_w: float | None

    @property
    def steps(self) -> float:
        return self.tokens / self.tokens_per_step

    @property
    def mfu_step_s(self) -> float:
        """The step at ``mfu`` of every device's peak."""
        return self.model_flops_per_step / (self.devices * self.peak_flops_per_s * self.mfu)

    @property
    def roofline_mfu(self) -> float:
        """The utilisation the roofline's step time implies."""
        return self.model_flops_per_step / (self.devices * self.peak_flops_per_s * self.roofline_step_s)

    def seconds(self, at_mfu: bool = True) -> float:
        return self.steps * (self.mfu_step_s if at_mfu else self.roofline_step_s)

    def device_hours(self, at_mfu: bool = True) -> float:
        return self.seconds(at_mfu) * self.devices / 3600

    def energy_j(self, at_mfu: bool = True) -> float | None:
        """Every device at its TDP for the whole run (host, network and cooling left out; None
        without a TDP): at TDP, not a bound, the run's time being a stated utilisation's."""
        return None if self.tdp_w is None else self.seconds(at_mfu) * self.devices * self.tdp_w


def run(analysis: AnalysedStep, tokens: float, mfu: float = DEFAULT_MFU) -> Run:
    """The run of ``tokens`` training tokens at the analysed step (phase train)."""
    p, t = analysis.params, analysis.totals
    if p.phase != Phase.TRAIN:
        raise ValueError("a training run needs the train phase")
    if not tokens > 0 or not 0 < mfu <= 1:
        raise ValueError("tokens must be positive and the utilisation in (0, 1]")
    split = p.split
    model_flops = analysis.model_flops * split.devices  # every device's share, recomputation left out
    return Run(tokens, split.devices, p.batch * p.seq, model_flops, t.time_s, mfu,
               analysis.roofs.matrix.flops_per_s, analysis.hardware.specs.tdp_w)
