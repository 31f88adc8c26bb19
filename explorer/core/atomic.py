"""Writing a file so that a reader never sees it half-written and a crash never leaves it
empty: the text goes to a temporary file beside it (a name no other process uses), is
flushed to disk, then renamed over the target in one step."""

from __future__ import annotations

import os
import secrets
from pathlib import Path


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Replace ``path`` with ``text`` atomically (raises OSError; the old file stays)."""
    return write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: str | Path, data: bytes) -> Path:
    """Replace ``path`` with ``data`` atomically (raises OSError, with the system's reason;
    the old file stays and no partial file is left)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path
