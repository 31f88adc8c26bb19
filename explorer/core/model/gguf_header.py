"""A GGUF file's header read straight from its bytes: the key-value metadata and the tensor
table, as llama.cpp's format description lays them out (docs/gguf.md), with long arrays (the
tokenizer's vocabulary, scores and merges) skipped, not decoded.

The ``gguf`` package's reader decodes every element of every array into Python objects: a
32,000-token vocabulary costs it seconds, a 256,000-token one many more. This reader walks
the same layout with ``struct`` over a memory map: a string array's entries are stepped over
by their lengths, a number array by its size, so the header of any model reads in well under
a second. Names of types and block sizes still come from the ``gguf`` package.

Layout (little-endian; versions 2 and 3): ``GGUF``, u32 version, u64 tensor count, u64
key-value count; each key-value: a string key (u64 length, UTF-8), a u32 value type, the
value (an array: u32 element type, u64 count, the elements); each tensor: a string name, u32
dimensions, u64 sizes, u32 type, u64 offset.
"""

from __future__ import annotations

import math
import mmap
import struct
from pathlib import Path
from typing import cast

MAGIC = b"GGUF"
KEPT_ARRAY = 64  # arrays longer than this (the tokenizer's) are counted, not kept
# GGUFValueType → struct format of one value (8: string, 9: array: read apart)
NUMBERS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q",
           12: "<d"}
STRING, ARRAY = 8, 9


class Length(int):
    """A long array's length, standing for the array (its elements are not read)."""


class GgufFormatError(ValueError):
    """Bytes that are not a GGUF header this reader knows; the message says what."""


class _Cursor:
    def __init__(self, data: mmap.mmap | bytes) -> None:
        self.data, self.at = data, 0

    def take(self, fmt: str) -> int | float | bool:
        try:
            (value,) = struct.unpack_from(fmt, self.data, self.at)
        except struct.error:
            raise GgufFormatError(f"ends inside its header (at byte {self.at:,})") from None
        self.at += struct.calcsize(fmt)
        return cast("int | float | bool", value)

    def string(self) -> str:
        size = int(self.take("<Q"))
        if self.at + size > len(self.data):
            raise GgufFormatError(f"a string of {size:,} bytes runs past the file's end "
                                  f"(at byte {self.at:,})")
        raw = self.data[self.at:self.at + size]
        self.at += size
        return bytes(raw).decode("utf-8", errors="replace")

    def skip_string(self) -> None:
        size = int(self.take("<Q"))
        self.at += size
        if self.at > len(self.data):
            raise GgufFormatError("a string runs past the file's end")

    def value(self, kind: int) -> object:
        if kind in NUMBERS:
            return self.take(NUMBERS[kind])
        if kind == STRING:
            return self.string()
        if kind == ARRAY:
            return self.array()
        raise GgufFormatError(f"names an unknown value type {kind} (at byte {self.at:,})")

    def array(self) -> object:
        """The array's values when short; else its length (an int), its elements stepped over."""
        kind, count = int(self.take("<I")), int(self.take("<Q"))
        if count <= KEPT_ARRAY:
            return [self.value(kind) for _ in range(count)]
        if kind in NUMBERS:
            self.at += count * struct.calcsize(NUMBERS[kind])
        elif kind == STRING:
            for _ in range(count):
                self.skip_string()
        else:  # arrays of arrays: step into each
            for _ in range(count):
                self.value(kind)
        if self.at > len(self.data):
            raise GgufFormatError("an array runs past the file's end")
        return Length(count)


def read_header(path: str | Path) -> tuple[dict[str, object], list[tuple[str, int, int]]]:
    """(metadata, tensors): every key's value (a long array as its ``Length``), and each tensor's
    (name, GGML type number, elements). A ``GgufFormatError`` or ``OSError`` says why not."""
    with open(path, "rb") as handle:
        if handle.read(4) != MAGIC:
            raise GgufFormatError("does not start with GGUF's magic bytes")
        handle.seek(0)
        try:
            data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except ValueError:  # (an empty file)
            raise GgufFormatError("is empty") from None
    with data:
        cursor = _Cursor(data)
        cursor.at = 4
        version = int(cursor.take("<I"))
        if version not in (2, 3):
            raise GgufFormatError(f"is GGUF version {version}; versions 2 and 3 are read")
        tensor_count, kv_count = int(cursor.take("<Q")), int(cursor.take("<Q"))
        metadata: dict[str, object] = {}
        for _ in range(kv_count):
            key = cursor.string()
            metadata[key] = cursor.value(int(cursor.take("<I")))
        tensors = []
        for _ in range(tensor_count):
            name = cursor.string()
            dims = [int(cursor.take("<Q")) for _ in range(int(cursor.take("<I")))]
            kind = int(cursor.take("<I"))
            cursor.take("<Q")  # (its data's offset: not read)
            tensors.append((name, kind, math.prod(dims)))
    return metadata, tensors
