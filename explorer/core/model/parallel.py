"""Spreading a transformer's step over devices: the share of the model and of the batch each
device holds, and the communication ops the schemes add.

Schemes (``WorkloadParams.tp``, ``pp``, ``dp``, ``ep``), as Megatron-LM and the serving
engines split a decoder:
- tensor parallel (TP, within a node): each device holds 1/tp of every layer's heads, of
  its MLP width (and of each expert's) and of the vocabulary; norms and residual adds run
  whole on every device. Key/value heads are split too, or copied to every device when
  there are fewer of them than devices. Two all-reduces per layer (after attention and
  after the MLP) sum the partial outputs: message = tokens × d_model × activation bytes;
- pipeline parallel (PP): each device holds ceil(layers/pp) consecutive layers; one batch
  passes the stages in turn, one point-to-point send of its activations at each boundary
  (message = tokens × d_model × activation bytes);
- data parallel (DP): each device (group) takes 1/dp of the batch; in training the
  gradients are all-reduced once per step (message = the device's gradients);
- context parallel (CP, training and prefill): each sequence's tokens are split over cp
  devices in 2·cp chunks, device i taking chunks i and 2·cp−1−i so that each computes
  1/cp of the causal mask's pairs (Llama 3, arXiv 2407.21783, section 3.3.2: "we
  partition the input sequence into 2 × CP chunks so each CP rank receives two chunks for
  better load balancing"); every op works on seq/cp tokens a sequence, attention over the
  whole sequence's keys and values, which each layer all-gathers over the CP group before
  it ("our CP implementation adopts an all-gather based method where we first all-gather
  the key (K) and value (V) tensors, and then compute attention output for the local query
  (Q) tensor chunk. Although the all-gather communication latency is exposed in the
  critical path [...]"): each device sends its K and V, (cp−1) × its tokens × 2 × KV
  heads/tp × head dim × activation bytes, in cp−1 steps, not overlapped (as Llama 3 runs
  it; ring attention overlaps the same bytes with the attention, Liu et al. 2023); the
  backward pass reduce-scatters their gradients, the same bytes. Weights are replicated
  over CP, so their gradients are reduced (and ZeRO shards them) over dp × cp;
- expert parallel (EP, mixture of experts; across nodes too: ``group_links``): each device holds 1/ep of
  the routed experts and takes 1/ep of the batch through attention (data-parallel
  attention, as DeepSeek-V3 is served); its experts process the tokens routed to them
  from the whole group, which an all-to-all sends there (dispatch) and back (combine):
  message = tokens × experts per token × d_model × activation bytes. With tensor parallel
  too (tp × ep devices, Megatron-LM's expert tensor parallel = tp), each group of
  tp devices runs attention for its 1/ep of the batch, and every expert is split over the
  tp devices as the MLP is: each device's all-to-all (among the ep devices of its TP rank)
  carries its group's tokens whole, and the MLP all-reduce over tp sums the experts'
  partial outputs.

Left out: the vocabulary-parallel embedding's and LM head's own collectives (once per
step). Training's sequence parallel and gradient accumulation are in ``training``, ZeRO
sharding and the gradients' synchronisation in ``sharding``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from explorer.core.model import ops as op
from explorer.core.model.applicability import Phase
from explorer.core.model.collective_costs import all_to_all_bytes, collective_steps, ring_all_reduce_bytes
from explorer.core.model.models import ModelSpec, TransformerSpec

if TYPE_CHECKING:
    from explorer.core.model.workload import WorkloadParams

MAX_TP = 64
MAX_PP = 512
MAX_DP = 1 << 16
MAX_EP = 1024
MAX_CP = 256
EXPERT_OPS = ("expert_up", "expert_activation", "expert_down")


@dataclass(frozen=True)
class Degree:
    """One way of spreading a step: its parameter, short and long names, limit and meaning."""

    name: str  # the WorkloadParams field and session key ("tp")
    short: str  # "TP"
    long: str  # "tensor parallel"
    maximum: int
    help: str


DEGREES = (
    Degree("tp", "TP", "tensor parallel", MAX_TP,
           "devices of one node sharing every layer (two all-reduces per layer)"),
    Degree("cp", "CP", "context parallel", MAX_CP,
           "devices sharing each sequence's tokens (training, prefill: keys and values all-gathered "
           "every layer, Llama 3's context parallel)"),
    Degree("pp", "PP", "pipeline", MAX_PP, "stages of consecutive layers (a send between stages)"),
    Degree("dp", "DP", "data parallel", MAX_DP,
           "replicas, each with 1/dp of the batch (training: gradients all-reduced once a step)"),
    Degree("ep", "EP", "expert parallel", MAX_EP,
           "mixture of experts: devices sharing the experts, each with 1/ep of the batch through "
           "attention (two all-to-alls per layer)"),
)


class ParallelError(ValueError):
    """A split the model or the device cannot take; the message says which and what to do."""


@dataclass(frozen=True)
class Split:
    """How a step is spread: the degrees and what follows from them."""

    tp: int = 1
    pp: int = 1
    dp: int = 1
    ep: int = 1
    cp: int = 1
    vpp: int = 1  # layer chunks a pipeline device holds (training's interleaved 1F1B)
    trim: int = 0  # layers fewer on the first and the last chunk (an uneven pipeline split)

    @property
    def devices(self) -> int:
        return self.tp * self.cp * self.pp * self.dp * self.ep

    def rank_layers(self, layers: int) -> list[tuple[int, ...]]:
        """The layers each pipeline device holds (``rank_layers``)."""
        return rank_layers(layers, self.pp, self.vpp, self.trim)

    def used(self) -> list[tuple[Degree, int]]:
        """The degrees above 1, with their values."""
        return [(d, getattr(self, d.name)) for d in DEGREES if getattr(self, d.name) > 1]

    @property
    def batch_share(self) -> int:
        """The batch is divided by this: each data-parallel replica (and, with expert parallel,
        each device's attention) takes 1/batch_share of the sequences."""
        return self.dp * self.ep


def local_batch(batch: op.Size, share: int) -> op.Size:
    """``batch`` (a count, or an array of them) over ``share`` devices, rounded up: what the
    busiest takes."""
    if isinstance(batch, int):
        return -(-batch // share)
    return np.ceil(np.asarray(batch, dtype=float) / share)


def tensor_shard(m: TransformerSpec, tp: int) -> TransformerSpec:
    """The part of every layer one of ``tp`` devices holds, as a model of its own: 1/tp of
    the heads, of the MLP and expert widths, of the vocabulary (rounded up)."""
    if tp == 1:
        return m
    if m.heads % tp:
        raise ParallelError(f"{m.name} has {m.heads} attention heads, which {tp} devices cannot share "
                            f"evenly: choose a tensor-parallel degree that divides {m.heads}")
    if m.kv_heads >= tp and m.kv_heads % tp:
        raise ParallelError(f"{m.name} has {m.kv_heads} key/value heads, which {tp} devices cannot share "
                            "evenly: choose a tensor-parallel degree that divides them")
    widths = {"mlp_width": m.mlp_width, "expert_width": m.expert_width, "shared_width": m.shared_width}
    for name, width in widths.items():
        if width % tp:
            raise ParallelError(f"{m.name}'s {name.replace('_', ' ')} {width:,} does not divide into {tp} "
                                "equal parts: choose another tensor-parallel degree")
    return replace(m, heads=m.heads // tp, kv_heads=max(1, m.kv_heads // tp), head_dim_value=m.head_dim,
                   vocab=math.ceil(m.vocab / tp), mlp_width=m.mlp_width // tp,
                   expert_width=m.expert_width // tp, shared_width=m.shared_width // tp)


def expert_shard(m: TransformerSpec, ep: int) -> TransformerSpec:
    """The routed experts one of ``ep`` devices holds: E/ep of them, each taking k/ep of a
    token's picks on average (so the expected experts touched and the pairs computed are
    the device's share under uniform routing)."""
    if ep == 1:
        return m
    if not m.moe:
        raise ParallelError(f"{m.name} is not a mixture of experts: expert parallel needs routed experts")
    if m.experts % ep:
        raise ParallelError(f"{m.name} has {m.experts} routed experts, which {ep} devices cannot share "
                            f"evenly: choose an expert-parallel degree that divides {m.experts}")
    # (a shard's experts per token is an average, k/ep: the one spec whose count is not whole)
    return replace(m, experts=m.experts // ep, experts_per_token=m.experts_per_token / ep)  # type: ignore[arg-type]


def check_split(model: ModelSpec, split: Split) -> None:
    """Refuse a split the model cannot take (raises ParallelError naming the fix); the batch's
    split is checked with the workload's parameters."""
    layered = split.tp > 1 or split.pp > 1 or split.ep > 1 or split.cp > 1
    if layered and not isinstance(model, TransformerSpec):
        raise ParallelError("tensor, context, pipeline and expert parallel split a transformer's layers; "
                            f"{model.name} can only be split by data parallel")
    if isinstance(model, TransformerSpec):
        if split.pp > model.layers:
            raise ParallelError(f"{model.name} has {model.layers} layers: "
                                f"at most {model.layers} pipeline stages")
        tensor_shard(model, split.tp)
        expert_shard(model, split.ep)
        if split.cp > 1 and (model.mla or model.sliding_window):
            kind = "latent" if model.mla else "sliding-window"
            raise ParallelError("context parallel is modelled for full attention with separate keys and "
                                f"values; {model.name}'s {kind} attention is not: set --cp 1")
        rank_layers(model.layers, split.pp, split.vpp, split.trim, model.name)


def stage_layers(layers: int, pp: int, trim: int = 0, name: str = "the model") -> list[tuple[int, ...]]:
    """Consecutive layers of each of ``pp`` pipeline stages (or layer chunks), the first
    ones one longer where they do not divide evenly; with ``trim`` the first and the last
    hold ``trim`` layers fewer than the others (Llama 3 405B: "To balance the pipeline, we
    reduce one Transformer layer each from the first and the last stages, respectively.
    This means that the first model chunk on the first stage has only the embedding, and the
    last model chunk on the last stage has only output projection and loss calculation",
    arXiv 2407.21783, section 3.3.2)."""
    size, extra = divmod(layers + 2 * trim, pp) if pp > 1 else (layers, 0)
    sizes = [size + (1 if stage < extra else 0) for stage in range(pp)]
    if pp > 1 and trim:
        sizes[0] -= trim
        sizes[-1] -= trim
        if min(sizes[0], sizes[-1]) < 0:
            raise ParallelError(f"{name}'s {layers} layers over {pp} pipeline chunks leave the first and "
                                f"last {sizes[0] + trim} and {sizes[-1] + trim}: they cannot hold {trim} "
                                "fewer; choose a smaller --pp-trim")
    out, start = [], 0
    for n in sizes:
        out.append(tuple(range(start, start + n)))
        start += n
    return out


def rank_layers(layers: int, pp: int, vpp: int = 1, trim: int = 0,
                name: str = "the model") -> list[tuple[int, ...]]:
    """The layers each of ``pp`` pipeline devices holds: with ``vpp`` virtual stages the
    model is cut into pp × vpp chunks and device r holds chunks r, r + pp, ... (interleaved
    1F1B); ``trim``: the first and last chunks ``trim`` layers shorter (``stage_layers``)."""
    chunks = stage_layers(layers, pp * vpp, trim, name)
    return [tuple(i for chunk in chunks[r::pp] for i in chunk) for r in range(pp)]


def device_parameters(model: ModelSpec, split: Split) -> int:
    """Parameters the busiest device holds: its tensor and expert share of the layers of
    its pipeline stage, with the embedding (first stage) or the final norm and LM head
    (last stage), whichever stage holds more."""
    if not isinstance(model, TransformerSpec):
        return model.parameter_count()
    return _transformer_device_parameters(model, split)


def device_parameter_classes(model: ModelSpec, split: Split) -> dict[str, int]:
    """``device_parameters`` by class of weight (``quantization``'s classes; a model that is
    not a transformer: all of its parameters under "other")."""
    if not isinstance(model, TransformerSpec):
        return {"other": model.parameter_count()}
    return dict(_transformer_device_classes(model, split))


def _transformer_device_parameters(model: TransformerSpec, split: Split) -> int:
    return sum(count for _, count in _transformer_device_classes(model, split))


@lru_cache(maxsize=64)  # a what-if drag analyses the same model and split on every frame
def _transformer_device_classes(model: TransformerSpec, split: Split) -> tuple[tuple[str, int], ...]:
    shard = expert_shard(tensor_shard(model, split.tp), split.ep)
    router_rest = 0
    if split.ep > 1:  # every device routes its own tokens over all the experts
        router_rest = model.d_model * (model.experts - shard.experts) * (2 if model.router_bias else 1)
    ends = shard.end_parameter_classes()
    stages = split.rank_layers(model.layers)

    def stage_total(index: int, layers: tuple[int, ...]) -> dict[str, int]:
        total: dict[str, int] = {}
        for i in layers:
            for name, count in shard.layer_parameter_classes(i).items():
                total[name] = total.get(name, 0) + count
            if shard.moe_layer(i):
                total["router"] += router_rest
        last = len(stages) - 1
        held = ends if split.pp == 1 else {name: count for name, count in ends.items()
                                           if (index == 0 if name == "embedding" else index == last)}
        for name, count in held.items():
            total[name] = total.get(name, 0) + count
        return total

    busiest = max((stage_total(i, layers) for i, layers in enumerate(stages)), key=lambda t: sum(t.values()))
    return tuple(busiest.items())


def expert_parameters(model: ModelSpec, split: Split) -> int:
    """The routed experts' weights on the busiest device (its stage's MoE layers, its E/ep
    experts, its 1/tp of each): those only its expert-parallel group holds."""
    if not isinstance(model, TransformerSpec) or not model.moe:
        return 0
    shard = expert_shard(tensor_shard(model, split.tp), split.ep)
    stages = split.rank_layers(model.layers)
    layers = max(sum(1 for i in stage if model.moe_layer(i)) for stage in stages)
    return layers * shard.experts * shard.expert_parameters()


def communication_ops(model: ModelSpec, params: WorkloadParams, split: Split,
                      local_batch: op.Size) -> dict[str, list[op.Op]]:
    """The communication ops of one forward pass, by the op they come before: "attn_score"
    (CP all-gathers of the keys and values), "attn_residual" and "mlp_residual" (TP
    all-reduces, EP all-to-alls) and "end" (PP sends)."""
    out: dict[str, list[op.Op]] = {"attn_score": [], "attn_residual": [], "mlp_residual": [], "end": []}
    if not isinstance(model, TransformerSpec):
        return out
    ab, d = params.act_bytes, model.d_model
    tokens = local_batch * params.device_tokens
    message = tokens * d * ab
    every = tuple(range(model.layers))
    if split.tp > 1:
        n = split.tp
        for where, name in (("attn_residual", "attn_all_reduce"), ("mlp_residual", "mlp_all_reduce")):
            out[where].append(op.Op(name, op.Role.ALL_REDUCE, op.LINK, (n - 1) * tokens * d // n,
                                    ring_all_reduce_bytes(message, n), every,
                                    f"sum of {n} partial outputs over {n} devices",
                                    link="node", steps=collective_steps(op.Role.ALL_REDUCE, n),
                                    algorithm=params.allreduce, group=n))
    if split.cp > 1:
        n, shard = split.cp, tensor_shard(model, split.tp)
        kv = tokens * 2 * shard.kv_heads * shard.head_dim * ab  # this device's keys and values
        out["attn_score"].append(op.Op("cp_kv_all_gather", op.Role.ALL_GATHER, op.LINK, 0, (n - 1) * kv,
                                       every,
                                       f"keys and values all-gathered over the {n} devices sharing each "
                                       "sequence, exposed (Llama 3's context parallel)", link="context",
                                       steps=collective_steps(op.Role.ALL_GATHER, n), group=n))
    if split.ep > 1:
        n = split.ep
        routed = tuple(i for i in every if model.moe_layer(i))
        sent = all_to_all_bytes(message * model.experts_per_token, n)
        for name, what in (("moe_dispatch", "tokens to their experts"),
                           ("moe_combine", "expert outputs back")):
            out["mlp_residual"].append(op.Op(name, op.Role.ALL_TO_ALL, op.LINK, 0, sent, routed,
                                             f"all-to-all over {n} devices: {what}", link="node",
                                             steps=collective_steps(op.Role.ALL_TO_ALL, n), group=n,
                                             fanout=model.experts_per_token, dispatch=params.dispatch))
    if split.pp > 1:
        out["end"] += stage_sends(model, params, split, message)
    return out


def stage_sends(model: TransformerSpec, params: WorkloadParams, split: Split,
                message: op.Size) -> list[op.Op]:
    """A pipeline's sends: at the end of every stage but the last, or in training of every
    layer chunk (pp × vpp of them, interleaved 1F1B). Training with tensor parallel sends
    1/tp of the activations from each device of the group and gathers them again over the
    node link (Megatron-LM's scatter/gather; with sequence parallel they are already
    split); inference sends them whole from every device (as serving engines do)."""
    train = params.phase == Phase.TRAIN
    chunks = split.pp * (params.vpp if train else 1)
    # the last layer of each chunk but the last (an empty first chunk, the embedding alone: layer 0)
    ends, start = [], 0
    for chunk in stage_layers(model.layers, chunks, split.trim)[:-1]:
        start += len(chunk)
        ends.append(max(start - 1, 0))
    boundaries = tuple(ends)
    scatter = train and split.tp > 1
    what = f"activations to the next of {chunks} {'layer chunks' if chunks > split.pp else 'pipeline stages'}"
    sends = [op.Op("stage_send", op.Role.SEND_RECV, op.LINK, 0, message / split.tp if scatter else message,
                   boundaries, what + (f", 1/{split.tp} from each device of the TP group" if scatter else ""),
                   link="pipeline", steps=1)]
    if scatter and not params.sp:
        n = split.tp
        sends.append(op.Op("stage_gather", op.Role.ALL_GATHER, op.LINK, 0, (n - 1) * message / n, boundaries,
                           f"the received activations gathered over the {n} devices of the TP group",
                           link="node", steps=collective_steps(op.Role.ALL_GATHER, n), group=n))
    return sends
