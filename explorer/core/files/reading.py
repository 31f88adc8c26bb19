"""The one way the app reads a file a user could have put in its path.

Sessions, workloads, config.json, results, journals, locks, the recent-files list and the
user's devices and scenes all come through ``read_bytes``/``read_text``: only a regular file
is read (a FIFO would block forever, /dev/zero never ends, a folder or a device is no data),
and never more than a limit. The check is made on the opened descriptor, so a file swapped
for a pipe between a look and the open is still refused. Every failure is a
``DataFileError`` naming the file and saying what to do.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from explorer.core.files.errors import DataFileError

MAX_FILE_BYTES = 4 << 20  # a data file, session or workload: the largest shipped is 40 KB

# Opening a FIFO for reading blocks until a writer comes, unless non-blocking; a terminal
# must not become the controlling one. Both are absent on Windows (no FIFOs to fear there).
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


def kind_of(mode: int) -> str:
    """"a folder", "a named pipe (FIFO)", …: what a file that is not regular is."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


@contextlib.contextmanager
def open_regular(path: str | Path) -> Iterator[BinaryIO]:
    """``path`` opened for reading in binary, if it is a regular file (raises DataFileError)."""
    path = Path(path)
    try:
        descriptor = os.open(path, _FLAGS)
    except OSError as exc:
        raise DataFileError(path, f"cannot be read: {_why(path, exc)}") from None
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise DataFileError(path, f"is {kind_of(mode)}, not a file: only regular files are read")
        if hasattr(os, "set_blocking"):
            os.set_blocking(descriptor, True)
        handle = os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise
    with handle:
        yield handle


def _why(path: Path, exc: OSError) -> str:
    """The system's reason, and for a link whose file is gone, where it pointed."""
    reason = exc.strerror or str(exc)
    if isinstance(exc, FileNotFoundError) and path.is_symlink():
        with contextlib.suppress(OSError):
            return f"it links to {os.readlink(path)}, which does not exist ({reason})"
    return reason


def read_bytes(path: str | Path, limit: int = MAX_FILE_BYTES) -> bytes:
    """The content of the regular file ``path``, refused when larger than ``limit`` bytes
    (read up to the limit: a growing file or one whose size the system misreports is
    caught too)."""
    path = Path(path)
    with open_regular(path) as handle:
        try:
            size = os.fstat(handle.fileno()).st_size
            data = handle.read(limit + 1) if size <= limit else b""
        except OSError as exc:
            raise DataFileError(path, f"cannot be read: {exc.strerror or exc}") from None
    if size > limit or len(data) > limit:
        raise DataFileError(path, f"is {max(size, len(data)) / 2**20:.1f} MB or more; files over "
                                  f"{_megabytes(limit)} are refused (is it the right file?)")
    return data


def read_text(path: str | Path, limit: int = MAX_FILE_BYTES) -> str:
    """``read_bytes`` decoded as UTF-8 (a file in another encoding is refused by name)."""
    return decoded(path, read_bytes(path, limit))


def decoded(path: str | Path, data: bytes) -> str:
    """``data`` read from ``path`` as UTF-8 text, or the DataFileError that names the byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataFileError(path, f"is not UTF-8 text (byte {exc.start:,} cannot be decoded): "
                                  "save it as UTF-8, or check that it is the right file") from None


def _megabytes(limit: int) -> str:
    return f"{limit >> 20} MB" if limit >= 1 << 20 else f"{limit:,} bytes"
