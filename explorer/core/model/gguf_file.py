"""A GGUF file (llama.cpp, Ollama, LM Studio) as a model: its metadata and tensor table read
from the header (``gguf_header``; type names and block sizes from the ``gguf`` package),
the tensor data never read.

A GGUF file holds key-value metadata (``general.architecture``, ``general.name``,
``general.file_type``; ``{arch}.embedding_length``, ``{arch}.block_count``,
``{arch}.attention.head_count`` … in llama.cpp's names, gguf's ``Keys``), then a table of
tensors, each with its name, shape and type (F16, Q8_0, Q4_K, IQ4_XS …), then their data. A
tensor of a quantized type is stored in blocks: ``GGML_QUANT_SIZES[type]`` gives the values
a block holds and its bytes (Q4_K: 256 values in 144 bytes, 4.5 bits each; Q8_0: 32 in 34),
so each tensor's bytes are exact from its type and element count, and the file's weight
bytes are their sum (a Q4_K_M file mixes Q4_K with Q6_K and F32 tensors: its
``general.file_type`` names the mix, the tensors say what each holds).

The decoder is read from the tensor table by llama.cpp's tensor names (``TENSORS``):
which projections, biases and norms a block has, and the mixture of experts; the sizes from
the metadata. The spec's parameter count must equal the elements the tensors hold, else the
file is refused with the difference named: nothing is half-read. Its weights' bytes are the
file's: each class of weight (attention, MLP, experts, router, embedding, LM head, norms)
takes the bytes its tensors take, as a ``Quantization`` (``stored_quantization``), so the
memory figure is the file's bytes and each product reads its own tensors' bytes;
``--weight-dtype`` overrides them, as for a quantized config.json.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from explorer.core.files.datafile import DataFileError
from explorer.core.model.gguf_header import GgufFormatError, Length, read_header
from explorer.core.model.models import TransformerSpec
from explorer.core.model.quantization import Quantization
from explorer.core.units import format_bytes

SOURCE = "https://github.com/ggml-org/llama.cpp/blob/master/docs/gguf.md"
# The classes of weight a tensor belongs to, by its llama.cpp name (gguf's TENSOR_NAMES), the
# block's tensors after "blk.N."; "rope_freqs" (Llama 3's RoPE factors) is no trained weight.
TOP = {"token_embd.weight": "embedding", "output.weight": "lm_head", "output_norm.weight": "norm",
       "output_norm.bias": "norm", "rope_freqs.weight": "rope"}
TENSORS = {"attn_q": "attention", "attn_k": "attention", "attn_v": "attention", "attn_qkv": "attention",
           "attn_output": "attention", "attn_q_norm": "norm", "attn_k_norm": "norm", "attn_norm": "norm",
           "attn_post_norm": "norm", "post_attention_norm": "norm", "ffn_norm": "norm",
           "post_ffw_norm": "norm",
           "ffn_gate": "mlp", "ffn_up": "mlp", "ffn_down": "mlp", "ffn_gate_inp": "router",
           "ffn_gate_exps": "experts", "ffn_up_exps": "experts", "ffn_down_exps": "experts",
           "ffn_gate_shexp": "mlp", "ffn_up_shexp": "mlp", "ffn_down_shexp": "mlp",
           "ffn_gate_inp_shexp": "router", "exp_probs_b": "router", "rope_freqs": "rope"}
_BLOCK = re.compile(r"blk\.(\d+)\.([a-z_]+)\.(weight|bias)")


@dataclass(frozen=True)
class GgufTensor:
    """One tensor of the table: its name, its type's name (``GGMLQuantizationType``), its
    element count and the bytes it takes (whole blocks of its type)."""

    name: str
    kind: str
    elements: int
    bytes: int


@dataclass(frozen=True)
class GgufFile:
    """A GGUF file's metadata (scalars and short lists; the tokenizer's long arrays left out)
    and its tensor table."""

    path: str
    metadata: Mapping[str, object]
    tensors: tuple[GgufTensor, ...]

    @property
    def architecture(self) -> str:
        return str(self.metadata.get("general.architecture", ""))

    @property
    def file_type(self) -> str:
        """The mix the file was made as (``LlamaFileType``: "Q4_K_M", "Q8_0", "F16" …)."""
        raw = self.metadata.get("general.file_type")
        return _file_type(raw) if isinstance(raw, int) else ""

    @property
    def weight_bytes(self) -> int:
        return sum(t.bytes for t in self.tensors if _class(t.name) != "rope")

    @property
    def parameters(self) -> int:
        return sum(t.elements for t in self.tensors if _class(t.name) != "rope")

    def bytes_by_type(self) -> dict[str, int]:
        """Weight bytes by tensor type, the largest first."""
        out: dict[str, int] = {}
        for t in self.tensors:
            out[t.kind] = out.get(t.kind, 0) + t.bytes
        return dict(sorted(out.items(), key=lambda kv: -kv[1]))

    def bytes_by_class(self) -> dict[str, tuple[int, int]]:
        """(elements, bytes) by class of weight (``TENSORS``: attention, mlp, experts, router,
        embedding, lm_head, norm)."""
        out: dict[str, tuple[int, int]] = {}
        for t in self.tensors:
            kind = _class(t.name)
            elements, size = out.get(kind, (0, 0))
            out[kind] = (elements + t.elements, size + t.bytes)
        return out


def _file_type(value: int) -> str:
    import gguf

    try:
        return gguf.LlamaFileType(value).name.removeprefix("MOSTLY_")
    except ValueError:
        return f"type {value}"


def _class(name: str) -> str:
    if name in TOP:
        return TOP[name]
    match = _BLOCK.fullmatch(name)
    return TENSORS.get(match.group(2), "") if match else ""


def read_gguf(path: str | Path) -> GgufFile:
    """The file's metadata and tensor table (``gguf_header``); a ``DataFileError`` naming the
    file when it is no GGUF file. Tensor data is never read."""
    import gguf

    origin = str(path)
    try:
        raw, table = read_header(origin)
        types = [(name, gguf.GGMLQuantizationType(kind), elements) for name, kind, elements in table]
    except (OSError, GgufFormatError) as exc:
        raise DataFileError(origin, f"is not a GGUF file this app can read: {exc}") from None
    except ValueError as exc:  # a tensor type gguf does not know
        raise DataFileError(origin, f"is not a GGUF file this app can read: {exc}") from None
    metadata = {key: value for key, value in raw.items() if not isinstance(value, Length)}
    tokens = raw.get("tokenizer.ggml.tokens")
    if tokens is not None:
        metadata["tokenizer.ggml.tokens"] = len(tokens) if isinstance(tokens, list) else \
            tokens if isinstance(tokens, int) else 0
    tensors = []
    for name, kind, elements in types:
        block, size = gguf.GGML_QUANT_SIZES[kind]
        tensors.append(GgufTensor(name, kind.name, elements, elements // block * size))
    return GgufFile(origin, metadata, tuple(tensors))


def spec_from_gguf(path: str | Path) -> tuple[TransformerSpec, GgufFile]:
    """The decoder a GGUF file holds and the file read; refused (``DataFileError``) when a
    tensor is not one of ``TENSORS`` or the count differs from the tensors' elements."""
    file = read_gguf(path)
    return _spec(file), file


def _spec(file: GgufFile) -> TransformerSpec:
    origin, arch, meta = file.path, file.architecture, file.metadata
    if not arch:
        raise DataFileError(origin, "names no general.architecture", field="general.architecture")
    if not file.tensors:
        raise DataFileError(origin, "holds no tensors (a vocabulary-only file): there is no model to analyse")
    unknown = [t.name for t in file.tensors if not _class(t.name)]
    if unknown:
        raise DataFileError(origin, f"holds tensors this app does not model ({', '.join(unknown[:3])}): "
                                    f"its {arch} blocks are not a decoder the app reads")

    def number(key: str, default: int | None = None) -> int:
        value = meta.get(f"{arch}.{key}", default)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise DataFileError(origin, "is missing or not a whole number", field=f"{arch}.{key}")
        return value

    names = {t.name for t in file.tensors}
    block = {m.group(2) + "." + m.group(3) for n in names if (m := _BLOCK.fullmatch(n))}
    d, heads = number("embedding_length"), number("attention.head_count")
    head_dim = number("attention.key_length", 0) or d // heads
    experts = number("expert_count", 0)
    vocab = next((t.elements // d for t in file.tensors if t.name == "token_embd.weight"), 0)
    window = number("attention.sliding_window", 0)
    layers = number("block_count")
    spec = TransformerSpec(
        id="gguf-" + (re.sub(r"[^a-z0-9]+", "-", Path(origin).stem.lower()).strip("-") or "model"),
        name=str(meta.get("general.name") or Path(origin).stem)[:80], d_model=d, layers=layers, heads=heads,
        kv_heads=number("attention.head_count_kv", heads), mlp_width=number("feed_forward_length", 0),
        gated_mlp="ffn_gate.weight" in block or "ffn_gate_exps.weight" in block,
        activation="gelu" if arch.startswith("gemma") else "silu",
        norm="layernorm" if "attn_norm.bias" in block else "rmsnorm", vocab=vocab,
        tied_embeddings="output.weight" not in names, bias="ffn_down.bias" in block,
        fused_qkv="attn_qkv.weight" in block, positions="rope", max_context=number("context_length"),
        source=SOURCE, published_parameters=0, parameters_source=SOURCE, origin=origin,
        head_dim_value=head_dim if head_dim * heads != d else 0,
        qkv_bias="attn_q.bias" in block or "attn_qkv.bias" in block, o_bias="attn_output.bias" in block,
        qk_norm="attn_q_norm.weight" in block,
        norms_per_layer=4 if "post_ffw_norm.weight" in block else 2,
        sliding_window=window, window_layers=tuple(range(layers)) if window else (),
        experts=experts, experts_per_token=number("expert_used_count", 0) if experts else 0,
        expert_width=(number("expert_feed_forward_length", 0) or number("feed_forward_length", 0))
        if experts else 0,
        shared_width=number("expert_shared_feed_forward_length", 0) if "ffn_up_shexp.weight" in block else 0,
        shared_gate="ffn_gate_inp_shexp.weight" in block, router_bias="exp_probs_b.bias" in block,
        unmodelled=_stored(file))
    counted = spec.parameter_count()
    if counted != file.parameters:
        raise DataFileError(origin, f"holds {file.parameters:,} parameters in its tensors but its {arch} "
                                    f"metadata describes {counted:,}: a layout the app does not read exactly")
    return replace(spec, quantization=stored_quantization(spec, file))


def stored_quantization(spec: TransformerSpec, file: GgufFile) -> Quantization:
    """Bits a weight of each class, so that the spec's count of the class times them is the
    bytes the file's tensors of that class take (the whole file's bytes, to the byte)."""
    counts: dict[str, int] = {}
    for i in range(spec.layers):
        for kind, n in spec.layer_parameter_classes(i).items():
            counts[kind] = counts.get(kind, 0) + n
    for kind, n in spec.end_parameter_classes().items():
        counts[kind] = counts.get(kind, 0) + n
    stored = {weights: size for weights, (_, size) in file.bytes_by_class().items() if weights != "rope"}
    # (a query/key norm is a norm tensor in the file and part of attention in the spec's
    # classes: a few values' bytes move between the two, the total stays the file's)
    unplaced = [kind for kind, size in stored.items() if size and not counts.get(kind)]
    if unplaced:
        raise DataFileError(file.path, f"holds {', '.join(unplaced)} tensors the decoder read from it has no "
                                       "weights for: a layout the app does not read exactly")
    bits = tuple((kind, 8 * size / counts[kind]) for kind, size in stored.items())
    label = f"a GGUF {file.file_type} file" if file.file_type else "a GGUF file"
    kinds = ", ".join(file.bytes_by_type())
    return Quantization("gguf", f"{label} ({kinds} tensors)", bits)


def _stored(file: GgufFile) -> str:
    """The note on the file's tensors: their bytes by type, and the bits a weight overall."""
    types = ", ".join(f"{kind} {format_bytes(size)}" for kind, size in file.bytes_by_type().items())
    mix = f"a GGUF {file.file_type} file" if file.file_type else "a GGUF file"
    return (f"{mix}: its tensors take {file.weight_bytes:,} bytes ({types}), "
            f"{8 * file.weight_bytes / file.parameters:.2f} bits a weight")
