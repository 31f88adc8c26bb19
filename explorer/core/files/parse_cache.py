"""Parsed YAML kept between starts: the window reads the same 25 data files at every start,
and parsing them (PyYAML builds every value in Python, even with LibYAML's parser) is about
a twentieth of the time to the first painted frame.

An entry is found by the file's whole text, never by its name or date, so an edited file
is parsed afresh; it holds the parsed value in ``marshal``'s format (plain data only: a
file whose values marshal cannot hold, a date, is parsed every time) with a checksum, and
a damaged, foreign or unreadable cache is ignored and replaced, never trusted: the worst it
can cost is the parse it was meant to save. Only the code inside ``parse_cache()`` (the
window's start) uses it."""

from __future__ import annotations

import contextlib
import importlib.util
import marshal
import os
import sys
import threading
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from explorer.core.files.atomic import write_bytes_atomic
from explorer.core.files.errors import DataFileError
from explorer.core.files.reading import read_bytes


def _code() -> tuple:
    """The files whose code turns a text into values, PyYAML's and the app's loader
    (``yamltext``), by size and modification time, found without importing them: an upgrade,
    a reinstall or an edit empties the cache. (In a desktop bundle they sit in its archive,
    and the bundle's own program stands for them.)"""
    spec = importlib.util.find_spec("yaml")
    files = [spec.origin if spec else None, str(Path(__file__).with_name("yamltext.py"))]
    if getattr(sys, "frozen", False):
        files.append(sys.executable)
    out = []
    for name in files:
        try:
            status = os.stat(name)
            out.append((status.st_size, status.st_mtime_ns))
        except (OSError, TypeError):
            out.append(None)
    return tuple(out)


# What the parsed values depend on besides the text: a change to any of these empties the cache.
FORMAT = ("roofline-explorer parsed YAML", 1, sys.version_info[:2], marshal.version, _code())
MAX_BYTES = 2 << 20  # texts and values; kept to the entries used last, the most recent first
_MISSING = object()


class ParseCache:
    """The entries of one cache file: (how it was parsed, text) → (checksum, marshalled value)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._entries = _read(path)
        self._used: dict[tuple, None] = {}  # in the order this run asked for them
        self._changed = False
        self._lock = threading.Lock()  # a background job may load a file meanwhile

    def get(self, key: tuple[str, str]) -> Any:
        """The value stored under ``key`` (fresh objects each time), or ``_MISSING``."""
        with self._lock:
            entry = self._entries.get(key)
            self._used[key] = None
        if entry is None:
            return _MISSING
        check, blob = entry
        if zlib.crc32(blob) != check:
            return _MISSING  # damaged on disk: parsed again, and the entry replaced
        return marshal.loads(blob)

    def put(self, key: tuple[str, str], value: Any) -> None:
        try:
            blob = marshal.dumps(value)
        except ValueError:  # a value marshal cannot hold (a date): parsed every time
            return
        with self._lock:
            self._entries[key] = (zlib.crc32(blob), blob)
            self._changed = True

    def save(self) -> None:
        """Write the entries back if any was added: this run's first, then the others while
        the file stays under ``MAX_BYTES``. A cache that cannot be written is left as it is."""
        if not self._changed:
            return
        kept, size = {}, 0
        for key in [*self._used, *self._entries]:
            entry = self._entries.get(key)
            if entry is None or key in kept or size + len(key[1]) + len(entry[1]) > MAX_BYTES:
                continue
            kept[key] = entry
            size += len(key[1]) + len(entry[1])
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_bytes_atomic(self.path, marshal.dumps((FORMAT, kept)))
        self._changed = False


def _read(path: Path) -> dict[tuple, tuple[int, bytes]]:
    """The entries of the cache file at ``path``; none when it is missing, damaged, written
    by another version, or not a regular file (``read_bytes`` never blocks on a pipe)."""
    try:
        header, entries = marshal.loads(read_bytes(path, limit=2 * MAX_BYTES))
    except (DataFileError, EOFError, ValueError, TypeError):
        return {}
    if header != FORMAT or not isinstance(entries, dict):
        return {}
    return {key: entry for key, entry in entries.items()
            if isinstance(key, tuple) and len(key) == 2 and all(isinstance(part, str) for part in key)
            and isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[0], int)
            and isinstance(entry[1], bytes)}


_active: ParseCache | None = None


@contextlib.contextmanager
def parse_cache(path: Path) -> Iterator[ParseCache]:
    """Within the block, ``cached`` parses go through the cache file at ``path``, which is
    written back when the block ends."""
    global _active
    cache, previous = ParseCache(path), _active
    _active = cache
    try:
        yield cache
    finally:
        _active = previous
        cache.save()


def cached(text: str, kind: str, parse: Callable[[], Any]) -> Any:
    """``parse()`` of ``text``, or its value from the active cache (``kind``: how it is
    parsed, a part of the key)."""
    cache = _active
    if cache is None:
        return parse()
    key = (kind, text)
    value = cache.get(key)
    if value is _MISSING:
        value = parse()
        cache.put(key, value)
    return value
