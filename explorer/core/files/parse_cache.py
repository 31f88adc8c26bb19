"""Parsed YAML kept between starts: the window reads the same 25 data files at every start,
and parsing them (PyYAML builds every value in Python, even with LibYAML's parser) is about
a twentieth of the time to the first painted frame.

An entry is found by the file's whole text, never by its name or date, so an edited file
is parsed afresh; it holds the parsed value in ``marshal``'s format (plain data only: a
file whose values marshal cannot hold, a date, is parsed every time). The file carries its
length, a CRC-32 of its payload and one of the versions it was written by, all checked
before ``marshal`` reads a byte of it: ``marshal`` trusts its input (a damaged file can
make it ask for gigabytes or crash the interpreter), so a file cut short, damaged on disk,
written by another version or not a regular file is ignored and replaced, never read; the
worst it can cost is the parse it was meant to save. (A file forged with a valid checksum
by someone who can write the user's data folder could still crash the app; deleting
``cache/`` ends it.) Only the code inside ``parse_cache()`` (the window's start) uses it."""

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

MAGIC = b"roofline-explorer parsed YAML 2\n"
MAX_BYTES = 2 << 20  # the file's payload; kept to the entries used last, the most recent first
_MISSING = object()


def _code() -> tuple[tuple[int, int] | None, ...]:
    """The files whose code turns a text into values, PyYAML's (its folder, whose date a
    reinstall changes, and the modules that build values) and the app's loader
    (``yamltext``), by size and modification time, found without importing them: an
    upgrade, a reinstall or an edit empties the cache. (In a desktop bundle they sit in its
    archive, and the bundle's own program stands for them.)"""
    spec = importlib.util.find_spec("yaml")
    folder = Path(spec.origin).parent if spec and spec.origin else None
    files: list[Path | str | None]
    files = [folder, *(folder / name for name in ("__init__.py", "constructor.py", "resolver.py"))] \
        if folder else [None]
    files.append(Path(__file__).with_name("yamltext.py"))
    if getattr(sys, "frozen", False):
        files.append(sys.executable)
    out: list[tuple[int, int] | None] = []
    for name in files:
        if name is None:  # (no PyYAML found)
            out.append(None)
            continue
        try:
            status = os.stat(name)
            out.append((status.st_size, status.st_mtime_ns))
        except (OSError, TypeError):
            out.append(None)
    return tuple(out)


# What the parsed values depend on besides the text: a change to any of these empties the cache.
FORMAT = (sys.version_info[:2], marshal.version, _code())


class ParseCache:
    """The entries of one cache file: (how it was parsed, text) → marshalled value."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._entries = _read(path)
        self._used: dict[tuple[str, ...], None] = {}  # in the order this run asked for them
        self._changed = False
        self._lock = threading.Lock()  # a background job may load a file meanwhile

    def get(self, key: tuple[str, str]) -> Any:
        """The value stored under ``key`` (fresh objects each time), or ``_MISSING``."""
        with self._lock:
            blob = self._entries.get(key)
            self._used[key] = None
        if blob is None:
            return _MISSING
        try:
            return marshal.loads(blob)
        except Exception:  # (the file's checksum held: not expected, but never fatal)
            return _MISSING

    def put(self, key: tuple[str, str], value: Any) -> None:
        try:
            blob = marshal.dumps(value)
        except ValueError:  # a value marshal cannot hold (a date): parsed every time
            return
        with self._lock:
            self._entries[key] = blob
            self._changed = True

    def save(self) -> None:
        """Write the entries back if any was added: this run's first, then the others while
        the file stays under ``MAX_BYTES``. A cache that cannot be written is left as it is."""
        if not self._changed:
            return
        kept, size = {}, 0
        for key in [*self._used, *self._entries]:
            blob = self._entries.get(key)
            if blob is None or key in kept:
                continue
            grown = size + len(key[1].encode("utf-8", "surrogatepass")) + len(blob)
            if grown > MAX_BYTES:
                continue
            kept[key], size = blob, grown
        payload = marshal.dumps((FORMAT, kept))
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_bytes_atomic(self.path, MAGIC + _frame(payload) + payload)
        self._changed = False


def _frame(payload: bytes) -> bytes:
    """What comes before the payload, 12 bytes after ``MAGIC``: a CRC-32 of ``FORMAT`` (a
    file of another Python, PyYAML or loader is refused unread), the payload's length and
    its CRC-32."""
    return b"".join(value.to_bytes(4, "big") for value in (zlib.crc32(repr(FORMAT).encode()), len(payload),
                                                             zlib.crc32(payload)))


def _read(path: Path) -> dict[tuple[str, ...], bytes]:
    """The entries of the cache file at ``path``; none when it is missing, not a regular
    file (``read_bytes`` never blocks on a pipe), too large, cut short, damaged, or written
    by another version."""
    try:
        data = read_bytes(path, limit=len(MAGIC) + 12 + MAX_BYTES + (1 << 20))
    except DataFileError:
        return {}
    head, payload = data[:len(MAGIC) + 12], data[len(MAGIC) + 12:]
    if head != MAGIC + _frame(payload):  # checked before marshal reads anything
        return {}
    try:
        header, entries = marshal.loads(payload)
    except Exception:  # (the checksum held: not expected, but never fatal)
        return {}
    if header != FORMAT or not isinstance(entries, dict):
        return {}
    return {key: blob for key, blob in entries.items()
            if isinstance(key, tuple) and len(key) == 2 and all(isinstance(part, str) for part in key)
            and isinstance(blob, bytes)}


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
