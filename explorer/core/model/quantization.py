"""A checkpoint's ``quantization_config`` (a Hugging Face config.json) as the bits each of its
weights takes in memory, per class of module, scales and zero points included.

A quantized checkpoint stores its linear layers in few bits with a scale (and a zero point)
for each group or block of weights, and leaves some modules at the file's precision
(``torch_dtype``): the embedding table and the norms always (they are not linear layers),
the LM head unless the config says otherwise, the MoE routers (vLLM builds them without
quantization), and whatever the config lists (``modules_to_not_convert``, ``ignore``,
``llm_int8_skip_modules``, ``ignored_layers``). The bits a weight of each method, overhead
included, are read in ``quantization_formats``.

A method this app does not read (torchao, fbgemm_fp8, quark, ModelOpt's mixed precision, …)
no longer stops the file: its weights are costed at the file's ``torch_dtype`` and the note
names the method and asks for ``--weight-dtype`` (``Quantization.unread``).

Where the products run: fp8 checkpoints with dynamic activation scales (``activation_scheme``
"dynamic", compressed-tensors' 8-bit float input activations) are W8A8, run in fp8 by vLLM
and SGLang on GPUs with fp8 tensor cores: the note says so, the analysis keeps ``--dtype``
(give ``--dtype fp8`` to run them in fp8). Weight-only formats (AWQ, GPTQ, bitsandbytes,
HQQ, mxfp4 on most engines) dequantize to the activations' precision: they run at
``--dtype``'s peak and read fewer bytes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from explorer.core.model.applicability import Phase
from explorer.core.units import DTYPE_BYTES

if TYPE_CHECKING:
    from explorer.core.model.ops import Op
    from explorer.core.model.workload import WorkloadParams

# The classes of weights a transformer has (``TransformerSpec.layer_parameter_classes``):
ATTENTION, MLP, EXPERTS, ROUTER, EMBEDDING, LM_HEAD, NORM = (
    "attention", "mlp", "experts", "router", "embedding", "lm_head", "norm")
# What a method converts (its linear layers), unless the config keeps some out (the LM head
# by default: ``_kept``).
LINEAR = (ATTENTION, MLP, EXPERTS, LM_HEAD)
# An op's role (ops.Role's value) → the class of the weights it reads.
ROLE_CLASS = {"qkv_proj": ATTENTION, "q_proj": ATTENTION, "k_proj": ATTENTION, "v_proj": ATTENTION,
              "o_proj": ATTENTION, "gate_proj": MLP, "up_proj": MLP, "down_proj": MLP, "fc1": MLP,
              "fc2": MLP, "shared_up": MLP, "shared_down": MLP, "expert_up": EXPERTS,
              "expert_down": EXPERTS, "router": ROUTER, "embedding": EMBEDDING, "lm_head": LM_HEAD,
              "norm": NORM}
WORDS = {ATTENTION: "attention", MLP: "MLP", EXPERTS: "experts", ROUTER: "routers",
         EMBEDDING: "embeddings", LM_HEAD: "LM head", NORM: "norms"}
W8A8 = "fp8"  # the precision W8A8 fp8 checkpoints run their products in on engines that can


class QuantizationError(ValueError):
    """A ``quantization_config`` that cannot be read; the message names the field."""


@dataclass(frozen=True)
class Quantization:
    """How a checkpoint stores its weights: ``bits`` a weight (overhead included) for each
    class it quantizes; every other class stays at the file's precision."""

    method: str  # quant_method as the file names it
    label: str  # "fp8 (e4m3) in 128×128 blocks with a float32 scale each"
    bits: tuple[tuple[str, float], ...]  # (class, bits a weight) for the quantized classes
    compute: str = ""  # the precision engines run its products in ("fp8"); "": the activations'
    partial: str = ""  # entries of the config's skip list that name single layers (not modelled)
    unread: bool = False  # a method this app does not read: every weight at the file's precision

    def bits_of(self, module: str) -> float | None:
        """Bits a weight of ``module``'s class, None where it stays at the file's precision."""
        return dict(self.bits).get(module)

    def sentence(self) -> str:
        """What the file stores, where and at how many bits: the analysis's note."""
        by_bits: dict[float, list[str]] = {}
        for module, bits in self.bits:
            by_bits.setdefault(bits, []).append(WORDS[module])
        where = "; ".join(f"{format_bits(bits)} bits a weight for the {_join(names)}"
                          for bits, names in by_bits.items())
        kept = [WORDS[c] for c in (ATTENTION, MLP, EXPERTS, ROUTER, EMBEDDING, LM_HEAD, NORM)
                if self.bits_of(c) is None]
        text = f"{self.label}: {where}" if where else self.label
        if kept and self.method != "gguf":  # a GGUF file's classes are all its tensors' own
            text += f"; the {_join(kept)} stay unquantized"
        if self.partial:
            text += f" (single layers the config leaves out, {self.partial}, are counted quantized)"
        return text


def format_bits(value: float) -> str:
    return f"{value:.4f}".rstrip("0").rstrip(".")


def _join(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def bytes_a_weight(module: str, quantization: Quantization, unquantized: float) -> float:
    """Bytes a weight of ``module``'s class takes: its quantized bits over 8, else
    ``unquantized`` (the file's precision)."""
    bits = quantization.bits_of(module)
    return unquantized if bits is None else bits / 8


def total_bytes(counts: Mapping[str, int], quantization: Quantization, unquantized: float) -> float:
    """Bytes of ``counts`` weights per class."""
    return math.fsum(n * bytes_a_weight(c, quantization, unquantized) for c, n in counts.items())


def applied(model: object, params: WorkloadParams) -> Quantization | None:
    """The checkpoint's quantization where it sets the weights' bytes: a model read from a
    quantized config.json, at inference, with no ``--weight-dtype`` given (which overrides it)."""
    quantization = getattr(model, "quantization", None)
    if quantization is None or params.weight_dtype is not None or params.phase == Phase.TRAIN:
        return None
    return quantization if isinstance(quantization, Quantization) else None


def unquantized_bytes(model: object, params: WorkloadParams) -> float:
    """Bytes a weight the checkpoint leaves unquantized takes: the file's precision
    (``torch_dtype``), else the step's."""
    return DTYPE_BYTES[getattr(model, "file_dtype", "") or params.dtype]


def weight_class(model: object, o: Op) -> str:
    """The class of the weights op ``o`` reads: its role's, except a tied LM head, which
    reads the embedding table (stored once, at the embedding's precision)."""
    cls = ROLE_CLASS.get(o.role.value, NORM)
    return EMBEDDING if cls == LM_HEAD and getattr(model, "tied_embeddings", False) else cls


def bytes_of_class(model: object, params: WorkloadParams, module: str) -> float:
    """Bytes a weight of class ``module`` takes in this step: as the checkpoint stores it
    (``applied``), else ``params.weight_bytes``. The one rule the analysis and the sentences
    that restate its weight bytes share."""
    quantization = applied(model, params)
    if quantization is None:
        return params.weight_bytes
    return bytes_a_weight(module, quantization, unquantized_bytes(model, params))


def parameter_classes(model: object) -> dict[str, int]:
    """Every parameter of a transformer by class (its layers' ``layer_parameter_classes`` and
    its ``end_parameter_classes``); another model: all of them under "other"."""
    layers = getattr(model, "layer_parameter_classes", None)
    if layers is None:
        return {"other": model.parameter_count()}  # type: ignore[attr-defined]
    total: dict[str, int] = {}
    for i in range(model.layers):  # type: ignore[attr-defined]
        for name, count in layers(i).items():
            total[name] = total.get(name, 0) + count
    for name, count in model.end_parameter_classes().items():  # type: ignore[attr-defined]
        total[name] = total.get(name, 0) + count
    return total


def stored_ops(model: object, params: WorkloadParams, ops: list[Op]) -> list[Op]:
    """``ops`` (built with ``params.weight_bytes`` a weight) with each op's weights at the
    bytes the checkpoint stores them in (``applied``): its class's quantized bits, or the
    file's precision. A linear op's bias goes with its weights (under 0.1 % of them)."""
    quantization = applied(model, params)
    if quantization is None:
        return ops
    built, kept = params.weight_bytes, unquantized_bytes(model, params)
    out = []
    for o in ops:
        stored = bytes_a_weight(weight_class(model, o), quantization, kept)
        weights = o.weight_bytes * (stored / built)
        out.append(replace(o, bytes=o.bytes - o.weight_bytes + weights, weight_bytes=weights))
    return out


def quantization_note(model: object, params: WorkloadParams) -> str:
    """What the analysis says of a quantized checkpoint: what its file stores, whether its
    bytes were used (or ``--weight-dtype`` overrode them), and where its products run."""
    quantization = getattr(model, "quantization", None)
    if not isinstance(quantization, Quantization):
        return ""
    name = getattr(model, "name", "the model")
    kept = getattr(model, "file_dtype", "") or params.dtype
    gguf = quantization.method == "gguf"  # a GGUF file's own tensor types (gguf_file)
    file = "GGUF file" if gguf else "config.json"
    if quantization.unread:
        source = "as torch_dtype says" if getattr(model, "file_dtype", "") else \
            "the compute precision: the config names no torch_dtype"
        if params.weight_dtype is not None:
            return (f"{name}'s config.json names {quantization.label}; analysed with "
                    f"{params.weight_dtype} weights as --weight-dtype asks")
        return (f"{name}'s weights costed at {kept} ({source}); {quantization.label}: "
                f"give --weight-dtype for the precision its file stores")
    if params.weight_dtype is not None:
        return (f"{name}'s {file} stores its weights quantized ({quantization.label}); analysed with "
                f"{params.weight_dtype} weights as --weight-dtype asks (leave it unset for the file's)")
    if params.phase == Phase.TRAIN:
        return (f"{name}'s {file} stores its weights quantized ({quantization.label}); training is "
                f"analysed with {params.dtype} weights")
    stores = "GGUF file's tensors store" if gguf else "config.json's quantization_config stores"
    at = "" if gguf else f" (at {kept})"  # a GGUF file gives every class's bytes itself
    text = f"{name}'s weights as its {stores} them: {quantization.sentence()}{at}; --weight-dtype overrides"
    if quantization.compute and quantization.compute != params.dtype:
        text += (f". Its products are W8A8: engines run them in {quantization.compute} on GPUs with "
                 f"{quantization.compute} tensor cores; analysed in {params.dtype} (--dtype "
                 f"{quantization.compute} to run them so)")
    elif not quantization.compute:
        text += f". Weight-only: the weights are dequantized and the products run in {params.dtype}"
    return text


def value_bytes(model: object, params: WorkloadParams, o: Op) -> float:
    """Bytes a weight of op ``o`` takes as built (``stored_ops``): for the values behind an
    op's weight bytes (a product's rows from its FLOPs and weights)."""
    quantization = applied(model, params)
    if quantization is None:
        return params.weight_bytes
    return bytes_a_weight(weight_class(model, o), quantization, unquantized_bytes(model, params))
