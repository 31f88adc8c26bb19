"""A step's workload parameters (``WorkloadParams``), checked against the parameter table.

What each parameter means for a step's ops is in ``step_ops`` (``build_ops``), whose
docstring states the conventions; the parameters themselves, their limits and where they
apply are declared once in ``parameters``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from explorer.core.model import parallel, training
from explorer.core.model.applicability import Phase
from explorer.core.model.parameters import (
    DEFAULT_MEMORY_FRACTION,
    MAX_BATCH,  # noqa: F401  (re-exported: a step's limit, where the workload is imported)
    PARAMETERS,
    WEIGHT_FORMATS,
    Kind,
    ParameterError,
    check,
    held_outside,
)
from explorer.core.units import DTYPE_BYTES

# Formats of fixed blocks (parameters.WEIGHT_FORMATS): bits a value, values per scale, bits of the scale.
BLOCK_FORMATS = {"nvfp4": (4, 16, 8), "mxfp4": (4, 32, 8), "q8_0": (8, 32, 16)}


class WorkloadError(ValueError):
    """Workload parameters that cannot describe a step; the message names the parameter."""


# Arithmetic precisions whose activations are stored at another one between ops.
# https://docs.nvidia.com/deeplearning/transformer-engine/user-guide/examples/fp8_primer.html
STORED_ACTIVATIONS = {"fp8": "bf16", "int8": "bf16"}
# Why a value is refused outside its phases, where the reason is not plain from the name.
WHY_HELD = {"prefix": ": a decode step's cached tokens are its context",
            "weight_dtype": ": training keeps weights in the compute precision (leave it unset)",
            "kv_dtype": ": a training step has no KV cache (leave it unset)"}


@dataclass(frozen=True)
class WorkloadParams:
    """One inference step: who runs (batch), how much (seq or context), at which precision.

    ``dtype`` is the precision of activations and of the arithmetic; ``weight_dtype``
    and ``kv_dtype`` default to it (set them for weight-only or KV-cache quantisation).
    ``memory_fraction`` is the share of the device's usable memory the step may fill.
    """

    phase: Phase = Phase.DECODE  # a string is read as its Phase
    batch: int = 1
    seq: int = 512
    context: int = 1024
    prefix: int = 0  # prefill: tokens already cached before the prompt (prefix caching, chunked prefill)
    dtype: str = "bf16"
    weight_dtype: str | None = None
    kv_dtype: str | None = None
    attention: str = "fused"
    memory_fraction: float = DEFAULT_MEMORY_FRACTION
    routing: str = "uniform"
    causal: bool = True  # prefill and training skip the masked half of the score matrix (FLOPs only)
    attention_kernel: str = "fa2"  # fused attention's kernel: its shares of the matrix peak (expected time)
    weight_group: int = 128  # int4 / fp4 weights: values sharing one scale
    weight_scale: str = "fp16"  # int4 / fp4 weights: the scales' precision
    tp: int = 1  # tensor parallel: devices sharing every layer
    pp: int = 1  # pipeline parallel: stages of consecutive layers
    dp: int = 1  # data parallel: replicas, each with 1/dp of the batch
    ep: int = 1  # expert parallel: devices sharing the routed experts
    cp: int = 1  # context parallel: devices sharing each sequence's tokens (training, prefill)
    pp_trim: int = 0  # layers fewer on the first and the last pipeline stage (or chunk)
    threads: int = 0  # a CPU's threads, one to a core (0: every core): the cores whose roofs a step gets
    dispatch: str = "flat"  # an expert all-to-all across nodes: flat (NCCL) or two-hop (DeepEP)
    allreduce: str = "auto"  # the all-reduce algorithm (explorer.core.model.collectives)
    sp: bool = False  # training: sequence parallel across the tensor-parallel group
    recompute: str = "none"  # training: activations recomputed in the backward pass (or selective)
    zero: int = 0  # training: ZeRO stage, state sharded across the data-parallel replicas
    grad_dtype: str = "auto"  # training: the gradients' precision (auto: as Megatron-LM keeps them)
    micro_batch: int = 0  # training: sequences a replica runs at once (0: 1 with a pipeline, else all)
    vpp: int = 1  # training: virtual pipeline stages (interleaved 1F1B)
    efficiency: str = "published"  # the times given: the bound alone, or an expected time beside it
    engine: str = "typical"  # whose fitted host costs the expected time includes (engine_terms)

    def __post_init__(self) -> None:
        for parameter in PARAMETERS:  # each value within its row's kind and limits
            try:
                value = check(parameter, getattr(self, parameter.name))
            except ParameterError as exc:
                raise WorkloadError(str(exc)) from None
            if parameter.kind is Kind.SHARE:
                object.__setattr__(self, parameter.name, value)
        object.__setattr__(self, "phase", Phase(self.phase))
        if self.phase == Phase.TRAIN and self.dtype not in training.TRAINING_DTYPES:
            raise WorkloadError(f"training runs in {', '.join(training.TRAINING_DTYPES)}; got dtype "
                                f"{self.dtype} (lower precisions are for inference here)")
        if self.phase == Phase.TRAIN:
            self._check_training()
        if self.cp > 1:
            self._check_context_parallel()
        for parameter in held_outside(self.phase):  # a value where it means nothing is a mistake
            value = getattr(self, parameter.name)
            if value != parameter.default and not (parameter.default is None and value == self.dtype):
                raise WorkloadError(f"{parameter.name} applies to {parameter.applies.phase_words()}; "
                                    f"got {value} in phase {self.phase}{WHY_HELD.get(parameter.name, '')}")

    def _check_training(self) -> None:
        """Refuse what a training framework refuses: ZeRO-2/3 with a pipeline, a micro-batch
        that does not divide the local batch, 16-bit gradients of fp32 training."""
        if self.zero >= 2 and self.pp > 1:
            # DeepSpeed's PipelineEngine (deepspeed/runtime/pipe/engine.py at 0050fdad, read
            # through github.com/microsoft/DeepSpeed): "assert
            # self.zero_optimization_stage() < ZeroStageEnum.gradients, "ZeRO-2 and ZeRO-3 are
            # incompatible with pipeline parallelism"": each stage would gather its weights and
            # reduce-scatter its gradients for every one of its micro-batches.
            what = "gathers the weights and reduce-scatters" if self.zero >= 3 else "reduce-scatters"
            raise WorkloadError(f"ZeRO-{self.zero} {what} the gradients for every micro-batch, which "
                                f"DeepSpeed refuses with pipeline parallel (PP {self.pp}): use --zero 1, "
                                "or --pp 1")
        if self.micro_batch and self.local_batch % self.micro_batch:
            raise WorkloadError(f"a micro-batch of {self.micro_batch} sequences does not divide the local "
                                f"batch of {self.local_batch} (batch {self.batch} over "
                                f"{self.split.batch_share} replicas): choose a micro-batch that divides "
                                f"{self.local_batch}")
        if self.grad_dtype == "16-bit" and DTYPE_BYTES[self.dtype] > 2:
            raise WorkloadError("16-bit gradients need 16-bit training (bf16 or fp16); "
                                f"got dtype {self.dtype}")

    def _check_context_parallel(self) -> None:
        """Context parallel splits a prompt's or a training sequence into 2·cp chunks."""
        if self.phase == Phase.DECODE:
            raise WorkloadError("context parallel splits a prompt or a training sequence; a decode step "
                                "has one new token a sequence: set --cp 1")
        if self.seq % (2 * self.cp):
            raise WorkloadError("context parallel cuts each sequence into 2 × CP = "
                                f"{2 * self.cp} equal chunks "
                                f"(Llama 3's load balancing); {self.seq:,} tokens do not divide: choose a "
                                f"sequence length that is a multiple of {2 * self.cp}")
        if self.prefix:
            raise WorkloadError("context parallel with a cached prefix is not modelled: "
                                "set --prefix 0 or --cp 1")

    @classmethod
    def from_options(cls, options: Any) -> WorkloadParams:
        """The parameters an object's attributes name, one per row of the parameter table
        (parsed command-line options); a missing attribute takes its row's default."""
        return cls(**{p.name: getattr(options, p.name, p.default) for p in PARAMETERS})

    @property
    def local_batch(self) -> int:
        """Sequences the busiest device (or data-parallel replica) takes: the batch over
        ``split.batch_share``, rounded up where it does not divide (the others take fewer)."""
        return int(parallel.local_batch(self.batch, self.split.batch_share))

    @property
    def micro_sequences(self) -> int:
        """Sequences in one micro-batch: ``micro_batch``, or by default one with a pipeline
        (Megatron-LM's 1F1B) and the whole local batch without one."""
        if self.micro_batch:
            return self.micro_batch
        return 1 if self.pp > 1 else self.local_batch

    @property
    def accumulation_steps(self) -> int:
        """Micro-batches a replica runs a step (gradient accumulation steps)."""
        return -(-self.local_batch // self.micro_sequences)

    @property
    def grad_bytes(self) -> int:
        """Bytes of a gradient in training: fp32, or the training precision (``grad_dtype``;
        auto: fp32 when training in bf16, as Megatron-LM does)."""
        if self.grad_dtype == "fp32" or (self.grad_dtype == "auto" and self.dtype == "bf16"):
            return 4
        return self.act_bytes

    @property
    def budget_share(self) -> float:
        """The share of a device's usable memory the step may fill: ``memory_fraction`` at
        inference (what a serving engine allocates up front, vLLM's gpu_memory_utilization);
        all of it in training, whose frameworks allocate as they go."""
        return 1.0 if self.phase == Phase.TRAIN else self.memory_fraction

    @property
    def act_bytes(self) -> int:
        """Bytes of an activation between ops. fp8 and int8 arithmetic keeps them at 16 bits:
        only the matrix products run in 8 bits, each quantising its input on the fly, while
        the residual stream, norms, softmax and the all-reduces stay in bf16 (NVIDIA's
        Transformer Engine FP8 primer; TensorRT-LLM and vLLM serve FP8 models so)."""
        return DTYPE_BYTES[STORED_ACTIVATIONS.get(self.dtype, self.dtype)]

    @property
    def weight_bytes(self) -> float:
        """Bytes per stored weight, with its share of the group scales for block formats
        (int4 in groups of 128 with fp16 scales: 0.515625; q8_0: 34 bytes a block of 32)."""
        dtype = self.weight_dtype or self.dtype
        if dtype not in WEIGHT_FORMATS:
            return DTYPE_BYTES[dtype]
        bits, group, scale_bits = BLOCK_FORMATS.get(
            dtype, (4, self.weight_group, 8 * DTYPE_BYTES[self.weight_scale]))
        return (bits + scale_bits / group) / 8

    @property
    def kv_bytes(self) -> int:
        return DTYPE_BYTES[self.kv_dtype or self.dtype]

    @property
    def query_tokens(self) -> int:
        """Tokens each sequence processes in this step."""
        return 1 if self.phase == Phase.DECODE else self.seq

    @property
    def device_tokens(self) -> int:
        """Tokens of each sequence one device processes: the query tokens, over the CP
        group's devices with context parallel."""
        return self.query_tokens // self.cp

    @property
    def kv_tokens(self) -> int:
        """Tokens each sequence attends over (and holds in its KV cache): a prefill's prompt
        after its cached prefix."""
        return self.context if self.phase == Phase.DECODE else self.prefix + self.seq

    @property
    def split(self) -> parallel.Split:
        return parallel.Split(self.tp, self.pp, self.dp, self.ep, self.cp,
                              self.vpp if self.phase == Phase.TRAIN else 1, self.pp_trim)
