"""Reading a config.json's ``quantization_config``: each method's bits a weight, overhead
included, and the modules it leaves at the file's precision (``quantization`` applies them).

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
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from explorer.core.model.quantization import (
    ATTENTION,
    EMBEDDING,
    EXPERTS,
    LINEAR,
    LM_HEAD,
    MLP,
    NORM,
    ROUTER,
    W8A8,
    Quantization,
    QuantizationError,
    format_bits,
)


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
                                + ", ".join(f"{n} {format_bits(b)} bits" for n, b, _ in found))
    label, bits, compute = found[0]
    return f"compressed-tensors {label}", bits, LINEAR, compute


def _compressed_group(name: str, w: _Fields, activations: object) -> tuple[str, float, str]:
    bits = w.integer("num_bits")
    number_type = w.text("type", "int")  # the file's "int" or "float"
    strategy = w.text("strategy", "tensor")
    scale = 8 if number_type == "float" and bits == 4 else 16  # nvfp4: an fp8 scale per 16
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
    return f"{number_type}{bits}{how}", bits + overhead, compute


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
