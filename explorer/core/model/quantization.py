"""A checkpoint's ``quantization_config`` (a Hugging Face config.json) as the bits each of its
weights takes in memory, per class of module, scales and zero points included.

A quantized checkpoint stores its linear layers in few bits with a scale (and a zero point)
for each group or block of weights, and leaves some modules at the file's precision
(``torch_dtype``): the embedding table and the norms always (they are not linear layers),
the LM head unless the config says otherwise, the MoE routers (vLLM builds them without
quantization), and whatever the config lists (``modules_to_not_convert``, ``ignore``,
``llm_int8_skip_modules``, ``ignored_layers``). Bits a weight, overhead included:

- ``fp8`` (DeepSeek-V3/R1, Kimi-K2, Qwen3-*-FP8): 8 bits, and a float32 scale for each
  ``weight_block_size`` block: 128×128 → 8 + 32/16,384 bits. DeepSeek-V3's README_WEIGHTS.md:
  "DeepSeek-V3 natively supports FP8 weight format with 128x128 block scaling" and the
  ``weight_scale_inv`` field "stores the dequantization scale for each weight block"
  (a "float32 Tensor"). Scales are counted as one per block's worth of weights: a tensor
  whose sides are not multiples of the block is padded ("zero-padded to 128"), a few
  scales more (DeepSeek's 576-wide latent projection: 280 blocks, not 252; under 0.001 %).
  Without blocks: one scale a tensor (8 bits).
- ``mxfp4`` (GPT-OSS): the experts' 4-bit E2M1 values with one 8-bit (E8M0) shared exponent
  per 32 (the OCP Microscaling format; GPT-OSS's files hold ``*_blocks``, two values a byte,
  and ``*_scales``, a byte per 32): 4 + 8/32 = 4.25 bits; transformers converts nothing else.
- ``awq`` and ``gptq``: ``bits`` a weight, a 16-bit scale and a ``bits``-wide packed zero
  point for each ``group_size`` weights of an input row: 4 + 16/128 + 4/128 bits at group 128
  (a GPTQ group of -1 is one scale per output channel: its share is left out; so is the
  ``g_idx`` permutation, 32 bits per input channel, when ``desc_act`` is set).
- ``compressed-tensors`` (llm-compressor, RedHatAI/neuralmagic): each config group's
  ``weights`` (``num_bits``, ``strategy``, ``group_size``, ``block_structure``); a group's or
  block's scale is counted at 16 bits (8 for 4-bit floats, nvfp4's fp8 scale per 16), a zero
  point where not ``symmetric`` at the weight's width; per-tensor and per-channel scales are
  left out (under 0.02 % of the weights).
- ``bitsandbytes``: ``load_in_4bit`` (nf4 or fp4) in blocks of 64 with a float32 absmax
  each, 4 + 32/64 bits; with ``bnb_4bit_use_double_quant`` the absmax values are themselves
  quantized to 8 bits in blocks of 256: 4 + 8/64 + 32/(64·256) bits (QLoRA, Dettmers et al.
  2023, arXiv 2305.14314, §3: "for a blocksize of 64, this quantization reduces the memory
  footprint per parameter from 32/64 = 0.5 bits, to 8/64 + 32/(64 · 256) = 0.127 bits").
  ``bnb_4bit_quant_storage`` is the dtype the packed pairs are stored in: it changes no byte
  count. ``load_in_8bit``: 8 bits (a float scale per row left out).
- ``hqq``: ``nbits`` with a 16-bit scale and zero point per ``group_size`` (64): 4 + 32/64.
- ``modelopt`` (NVIDIA ModelOpt's export, nvidia/*-FP8 and *-FP4 repositories): ``quant_algo``
  FP8 (8 bits, a float32 scale a tensor), NVFP4 and W4A16_NVFP4 (4-bit E2M1 values with an fp8
  scale per ``group_size``, 16: 4 + 8/16 = 4.5 bits); its ``ignore`` (``exclude_modules``)
  list keeps modules out, the LM head converted unless listed (``_modelopt``).

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
import re
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
        where = "; ".join(f"{_bits(bits)} bits a weight for the {_join(names)}"
                          for bits, names in by_bits.items())
        kept = [WORDS[c] for c in (ATTENTION, MLP, EXPERTS, ROUTER, EMBEDDING, LM_HEAD, NORM)
                if self.bits_of(c) is None]
        text = f"{self.label}: {where}" if where else self.label
        if kept:
            text += f"; the {_join(kept)} stay unquantized"
        if self.partial:
            text += f" (single layers the config leaves out, {self.partial}, are counted quantized)"
        return text


def _bits(value: float) -> str:
    return f"{value:.4f}".rstrip("0").rstrip(".")


def _join(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def read_quantization(config: Mapping[str, object]) -> Quantization | None:
    """The quantization a config.json's ``quantization_config`` describes (None without one);
    a QuantizationError naming the field when it cannot be read."""
    raw = config.get("quantization_config")
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise QuantizationError("must be an object (the checkpoint's quantization)")
    q = _Fields(raw)
    bnb = "load_in_4bit" in raw or "load_in_8bit" in raw  # older bitsandbytes configs name no method
    method = q.text("quant_method", "bitsandbytes" if bnb else None).lower()
    if method == "modelopt" and isinstance(raw.get("quantization"), Mapping):  # the older nesting
        q = _Fields(raw["quantization"])
    reader = READERS.get(method)
    if reader is None:
        return _unread(method)
    label, bits, classes, compute = reader(q)
    if not classes:  # a method whose variant this app does not read (modelopt's MIXED_PRECISION)
        return _unread(f"{method} {label}")
    kept, partial = _kept(q, method)
    quantized = tuple((c, bits) for c in classes if c not in kept)
    return Quantization(method, label, quantized, compute, ", ".join(partial))


def _unread(method: str) -> Quantization:
    """A quantization this app does not read: nothing counted quantized, every weight at the
    file's precision (``torch_dtype``), which the note says, naming the method."""
    return Quantization(method, f"quantization {method!r}, which this app does not read", (), unread=True)


class _Fields:
    """A quantization_config's fields, read with their kinds checked."""

    def __init__(self, raw: Mapping[str, object]) -> None:
        self.raw = raw

    def text(self, name: str, default: str | None = None) -> str:
        value = self.raw.get(name, default)
        if not isinstance(value, str) or not value:
            raise QuantizationError(f"{name} must be a name, got {value!r}")
        return value

    def integer(self, name: str, default: int | None = None) -> int:
        value = self.raw.get(name, default)
        if value is None:
            value = default
        if isinstance(value, bool) or not isinstance(value, int):
            raise QuantizationError(f"{name} must be a whole number, got {value!r}")
        return value

    def flag(self, name: str, default: bool) -> bool:
        value = self.raw.get(name, default)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise QuantizationError(f"{name} must be true or false, got {value!r}")
        return value


def _fp8(q: _Fields) -> tuple[str, float, tuple[str, ...], str]:
    fmt = q.raw.get("fmt", "e4m3")
    block = q.raw.get("weight_block_size")
    compute = W8A8 if q.raw.get("activation_scheme", "dynamic") in ("dynamic", "static") else ""
    if block is None:
        return f"fp8 ({fmt}) with one scale a tensor", 8.0, LINEAR, compute
    if (not isinstance(block, list) or len(block) != 2
            or not all(isinstance(b, int) and not isinstance(b, bool) and b > 0 for b in block)):
        raise QuantizationError(f"weight_block_size must be two positive whole numbers, got {block!r}")
    rows, cols = block
    return (f"fp8 ({fmt}) in {rows}×{cols} blocks with a float32 scale each", 8 + 32 / (rows * cols),
            LINEAR, compute)


def _mxfp4(q: _Fields) -> tuple[str, float, tuple[str, ...], str]:
    return "mxfp4 (4-bit E2M1 values, an 8-bit shared exponent per 32)", 4 + 8 / 32, (EXPERTS,), ""


def _grouped(q: _Fields, name: str) -> tuple[str, float, tuple[str, ...], str]:
    """AWQ and GPTQ: ``bits`` a weight, a 16-bit scale and a packed zero point per group."""
    bits = q.integer("bits", q.integer("w_bit", 4) if "w_bit" in q.raw else None)
    group = q.integer("group_size", q.integer("q_group_size", 128) if "q_group_size" in q.raw else 128)
    if bits not in (2, 3, 4, 8):
        raise QuantizationError(f"bits must be 2, 3, 4 or 8, got {bits}")
    if group == -1:
        return f"{name} {bits}-bit with a scale per output channel", float(bits), LINEAR, ""
    if group <= 0:
        raise QuantizationError(f"group_size must be positive (or -1), got {group}")
    zero = bits if name == "GPTQ" or q.flag("zero_point", True) else 0
    label = f"{name} {bits}-bit in groups of {group} with a 16-bit scale" + \
        (f" and a {bits}-bit zero point" if zero else "") + " each"
    return label, bits + (16 + zero) / group, LINEAR, ""


def _bitsandbytes(q: _Fields) -> tuple[str, float, tuple[str, ...], str]:
    if q.flag("load_in_8bit", False):
        return "bitsandbytes LLM.int8 (8 bits, a scale per row)", 8.0, LINEAR, ""
    if not q.flag("load_in_4bit", False):
        raise QuantizationError("bitsandbytes: neither load_in_4bit nor load_in_8bit is true")
    kind = q.text("bnb_4bit_quant_type", "fp4")
    storage = q.raw.get("bnb_4bit_quant_storage", "uint8")
    if q.flag("bnb_4bit_use_double_quant", False):
        return (f"bitsandbytes {kind} in blocks of 64, absmax double-quantized to 8 bits per 256 blocks "
                f"(packed in {storage})", 4 + 8 / 64 + 32 / (64 * 256), LINEAR, "")
    return f"bitsandbytes {kind} in blocks of 64 with a float32 absmax each (packed in {storage})", \
        4 + 32 / 64, LINEAR, ""


def _hqq(q: _Fields) -> tuple[str, float, tuple[str, ...], str]:
    bits = q.integer("nbits", 4)
    group = q.integer("group_size", 64)
    if bits <= 0 or group <= 0:
        raise QuantizationError(f"nbits and group_size must be positive, got {bits} and {group}")
    return f"HQQ {bits}-bit in groups of {group} with a 16-bit scale and zero point each", \
        bits + 32 / group, LINEAR, ""


def _compressed(q: _Fields) -> tuple[str, float, tuple[str, ...], str]:
    groups = q.raw.get("config_groups")
    if not isinstance(groups, Mapping) or not groups:
        raise QuantizationError("config_groups must name at least one group of weights")
    found: list[tuple[str, float, str]] = []
    for name, group in groups.items():
        weights = group.get("weights") if isinstance(group, Mapping) else None
        if not isinstance(weights, Mapping):
            raise QuantizationError(f"config_groups.{name}.weights must be an object")
        found.append(_compressed_group(str(name), _Fields(weights), group.get("input_activations")))
    if len({bits for _, bits, _ in found}) > 1:
        raise QuantizationError("config groups with different weight widths are not read: "
                                + ", ".join(f"{n} {_bits(b)} bits" for n, b, _ in found))
    label, bits, compute = found[0]
    return f"compressed-tensors {label}", bits, LINEAR, compute


def _compressed_group(name: str, w: _Fields, activations: object) -> tuple[str, float, str]:
    bits = w.integer("num_bits")
    kind = w.text("type", "int")
    strategy = w.text("strategy", "tensor")
    scale = 8 if kind == "float" and bits == 4 else 16  # nvfp4: an fp8 scale per 16
    zero = 0 if w.flag("symmetric", True) else bits
    if strategy in ("group", "tensor_group"):
        size = w.integer("group_size")
        overhead, how = (scale + zero) / size, f" in groups of {size}"
    elif strategy == "block":
        block = w.raw.get("block_structure")
        if not (isinstance(block, list) and len(block) == 2
                and all(isinstance(b, int) and b > 0 for b in block)):
            raise QuantizationError(f"config_groups.{name}.weights.block_structure must be two positive "
                                    f"whole numbers, got {block!r}")
        overhead, how = (scale + zero) / (block[0] * block[1]), f" in {block[0]}×{block[1]} blocks"
    elif strategy in ("tensor", "channel"):
        overhead, how = 0.0, f", a scale per {strategy}"
    else:
        raise QuantizationError(f"config_groups.{name}.weights.strategy {strategy!r} is not read")
    compute = ""
    if isinstance(activations, Mapping) and activations.get("num_bits") == 8 and bits == 8:
        compute = W8A8 if activations.get("type") == "float" else "int8"
    return f"{kind}{bits}{how}", bits + overhead, compute


def _modelopt(q: _Fields) -> tuple[str, float, tuple[str, ...], str]:
    """NVIDIA ModelOpt's export (``quant_algo``, ``group_size``, ``ignore`` or, nested under
    ``quantization`` as in hf_quant_config.json, ``exclude_modules``; vLLM's
    ``ModelOptQuantConfigBase.from_config`` reads both). FP8: fp8 e4m3 weights with a float32
    scale a tensor (``FP8_PER_CHANNEL_PER_TOKEN``: a row; both left out), activations in fp8.
    NVFP4 (and weight-only ``W4A16_NVFP4``): 4-bit E2M1 values with an fp8 (e4m3) scale per
    ``group_size`` (16) values, vLLM's ``weight_scale`` of ``input_size // group_size`` columns
    asserted ``float8_e4m3fn``, and a float32 scale a tensor (left out): 4 + 8/16 = 4.5 bits.
    Other algorithms (block fp8, mixed precision) are not read (``classes`` empty)."""
    algo = q.text("quant_algo").upper()
    if algo in ("FP8", "FP8_PER_CHANNEL_PER_TOKEN"):
        scale = "a tensor" if algo == "FP8" else "a row"
        return f"ModelOpt {algo}: fp8 (e4m3) with a float32 scale {scale}", 8.0, LINEAR, W8A8
    if algo in ("NVFP4", "W4A16_NVFP4"):
        group = q.integer("group_size", 16)
        if group <= 0:
            raise QuantizationError(f"group_size must be positive, got {group}")
        return (f"ModelOpt {algo}: 4-bit E2M1 values with an fp8 (e4m3) scale per {group}", 4 + 8 / group,
                LINEAR, "")
    return f"quant_algo {algo}", 0.0, (), ""


READERS = {"fp8": _fp8, "mxfp4": _mxfp4, "awq": lambda q: _grouped(q, "AWQ"),
           "gptq": lambda q: _grouped(q, "GPTQ"), "compressed-tensors": _compressed,
           "bitsandbytes": _bitsandbytes, "hqq": _hqq, "modelopt": _modelopt}
SKIP_FIELDS = ("modules_to_not_convert", "ignore", "ignored_layers", "llm_int8_skip_modules", "skip_modules",
               "exclude_modules")
# A skipped module's name (or pattern) → its class, by the words transformers' models use.
SKIP_WORDS = ((r"(^|\.)lm_head($|\.)|(^|\.)output($|\.)", LM_HEAD), (r"embed", EMBEDDING),
              (r"(^|\.)(router|gate)($|\.)|shared_expert_gate", ROUTER), (r"shared_expert", MLP),
              (r"experts", EXPERTS), (r"attn|attention", ATTENTION), (r"mlp|feed_forward|ffn", MLP))


def _kept(q: _Fields, method: str) -> tuple[set[str], list[str]]:
    """The classes the config's skip lists keep at the file's precision (with the always-kept
    embeddings, norms and routers, and the LM head unless the method converts it: AWQ and
    GPTQ with ``lm_head`` true, compressed-tensors and ModelOpt, whose "Linear" targets include
    it, unless ignored), and the entries that name single layers."""
    kept, partial = {EMBEDDING, NORM, ROUTER}, []
    if method not in ("compressed-tensors", "modelopt") and not q.flag("lm_head", False):
        kept.add(LM_HEAD)
    for field in SKIP_FIELDS:
        entries = q.raw.get(field) or []
        if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
            raise QuantizationError(f"{field} must be a list of module names, got {entries!r}")
        for entry in entries:
            module = entry.removeprefix("re:")
            if re.search(r"(^|\.)\d+(\.|$)", module):  # one layer's module: not a whole class
                partial.append(entry)
                continue
            for pattern, cls in SKIP_WORDS:
                if re.search(pattern, module):
                    kept.add(cls)
                    break
    return kept, partial


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
    if quantization.unread:
        source = "as torch_dtype says" if getattr(model, "file_dtype", "") else \
            "the compute precision: the config names no torch_dtype"
        if params.weight_dtype is not None:
            return (f"{name}'s config.json names {quantization.label}; analysed with "
                    f"{params.weight_dtype} weights as --weight-dtype asks")
        return (f"{name}'s weights costed at {kept} ({source}); {quantization.label}: "
                f"give --weight-dtype for the precision its file stores")
    if params.weight_dtype is not None:
        return (f"{name}'s config.json stores its weights quantized ({quantization.label}); analysed with "
                f"{params.weight_dtype} weights as --weight-dtype asks (leave it unset for the file's)")
    if params.phase == Phase.TRAIN:
        return (f"{name}'s config.json stores its weights quantized ({quantization.label}); training is "
                f"analysed with {params.dtype} weights")
    text = (f"{name}'s weights as its config.json's quantization_config stores them: "
            f"{quantization.sentence()} (at {kept}); --weight-dtype overrides")
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
