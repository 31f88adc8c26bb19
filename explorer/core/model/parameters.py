"""The workload's parameters, declared once.

Each row says what a parameter is (kind, default, limits, unit), how people see it (label,
help, when it applies) and where it lives (the ``WorkloadParams`` field and session key,
and the command-line flag). Validation (``WorkloadParams``), the session reader and writer,
the commands' options (``analyze``, ``explain``, ``export``, ``lab``) and
``roofline-explorer params`` loop over ``PARAMETERS``: a new parameter is one row here plus
its maths. The parameter reference in docs/commands.md is printed from this table (a test checks it).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from explorer.core.files.datafile import brief
from explorer.core.hardware.efficiency import ATTENTION_KERNELS
from explorer.core.hardware.hardware import DeviceKind
from explorer.core.model.applicability import (
    ALWAYS,
    INFERENCE,
    TRAINING,
    Applies,
    Condition,
    Needs,
    Outside,
    Phase,
)
from explorer.core.model.collectives import ALGORITHMS
from explorer.core.model.parallel import DEGREES, Degree

PHASES = tuple(phase.value for phase in Phase)  # plain strings: the choices people type and files hold
WORKLOAD_DTYPES = ("fp32", "bf16", "fp16", "fp8", "int8")
# Weight-only formats below 8 bits: weights are stored so and dequantised to ``dtype`` to
# compute (they need no arithmetic of their own on the device). Each group of values
# shares a scale, which is read with them:
# - int4, fp4: 4-bit values, a scale of ``weight_scale`` per ``weight_group`` values (GPTQ,
#   AWQ: 128 values, an fp16 scale, +1/32 of the 4-bit bytes);
# - nvfp4: 4-bit (E2M1) values, an fp8 (E4M3) scale per 16 (NVIDIA Blackwell; the one
#   fp32 scale per tensor is left out), 4.5 bits a value;
# - mxfp4: 4-bit (E2M1) values, an 8-bit (E8M0) scale per 32 (OCP Microscaling), 4.25 bits;
# - q8_0: ggml's 8-bit blocks, 32 int8 values and one fp16 scale (ggml-common.h's block_q8_0:
#   "ggml_half d; // delta" and "int8_t qs[QK8_0]; // quants", QK8_0 = 32), 8.5 bits a value:
#   llama.cpp's Q8_0 checkpoints, multiplied by int8 activations on CPUs (--dtype int8).
WEIGHT_FORMATS = ("int4", "fp4", "nvfp4", "mxfp4", "q8_0")
SCALE_DTYPES = ("fp32", "fp16", "bf16", "fp8")
ATTENTIONS = ("naive", "fused")
# How a mixture of experts' tokens pick experts, for the weights a step reads: uniformly
# at random and independently (the expected number of distinct experts touched), or the
# worst case, every expert.
ROUTINGS = ("uniform", "all")
RECOMPUTES = ("none", "selective", "full")
MAX_ZERO = 3
# Training's gradients: auto keeps them as Megatron-LM does (fp32 when training in bf16, its
# megatron/training/arguments.py: "bfloat16 requires gradient accumulation and all-reduce to
# be done in fp32"; the training precision otherwise); fp32 always; 16-bit in the training
# precision (the ZeRO paper's and DeepSpeed's accounting, 2 bytes a parameter).
GRAD_DTYPES = ("auto", "fp32", "16-bit")
MAX_VPP = 64
# What times a step is given: its roofline bound alone, or beside it the time expected from
# the efficiency real kernels reach on the device's family (explorer.core.hardware.efficiency).
EFFICIENCIES = ("published", "calibrated", "bound")
# The serving or training engine whose host costs and kernels the expected time includes
# (fitted to its published runs: explorer.core.analysis.engine_terms); typical: the fit over
# every engine's runs together. Only engines with published runs are offered.
ENGINES = ("typical", "tensorrt-llm", "vllm", "vllm-0.5", "lmdeploy", "gpt-fast", "llama.cpp", "ik-llama.cpp",
           "itrex", "megatron-lm")
# Upper bounds on the parameters (far beyond any real step). Counts that still overflow
# 64-bit integers are reported by the analysis as a clear error.
MAX_BATCH = 1 << 20
MAX_TOKENS = 1 << 22
MAX_WEIGHT_GROUP = 1 << 16
# The share of a device's usable memory a serving engine fills with weights, KV cache and
# activations (the rest: CUDA context, allocator, workspaces). 0.9 is vLLM's default
# gpu_memory_utilization through 2025 (vllm/config/cache.py at c1d86421:
# https://github.com/vllm-project/vllm/blob/c1d86421174a87056edc90a41dc9942391509e84/vllm/config/cache.py);
# newer releases default to 0.92.
DEFAULT_MEMORY_FRACTION = 0.9
MIN_MEMORY_FRACTION = 0.05


# int4 and fp4 weights carry group scales whose size and precision are parameters; the
# block formats (nvfp4, mxfp4) fix their own.
GROUPED = Applies(when=((Condition("weight_dtype", frozenset({"int4", "fp4"})),),))


class Kind(Enum):
    """What values a parameter takes."""

    COUNT = "count"  # a whole number from 1 to its maximum
    SHARE = "share"  # a fraction from its minimum to 1
    CHOICE = "choice"  # one of its choices
    FLAG = "flag"  # true or false


@dataclass(frozen=True)
class Parameter:
    """One workload parameter. ``name`` is the ``WorkloadParams`` field and the session key;
    a default of None means "as another parameter" (said in ``help``). ``always_saved``
    parameters are written to every session; the others only when not at their default.
    In the window's workload panel a parameter is a row called ``label`` (a check box
    captioned ``caption``), or shares the row ``row`` with its neighbours, each captioned;
    ``applies`` says where it means something (``applicability``)."""

    name: str
    kind: Kind
    default: Any
    label: str
    help: str
    unit: str = ""
    choices: tuple[str, ...] = ()
    minimum: float = 1
    maximum: float = 1
    applies: Applies = ALWAYS
    always_saved: bool = False
    row: str = ""
    caption: str = ""
    keeps_place: bool = False  # the panel greys it out where it does not apply (else hides it)
    zero_means: str = ""  # a count whose 0 stands for something: what the panel's box shows for it

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def shown_default(self) -> str:
        """"decode", "512", "false", "as dtype" (None: as another parameter)."""
        if self.default is None:
            return "as dtype"
        return str(self.default).lower() if isinstance(self.default, bool) else str(self.default)

    @property
    def limits(self) -> str:
        """"1 to 1,048,576", "0.05 to 1", "one of prefill, decode, train", "true or false"."""
        if self.kind is Kind.COUNT:
            return f"{int(self.minimum)} to {int(self.maximum):,}"
        if self.kind is Kind.SHARE:
            return f"{self.minimum:g} to {self.maximum:g}"
        if self.kind is Kind.CHOICE:
            return "one of " + ", ".join(self.choices)
        return "true or false"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind.value, "default": self.default, "limits": self.limits,
                "unit": self.unit, "flag": self.flag, "session_key": self.name,
                "applies": self.applies.to_dict(), "label": self.label, "help": self.help}


# Tensor and pipeline parallel split a transformer's layers, expert parallel its experts;
# data parallel replicates any model.
DEGREE_NEEDS = {"tp": Needs.TRANSFORMER, "pp": Needs.TRANSFORMER, "ep": Needs.MOE, "cp": Needs.TRANSFORMER}
# Context parallel splits the tokens of a prompt or a training sequence.
DEGREE_PHASES = {"cp": frozenset({Phase.PREFILL, Phase.TRAIN})}
# How an expert all-to-all crosses nodes (``group_links``): flat, as NCCL's all-to-all;
# two-hop, as DeepSeek-V3's kernels (DeepEP): over the network once a node, then NVLink.
DISPATCHES = ("flat", "two-hop")
MAX_PP_TRIM = 64
MAX_THREADS = 4096  # beyond any CPU's cores (a count at or above the cores': every core)


def _degree(degree: Degree) -> Parameter:
    own_row = degree.name in DEGREE_PHASES  # (a row of its own, named in words: the Devices row is full)
    label = degree.long.capitalize() if own_row else f"{degree.short} ({degree.long})"
    return Parameter(degree.name, Kind.COUNT, 1, label,
                     f"{degree.long.capitalize()}: {degree.help}", unit="devices", maximum=degree.maximum,
                     applies=Applies(DEGREE_PHASES.get(degree.name, Applies().phases),
                                     DEGREE_NEEDS.get(degree.name, Needs.ANY)),
                     row="" if own_row else "Devices", caption=degree.short, keeps_place=True)


# In the order the workload panel shows them and a session file lists them.
PARAMETERS = (
    Parameter("phase", Kind.CHOICE, "decode", "Phase",
              "prefill: process the prompt; decode: one new token per sequence; train: forward, "
              "backward and the optimizer over whole sequences", choices=PHASES, always_saved=True,
              applies=Applies(needs=Needs.TRANSFORMER), keeps_place=True),
    Parameter("batch", Kind.COUNT, 1, "Batch", "Sequences (or images) per step", unit="sequences",
              maximum=MAX_BATCH, always_saved=True, keeps_place=True),
    Parameter("seq", Kind.COUNT, 512, "Prompt tokens",
              "Tokens per sequence (prefill: the prompt; train: the sequence)", unit="tokens",
              maximum=MAX_TOKENS, always_saved=True, keeps_place=True,
              applies=Applies(frozenset({Phase.PREFILL, Phase.TRAIN}), Needs.TRANSFORMER)),
    Parameter("context", Kind.COUNT, 1024, "Context", "Cached tokens each new token attends over (decode)",
              unit="tokens", maximum=MAX_TOKENS, always_saved=True, keeps_place=True,
              applies=Applies(frozenset({Phase.DECODE}), Needs.TRANSFORMER)),
    Parameter("prefix", Kind.COUNT, 0, "Cached prefix",
              "Prefill: tokens already in the KV cache before the prompt (a shared prefix found by prefix "
              "caching, or the chunks a chunked prefill has done): the prompt's tokens attend over them "
              "too, and they are not computed again", unit="tokens", minimum=0, maximum=MAX_TOKENS,
              applies=Applies(frozenset({Phase.PREFILL}), Needs.TRANSFORMER, outside=Outside.DEFAULT)),
    Parameter("dtype", Kind.CHOICE, "bf16", "Precision",
              "Precision of the arithmetic and of activations (with fp8 and int8 only the matrix "
              "products run in 8 bits: activations stay bf16 between ops)",
              choices=WORKLOAD_DTYPES, always_saved=True, keeps_place=True),
    Parameter("weight_dtype", Kind.CHOICE, None, "Weights",
              "Precision of stored weights (default: the compute precision; a model read from a "
              "config.json: its torch_dtype; a quantized checkpoint: the precision its "
              "quantization_config gives each module, scales included). Giving it overrides the "
              "file's. int4, fp4, nvfp4, mxfp4 and q8_0 (ggml's 8-bit blocks: 32 values and an fp16 "
              "scale) are dequantised to the compute precision (they run at its peak); their group "
              "scales are read with them", choices=WORKLOAD_DTYPES + WEIGHT_FORMATS,
              applies=Applies(INFERENCE, outside=Outside.DEFAULT), keeps_place=True),
    Parameter("weight_group", Kind.COUNT, 128, "Weight group",
              "int4 / fp4 weights: values sharing one scale (GPTQ and AWQ use 128; nvfp4, mxfp4 and "
              "q8_0 have fixed blocks of 16, 32 and 32)", unit="values", maximum=MAX_WEIGHT_GROUP,
              applies=GROUPED, row="Weight scales", caption="group"),
    Parameter("weight_scale", Kind.CHOICE, "fp16", "Weight scale",
              "int4 / fp4 weights: the precision of the group scales", choices=SCALE_DTYPES,
              applies=GROUPED, row="Weight scales", caption="scale"),
    Parameter("kv_dtype", Kind.CHOICE, None, "KV cache",
              "Precision of the KV cache (default: the compute precision)", choices=WORKLOAD_DTYPES,
              applies=Applies(INFERENCE, Needs.TRANSFORMER, outside=Outside.DEFAULT), keeps_place=True),
    Parameter("attention", Kind.CHOICE, "fused", "Attention",
              "naive writes the score matrix to memory; fused keeps it on chip", choices=ATTENTIONS,
              always_saved=True, applies=Applies(needs=Needs.TRANSFORMER), keeps_place=True),
    Parameter("causal", Kind.FLAG, True, "Causal mask",
              "A decoder's causal mask: prefill and training compute only the query-key pairs the "
              "mask keeps (t(t+1)/2 of t²), as kernels that skip masked tiles do (FlashAttention). "
              "Bytes stay: every key and value is still read. Off (--no-causal): the full square, as "
              "some papers count it", caption="skip masked scores",
              applies=Applies(frozenset({Phase.PREFILL, Phase.TRAIN}), Needs.TRANSFORMER)),
    Parameter("attention_kernel", Kind.CHOICE, "fa2", "Attention kernel",
              "Fused attention on a prompt or in training: the kernel whose share of the matrix peak the "
              "expected time charges, forward and backward (resources/efficiency). fa2: FlashAttention 2, "
              "what the validated engines ran (33 % of an H100's peak); fa3: FlashAttention 3; cudnn: "
              "cuDNN's fused attention. fa3 and cudnn are offered where their speed is published (H100 "
              "and H200: FlashAttention 3 runs on Hopper GPUs only); elsewhere they are refused. The "
              "bound does not change", choices=tuple(ATTENTION_KERNELS),
              applies=Applies(frozenset({Phase.PREFILL, Phase.TRAIN}), Needs.TRANSFORMER, when=(
                  (Condition("attention", frozenset({"fused"})),
                   Condition("efficiency", frozenset({"published", "calibrated"}))),))),
    *(_degree(d) for d in DEGREES),
    Parameter("pp_trim", Kind.COUNT, 0, "Pipeline ends",
              "With pipeline parallel: layers fewer on the first and the last stage (with virtual stages, "
              "on the first and the last layer chunk) than on the others, so that the embedding and the "
              "LM head with the loss take their place, as Meta balanced Llama 3 405B's pipeline (1: "
              "\"the first model chunk on the first stage has only the embedding\"). The step's time "
              "takes the stages as balanced; memory counts the first stage's layers", unit="layers",
              minimum=0, maximum=MAX_PP_TRIM, applies=Applies(needs=Needs.TRANSFORMER, when=(
                  (Condition("pp", at_least=2),),))),
    Parameter("dispatch", Kind.CHOICE, "flat", "Expert dispatch",
              "Expert parallel over more than one node: how the all-to-all crosses them. flat: NCCL's "
              "all-to-all, each token to each of its experts' devices (Megatron-LM's alltoall "
              "dispatcher); two-hop: once over the network to each node its experts are on, then over "
              "NVLink within it, overlapped (DeepSeek-V3's kernels, DeepEP)", choices=DISPATCHES,
              applies=Applies(needs=Needs.MOE, when=((Condition("ep", at_least=2),),))),
    Parameter("allreduce", Kind.CHOICE, "auto", "All-reduce",
              "The all-reduce algorithm of tensor parallel and of training's gradients. auto: as the "
              "software picks (at inference over NVLink the serving engines' one-shot or two-shot "
              "custom all-reduce up to 8 MiB, else NCCL); nccl: the fastest by NCCL's cost model "
              "(ring or tree with the LL, LL128 or Simple protocol, NVLS where the switch adds); or "
              "one of them forced (one the link cannot run falls back to NCCL's pick)",
              choices=ALGORITHMS, applies=Applies(when=(
                  (Condition("tp", at_least=2),),
                  (Condition("phase", frozenset({Phase.TRAIN})), Condition("dp", at_least=2)),
                  (Condition("phase", frozenset({Phase.TRAIN})), Condition("ep", at_least=2))))),
    Parameter("sp", Kind.FLAG, False, "Sequence parallel",
              "Training with tensor parallel: the norms, dropout and residual adds (the work every "
              "device would repeat) split by tokens across the TP group, so their activations shrink "
              "by tp too; each all-reduce becomes a reduce-scatter and an all-gather, the same bytes "
              "(Korthikanti et al. 2022)", applies=TRAINING,
              caption="split norms and activations across TP"),
    Parameter("recompute", Kind.CHOICE, "none", "Recompute",
              "Training: activations recomputed in the backward pass instead of kept. selective: the "
              "attention scores and their softmax (what a naive kernel stores; a fused kernel keeps "
              "none and already recomputes them); full: every layer's ops, each layer keeping only its "
              "input (one more forward: ×4 instead of ×3 the forward's work)", choices=RECOMPUTES,
              applies=TRAINING),
    Parameter("zero", Kind.COUNT, 0, "ZeRO stage",
              "Training with data parallel: shard across the data-parallel replicas 1: the optimizer "
              "state (Megatron's distributed optimizer), 2: and the gradients, 3: and the weights "
              "(gathered layer by layer, forward and backward). "
              "0: every replica holds all of it. 2 and 3 gather and reduce-scatter every micro-batch, "
              "and are refused with pipeline parallel (as DeepSpeed refuses them)", minimum=0,
              maximum=MAX_ZERO, applies=TRAINING, row="Sharding", caption="ZeRO stage"),
    Parameter("grad_dtype", Kind.CHOICE, "auto", "Gradients",
              "Training: the precision gradients are kept, accumulated and reduced in. auto: as "
              "Megatron-LM does (fp32 when training in bf16: 6 + 12/d bytes a parameter with ZeRO-1 "
              "over d replicas; 16-bit in fp16); fp32; 16-bit: in the training precision (the ZeRO "
              "paper's and DeepSpeed's accounting, 4 + 12/d)", choices=GRAD_DTYPES, applies=TRAINING,
              row="Sharding", caption="gradients"),
    Parameter("micro_batch", Kind.COUNT, 0, "Micro-batch",
              "Training: sequences a device (or data-parallel replica) runs at once; its share of the "
              "batch runs as local batch / micro-batch accumulation steps (the global batch is "
              "micro-batch × steps × DP). Activations are held for one micro-batch (with a pipeline, "
              "up to pp of them). 0: one sequence with a pipeline, the whole local batch without",
              unit="sequences", minimum=0, maximum=MAX_BATCH, applies=TRAINING, zero_means="auto"),
    Parameter("vpp", Kind.COUNT, 1, "Virtual stages",
              "Training with pipeline parallel: layer chunks per device (interleaved 1F1B, Narayanan et "
              "al. 2021): the bubble shrinks by this factor, the sends grow by it", unit="chunks",
              maximum=MAX_VPP, applies=TRAINING, row="Sharding", caption="virtual stages"),
    Parameter("memory_fraction", Kind.SHARE, DEFAULT_MEMORY_FRACTION, "Memory share",
              "Share of the device's usable memory a serving engine may fill with weights, KV cache "
              f"and activations (vLLM's gpu_memory_utilization; {DEFAULT_MEMORY_FRACTION:.0%} is its "
              "default). \"Fits\" and the largest batch use it. A training step may fill all of it (its "
              "frameworks allocate as they go)", unit="share", minimum=MIN_MEMORY_FRACTION,
              applies=Applies(INFERENCE)),
    Parameter("threads", Kind.COUNT, 0, "Threads",
              "On a CPU: the threads the run uses (llama.cpp's -t), one to a core, the fastest cores "
              "first (a hybrid CPU's performance cores before its efficiency cores). Every compute roof "
              "is then that of the cores used (a matrix unit a cluster of cores shares counts whole once "
              "a thread reaches it): a prompt's arithmetic slows, a decode bound by its bytes does not "
              "(memory stays the catalogue's). 0: every core", unit="threads", minimum=0,
              maximum=MAX_THREADS, applies=Applies(devices=frozenset({DeviceKind.CPU})),
              zero_means="every core"),
    Parameter("routing", Kind.CHOICE, "uniform", "Expert weights",
              "Mixture of experts: the expert weights a step reads. uniform: the experts its tokens "
              "touch if each picks its experts uniformly at random, E·(1 − (1 − k/E)^tokens); all: "
              "every expert (the worst case)", choices=ROUTINGS, applies=Applies(needs=Needs.MOE)),
    Parameter("efficiency", Kind.CHOICE, "published", "Times",
              "bound: the roofline bound alone (every op at the datasheet's peaks); published: beside "
              "it, the expected time at the efficiency kernels were measured to reach on the device's "
              "family (resources/efficiency; none published for some devices); calibrated: at the "
              "efficiency `roofline-explorer calibrate` measured on the device", choices=EFFICIENCIES,
              keeps_place=True, row="Times"),
    Parameter("engine", Kind.CHOICE, "typical", "Engine",
              "the serving or training engine the expected time is for: its host's costs a step, a "
              "request and a kernel, fitted to its published runs (resources/efficiency/engines.yaml); "
              "typical: the fit over every engine's runs together", choices=ENGINES, keeps_place=True,
              row="Times", caption="engine"),
)
BY_NAME = {p.name: p for p in PARAMETERS}
# Rows that only training uses: a step of another phase keeps them at their defaults.
TRAINING_ONLY = tuple(p.name for p in PARAMETERS if p.applies.phases == {Phase.TRAIN})


def held_outside(phase: str) -> tuple[Parameter, ...]:
    """The parameters a step of ``phase`` holds at their defaults (``Outside.DEFAULT`` rows
    whose phases do not include it)."""
    return tuple(p for p in PARAMETERS
                 if p.applies.outside is Outside.DEFAULT and phase not in p.applies.phases)


class ParameterError(ValueError):
    """A value a parameter cannot take; the message names the parameter and its limits."""


def check(parameter: Parameter, value: Any) -> Any:
    """``value`` if ``parameter`` can take it (a share as a float), else ParameterError."""
    name = parameter.name
    if value is None and parameter.default is None:
        return None
    if parameter.kind is Kind.CHOICE:
        if value not in parameter.choices:
            raise ParameterError(f"{name} must be one of {', '.join(parameter.choices)}; got {brief(value)}")
    elif parameter.kind is Kind.FLAG:
        if not isinstance(value, bool):
            raise ParameterError(f"{name} must be true or false, got {brief(value)}")
    elif parameter.kind is Kind.COUNT:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ParameterError(f"{name} must be a whole number, got {brief(value)}")
        if value < parameter.minimum:
            raise ParameterError(f"{name} must be at least {int(parameter.minimum)}, got {value}")
        if value > parameter.maximum:
            raise ParameterError(f"{name} must be at most {int(parameter.maximum):,}, got {value:,}")
    else:
        if isinstance(value, bool) or not isinstance(value, int | float) \
                or not parameter.minimum <= value <= parameter.maximum:
            raise ParameterError(f"{name} must be a share between {parameter.minimum:g} and "
                                 f"{parameter.maximum:g}, got {value!r}")
        return float(value)
    return value


def saved(parameter: Parameter, value: Any) -> bool:
    """Whether a session file writes ``value`` of ``parameter`` (defaults are left out)."""
    return parameter.always_saved or value != parameter.default


def reference_table() -> str:
    """The parameters as a Markdown table (docs/commands.md's reference is this text)."""
    rows = ["| session key | flag | kind | default | limits | unit | applies to | meaning |",
            "|---|---|---|---|---|---|---|---|"]
    for p in PARAMETERS:
        rows.append(f"| `{p.name}` | `{p.flag}` | {p.kind.value} | {p.shown_default} | {p.limits} | "
                    f"{p.unit or '–'} | {p.applies.describe()} | {p.help} |")
    return "\n".join(rows)
