"""The GGUF header read from its bytes gives what llama.cpp's own reader (the ``gguf``
package's GGUFReader) gives: every scalar and short list of the metadata, the length of
each long array, and each tensor's name, type, elements and bytes; a cut or foreign file is
refused naming the file."""

from __future__ import annotations

import numpy as np
import pytest
from gguf import GGUFReader

from explorer.core.files.datafile import DataFileError
from explorer.core.model.gguf_file import read_gguf
from explorer.core.model.gguf_header import KEPT_ARRAY, Length, read_header
from tests.core.test_gguf import TINY, write_q4_k_m


def reference(path) -> tuple[dict, list]:
    reader = GGUFReader(str(path), "r")
    metadata: dict = {}
    for key, field in reader.fields.items():
        if key.startswith("GGUF."):
            continue
        if field.types and field.types[0].name == "ARRAY" and len(field.data) > KEPT_ARRAY:
            metadata[key] = len(field.data)
            continue
        value = field.contents()
        metadata[key] = value.item() if isinstance(value, np.generic) else value
    tensors = [(t.name, int(t.tensor_type), int(t.n_elements), int(t.n_bytes)) for t in reader.tensors]
    return metadata, tensors


@pytest.mark.parametrize("which", ["ollama's tiny llama", "a derived Q4_K_M mix"])
def test_the_header_is_what_llama_cpp_s_reader_reads(tmp_path, which):
    path = TINY if which.startswith("ollama") else write_q4_k_m(tmp_path / "m.gguf")
    metadata, table = read_header(path)
    expected_metadata, expected_tensors = reference(path)
    assert set(metadata) == set(expected_metadata)
    for key, value in expected_metadata.items():
        got = metadata[key]
        if isinstance(got, Length):
            assert int(got) == value, key
        elif isinstance(value, float):
            assert got == pytest.approx(value, rel=1e-6), key
        else:
            assert got == value, key
    file = read_gguf(path)
    expected = [(name, elements, size) for name, _, elements, size in expected_tensors]
    assert [(t.name, t.elements, t.bytes) for t in file.tensors] == expected
    assert [kind for _, kind, _ in table] == [k for _, k, _, _ in expected_tensors]
    if which.startswith("ollama"):
        assert metadata["tokenizer.ggml.tokens"] == 32000 and file.metadata["tokenizer.ggml.tokens"] == 32000
        assert file.parameters == 513_048 and file.weight_bytes == 1_026_144


def test_a_cut_or_foreign_file_is_refused_by_name(tmp_path):
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(TINY.read_bytes()[:5000])
    with pytest.raises(DataFileError, match=r"cut\.gguf.*runs past the file's end|cut\.gguf.*ends inside"):
        read_gguf(cut)
    foreign = tmp_path / "model.gguf"
    foreign.write_bytes(b"PK\x03\x04 not a gguf")
    with pytest.raises(DataFileError, match=r"model\.gguf.*magic bytes"):
        read_gguf(foreign)
    empty = tmp_path / "empty.gguf"
    empty.write_bytes(b"")
    with pytest.raises(DataFileError, match=r"empty\.gguf"):
        read_gguf(empty)
