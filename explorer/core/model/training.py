"""A training step: forward, backward and the optimizer, and what it keeps in memory.

Conventions:
- the backward pass of an op costs twice its forward, in FLOPs and in bytes: a linear
  layer's backward is two products of the forward's shape (the input's gradient dY·Wᵀ and
  the weights' gradient Xᵀ·dY), each reading and writing tensors of the forward's sizes;
  the same factor is taken for every other op (so training costs about 6 FLOPs per
  parameter and token, 2 forward and 4 backward, as in Kaplan et al. 2020:
  https://arxiv.org/abs/2001.08361). With full activation recomputation the forward runs
  twice (Korthikanti et al. 2022): ×4 instead of ×3;
- communication follows the passes: the tensor-parallel all-reduces and expert all-to-alls
  of the forward run again (on gradients) in the backward, and once more with
  recomputation; a pipeline's sends run twice (activations forward, gradients back: a
  recomputed stage starts from the inputs it kept);
- the optimizer and the gradient all-reduces run once a step, after the pipeline drains
  (``Op.once_per_step``): outside the pipeline's bubble, whole on every device. Gradients of
  weights every data-parallel replica holds are summed over dp devices; with expert
  parallel, the weights every device of the group holds (attention, shared layers) over
  dp × ep, each device's experts over dp;
- the optimizer is Adam(W) in mixed precision (the ZeRO paper's accounting, Rajbhandari et
  al. 2020, https://arxiv.org/abs/1910.02054): 16-bit weights and gradients, fp32 master
  weights and two fp32 moments, 16 bytes per parameter (fp32 training: weights, gradients
  and moments, 16 bytes too). Its step reads gradients, master weights and moments and
  writes them back with the 16-bit weights: 28 bytes and ``ADAM_FLOPS_PER_PARAMETER``
  FLOPs per parameter, once per step;
- activations kept for the backward pass, per transformer layer and sequence of s tokens
  (Korthikanti et al. 2022, https://arxiv.org/abs/2205.05198, eq. 2, for 16-bit
  activations with tensor parallel t): s·h·(10 + 24/t) bytes, plus 5·a·s²/t for the
  attention scores a naive kernel stores (a fused kernel keeps none; the equation assumes
  attention dropout, which Llama-style models do not use, so for them it is high); with full
  recomputation only each layer's input, 2·s·h bytes, plus one layer's full set while it
  is recomputed. The equation is derived for GPT layers (an MLP 4× wide, as many key/value
  heads as query heads); for other layers it is an estimate. Scaled to the activation
  precision. Other models keep every op's input: half of each op's activation bytes;
- with pipeline parallel each micro-batch is one sequence and the first stage holds up to
  pp of them in flight (1F1B; Narayanan et al. 2021, https://arxiv.org/abs/2104.04473), so
  it keeps about as much as the whole model for one sequence; the step takes
  (1 + (pp−1)/m) × its stage's work for m micro-batches (the pipeline bubble).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from explorer.core.model import ops as op
from explorer.core.model import parallel
from explorer.core.model.models import TransformerSpec

ADAM_FLOPS_PER_PARAMETER = 14  # moments 3 + 4, update 7 (sqrt, +ε, ÷, weight decay ×, +, ×lr, −)
MASTER_BYTES = 4  # fp32 master weights kept beside 16-bit ones
MOMENT_BYTES = 8  # Adam's two fp32 moments
TRAINING_DTYPES = ("fp32", "bf16", "fp16")


def passes(params) -> int:
    """How many times each forward op's work is done: forward, backward (×2), recomputation."""
    return 4 if params.recompute else 3


def state_bytes_per_parameter(params) -> int:
    """Weights, gradients, master weights (below fp32) and Adam's moments: 16 for bf16."""
    weights = params.act_bytes
    return weights + weights + (MASTER_BYTES if weights < 4 else 0) + MOMENT_BYTES


def optimizer_bytes_per_parameter(params) -> int:
    """Read gradients, master weights, moments; write master weights, moments, 16-bit weights."""
    weights = params.act_bytes
    master = weights < 4
    read = weights + (MASTER_BYTES if master else weights) + MOMENT_BYTES
    write = (MASTER_BYTES if master else weights) + MOMENT_BYTES + (weights if master else 0)
    return read + write


def _scaled(o: op.Op, factor: int, note: str) -> op.Op:
    return replace(o, flops=o.flops * factor, bytes=o.bytes * factor, weight_bytes=o.weight_bytes * factor,
                   cache_bytes=o.cache_bytes * factor, vector_flops=o.vector_flops * factor,
                   steps=o.steps * factor, detail=f"{o.detail}; {note}" if o.detail else note)


def training_ops(forward: list[op.Op], model, params, split) -> list[op.Op]:
    """The ops of a training step on one device, from the ops of its forward pass."""
    work = passes(params)
    recompute = ", recomputed" if params.recompute else ""
    out = []
    for o in forward:
        if o.unit != op.LINK:
            out.append(_scaled(o, work, f"forward + backward (2×){recompute}: ×{work}"))
        elif o.role == op.Role.SEND_RECV:  # a recomputed stage starts from the inputs it kept: no new send
            out.append(_scaled(o, 2, "forward activations, backward gradients: ×2"))
        else:
            out.append(_scaled(o, work - 1, f"forward + backward{recompute}: ×{work - 1}"))
    parameters = parallel.device_parameters(model, split)
    out.append(op.Op("optimizer", op.Role.OPTIMIZER, op.VECTOR, ADAM_FLOPS_PER_PARAMETER * parameters,
                     optimizer_bytes_per_parameter(params) * parameters, (),
                     f"Adam(W) over {parameters:,} parameters, once a step", once_per_step=True))
    # Weights every data-parallel replica holds, and with expert parallel every device of the
    # group too (attention, shared layers): summed over dp × ep; the experts over dp.
    experts = parallel.expert_parameters(model, split) if split.ep > 1 else 0
    shared_group = "data-expert" if split.ep > 1 else "data"
    for name, count, group, link, what in (
            ("grad_all_reduce", parameters - experts, split.dp * split.ep, shared_group,
             "gradients of the weights every replica holds"),
            ("expert_grad_all_reduce", experts, split.dp, "data", "gradients of this device's experts")):
        if group > 1 and count:
            out.append(op.Op(name, op.Role.ALL_REDUCE, op.LINK, (group - 1) * count // group,
                             parallel.ring_all_reduce_bytes(count * params.act_bytes, group), (),
                             f"{what}, summed over {group} devices (ring), once a step", link=link,
                             steps=parallel.collective_steps(op.Role.ALL_REDUCE, group), once_per_step=True))
    return out


def activation_bytes(model, params, split, forward: list[op.Op]) -> int:
    """Activations one device keeps for the backward pass (see the module's conventions)."""
    local = params.batch // split.batch_share
    if not isinstance(model, TransformerSpec):
        return int(sum(int(o.activation_bytes) * o.count for o in forward if o.unit != op.LINK) // 2)
    s, h, t = params.seq, model.d_model, split.tp
    scale = params.act_bytes / 2
    full_layer = s * h * (10 + 24 / t)
    if params.attention == "naive":
        full_layer += 5 * model.heads * s * s / t
    in_flight = local if split.pp == 1 else min(split.pp, local)  # sequences whose activations are kept
    micro = local if split.pp == 1 else 1  # sequences of the micro-batch being recomputed
    layers = len(parallel.stage_layers(model.layers, split.pp)[0])
    if params.recompute:  # each layer's input kept; one layer's full set while it is recomputed
        return int((2 * s * h * layers * in_flight + full_layer * micro) * scale)
    return int(full_layer * layers * in_flight * scale)


def pipeline_factor(params, split, batch):
    """The step's time over the time of all its ops in sequence: 1 at inference (one batch
    passes every stage in turn); (1 + (pp−1)/m) / pp in training, m micro-batches of one
    sequence each."""
    if params.phase != "train" or split.pp == 1:
        return 1.0
    micro = batch / split.batch_share
    return (1 + (split.pp - 1) / micro) / split.pp


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
        """Every device at its TDP for the whole run: an upper bound on the devices' own energy,
        host, network and cooling left out (None without a TDP)."""
        return None if self.tdp_w is None else self.seconds(at_mfu) * self.devices * self.tdp_w


def run(analysis, tokens: float, mfu: float = DEFAULT_MFU) -> Run:
    """The run of ``tokens`` training tokens at the analysed step (phase train)."""
    p, t = analysis.params, analysis.totals
    if p.phase != "train":
        raise ValueError("a training run needs the train phase")
    if not tokens > 0 or not 0 < mfu <= 1:
        raise ValueError("tokens must be positive and the utilisation in (0, 1]")
    split = p.split
    model_flops = t.flops * split.devices * 3 / passes(p)  # every device's share, recomputation left out
    return Run(tokens, split.devices, p.batch * p.seq, model_flops, t.time_s, mfu,
               analysis.roofs.matrix.flops_per_s, analysis.hardware.specs.tdp_w)
