"""GGUF files read without their tensor data: a real tiny Llama file (Ollama's test model) to
the byte and the parameter, and a file written with gguf's own GGUFWriter that mixes the
quantized types of a Q4_K_M file (Q4_K, Q6_K, Q8_0, IQ4_XS), whose bytes follow each type's
block size; the GGUF files local runners keep are found (LM Studio, Ollama's store)."""

import json
from pathlib import Path

import gguf
import numpy as np
import pytest
from gguf import GGMLQuantizationType as Q

from explorer.core.analysis.analysis import analyze
from explorer.core.files.datafile import DataFileError
from explorer.core.hardware.catalog import load_catalog
from explorer.core.model.gguf_discovery import find_ggufs
from explorer.core.model.gguf_file import read_gguf, spec_from_gguf
from explorer.core.model.workload import WorkloadParams

TINY = Path(__file__).parents[1] / "data" / "third_party" / "ollama" / "llama-2-tiny-random.gguf"


def test_the_real_file_s_model_and_bytes():
    spec, file = spec_from_gguf(TINY)
    # the figures of tests/data/third_party/ollama/README.md
    assert (file.architecture, file.file_type, spec.name) == ("llama", "F16", "LLaMA v2")
    assert (spec.d_model, spec.layers, spec.heads, spec.kv_heads, spec.mlp_width) == (8, 1, 2, 2, 32)
    assert (spec.vocab, spec.max_context, spec.tied_embeddings) == (32000, 4096, False)
    assert spec.parameter_count() == file.parameters == 513_048
    assert file.weight_bytes == 1_026_144 == 2 * (2 * 256_000 + 4 * 64 + 3 * 256) + 4 * 3 * 8
    assert file.bytes_by_type() == {"F16": 1_026_048, "F32": 96}
    assert file.metadata["tokenizer.ggml.tokens"] == 32000  # counted, the vocabulary not kept


def test_the_note_says_how_the_file_stores_its_weights():
    spec, _ = spec_from_gguf(TINY)
    a = analyze(spec, WorkloadParams(context=64), load_catalog()["h100-sxm"])
    assert any("GGUF F16 file" in n and "1,026,144 bytes" in n and "16.00 bits a weight" in n
               for n in a.notes)


def _raw(rows: int, cols: int, kind: Q) -> np.ndarray:
    """A quantized tensor's bytes: whole blocks of its type (gguf's GGML_QUANT_SIZES)."""
    block, size = gguf.GGML_QUANT_SIZES[kind]
    return np.zeros((rows, cols // block * size), dtype=np.uint8)


def write_q4_k_m(path: Path, d: int = 256, f: int = 512, layers: int = 2, vocab: int = 1024) -> Path:
    """A Llama of Q4_K_M's mix, written with gguf's GGUFWriter (a derived file: the reader's
    second case)."""
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("derived Q4_K_M")
    w.add_context_length(2048)
    w.add_embedding_length(d)
    w.add_block_count(layers)
    w.add_feed_forward_length(f)
    w.add_head_count(4)
    w.add_head_count_kv(2)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_K_M)
    w.add_tensor("token_embd.weight", _raw(vocab, d, Q.Q8_0), raw_dtype=Q.Q8_0)
    for i in range(layers):
        w.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(d, dtype=np.float32))
        w.add_tensor(f"blk.{i}.attn_q.weight", _raw(d, d, Q.Q4_K), raw_dtype=Q.Q4_K)
        w.add_tensor(f"blk.{i}.attn_k.weight", _raw(d // 2, d, Q.Q4_K), raw_dtype=Q.Q4_K)
        w.add_tensor(f"blk.{i}.attn_v.weight", _raw(d // 2, d, Q.Q6_K), raw_dtype=Q.Q6_K)
        w.add_tensor(f"blk.{i}.attn_output.weight", _raw(d, d, Q.IQ4_XS), raw_dtype=Q.IQ4_XS)
        w.add_tensor(f"blk.{i}.ffn_norm.weight", np.ones(d, dtype=np.float32))
        w.add_tensor(f"blk.{i}.ffn_gate.weight", _raw(f, d, Q.Q4_K), raw_dtype=Q.Q4_K)
        w.add_tensor(f"blk.{i}.ffn_up.weight", _raw(f, d, Q.Q4_K), raw_dtype=Q.Q4_K)
        w.add_tensor(f"blk.{i}.ffn_down.weight", _raw(d, f, Q.Q6_K), raw_dtype=Q.Q6_K)
    w.add_tensor("output_norm.weight", np.ones(d, dtype=np.float32))
    w.add_tensor("output.weight", _raw(vocab, d, Q.Q6_K), raw_dtype=Q.Q6_K)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def test_each_tensor_s_bytes_follow_its_type(tmp_path):
    spec, file = spec_from_gguf(write_q4_k_m(tmp_path / "m.gguf"))
    assert file.file_type == "Q4_K_M" and spec.kv_heads == 2
    assert spec.parameter_count() == file.parameters
    # bytes per block of 256 (llama.cpp's block_q4_K 144, block_q6_K 210, block_iq4_xs 136)
    # and of 32 (block_q8_0: 34)
    q4_k, q6_k, iq4_xs, q8_0 = 144 / 256, 210 / 256, 136 / 256, 34 / 32
    d, f, vocab = 256, 512, 1024
    per_layer = {"Q4_K": (d * d + d * d // 2 + 2 * f * d) * q4_k, "Q6_K": (d * d // 2 + d * f) * q6_k,
                 "IQ4_XS": d * d * iq4_xs, "F32": 2 * d * 4}  # two F32 norms a layer
    expected = {"Q8_0": vocab * d * q8_0, "Q6_K": 2 * per_layer["Q6_K"] + vocab * d * q6_k,
                "Q4_K": 2 * per_layer["Q4_K"], "IQ4_XS": 2 * per_layer["IQ4_XS"],
                "F32": 2 * per_layer["F32"] + 4 * d}
    assert file.bytes_by_type() == pytest.approx(expected, abs=0)
    assert file.weight_bytes == sum(expected.values()) == 1_242_624
    # a layer's attention: Q (d × d) and K (d/2 × d) in Q4_K, V (d/2 × d) in Q6_K, O (d × d) in IQ4_XS
    attention = d * d * q4_k + d * d // 2 * q4_k + d * d // 2 * q6_k + d * d * iq4_xs
    assert file.bytes_by_class()["attention"] == (2 * 3 * d * d, 2 * attention)


def test_the_analysis_holds_the_file_s_bytes_unless_weight_dtype_is_given(tmp_path):
    spec, file = spec_from_gguf(write_q4_k_m(tmp_path / "m.gguf"))
    h100 = load_catalog()["h100-sxm"]
    a = analyze(spec, WorkloadParams(context=64), h100)
    assert a.totals.weight_bytes == file.weight_bytes == 1_242_624  # each class at its tensors' bytes
    note = next(n for n in a.notes if "GGUF file's tensors" in n)
    assert "Q4_K_M" in note and "6.5625 bits a weight for the LM head" in note  # Q6_K: 210 bytes a 256
    assert "unquantized" not in note
    override = analyze(spec, WorkloadParams(context=64, weight_dtype="int8"), h100)
    assert override.totals.weight_bytes == spec.parameter_count()  # one byte a weight, as asked
    # the real file: F16 tensors and F32 norms, to the byte
    tiny, tiny_file = spec_from_gguf(TINY)
    assert analyze(tiny, WorkloadParams(context=64), h100).totals.weight_bytes == tiny_file.weight_bytes


def test_a_file_without_tensors_or_with_unknown_ones_is_refused(tmp_path):
    path = tmp_path / "vocab.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_embedding_length(8)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    assert read_gguf(path).architecture == "llama"  # its metadata still reads
    with pytest.raises(DataFileError, match="no tensors"):
        spec_from_gguf(path)
    with pytest.raises(DataFileError, match="not a GGUF file"):
        spec_from_gguf(Path(__file__))


def test_local_runners_files_are_found(tmp_path):
    home = tmp_path / "home"
    studio = home / ".lmstudio" / "models" / "lmstudio-community" / "Tiny-GGUF"
    studio.mkdir(parents=True)
    (studio / "tiny-Q4_K_M.gguf").write_bytes(TINY.read_bytes()[:16])
    models = tmp_path / "ollama"
    digest = "ab" * 32
    (models / "blobs").mkdir(parents=True)
    (models / "blobs" / f"sha256-{digest}").write_bytes(b"GGUF")
    manifest = models / "manifests" / "registry.ollama.ai" / "library" / "tiny" / "latest"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(json.dumps({"schemaVersion": 2, "layers": [
        {"mediaType": "application/vnd.ollama.image.template", "digest": "sha256:" + "cd" * 32},
        {"mediaType": "application/vnd.ollama.image.model", "digest": f"sha256:{digest}"}]}))
    other = models / "manifests" / "registry.ollama.ai" / "someone" / "model" / "q8"
    other.parent.mkdir(parents=True)
    other.write_text("not json")  # skipped
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "a.GGUF").write_bytes(b"GGUF")
    found = find_ggufs(home, {"OLLAMA_MODELS": str(models)}, (mine,))
    assert [(f.store, f.name) for f in found] == [
        ("folder", "a"), ("lm-studio", "lmstudio-community/Tiny-GGUF/tiny-Q4_K_M"), ("ollama", "tiny:latest")]
    assert found[2].path == models / "blobs" / f"sha256-{digest}"
