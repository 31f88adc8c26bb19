"""The one way the app writes a file: a reader never sees it half-written, a crash never
leaves it empty, and the file stays the user's.

The bytes go to a temporary file in the target's folder (a name no other process uses), are
flushed to disk, and are renamed over the target in one step; the folder is then flushed
too, so the rename survives a power cut. Writing through a symbolic link replaces the file
it points to (in that file's folder) and keeps the link, when the link is the user's own
(another user's link in a shared folder such as /tmp is replaced, never followed). A file the
user may not write (read-only) is refused, not replaced, and so is anything but a regular file:
a folder, a FIFO or a device, named or reached through the user's link (as root, a link to
/dev/null would otherwise replace the system's /dev/null). Replacing a file keeps its
permission bits (a private 0600 session stays private); hard links to it keep the old text.
A temporary file left by a process that was killed mid-write is removed by the first write
into its folder, or by ``remove_stale`` over a folder at start-up.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import time
from pathlib import Path

from explorer.core.files.processes import running
from explorer.core.files.reading import kind_of

STALE_AFTER_S = 60.0  # a write takes milliseconds; a temporary this old is a dead process's
_TEMPORARY = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)-[0-9a-f]{8}\.tmp$")


class NotAFileError(OSError):
    """A path the writer refuses because it names (or links to) something other than a
    regular file; its message reads like the readers' ("out.svg: is a named pipe (FIFO), …")."""

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


def write_text_atomic(path: str | Path, text: str, mode: int | None = None) -> Path:
    """Replace ``path`` with ``text`` atomically (raises OSError; the old file stays)."""
    return write_bytes_atomic(path, text.encode("utf-8"), mode)


def write_bytes_atomic(path: str | Path, data: bytes, mode: int | None = None) -> Path:
    """Replace ``path`` with ``data`` atomically (raises OSError, with the system's reason;
    the old file stays and no partial file is left). A new file gets ``mode`` (default: the
    umask's); a replaced one keeps its own. Returns ``path``."""
    path = Path(path)
    target = target_of(path)
    refuse_special(path, target)
    kept = _mode_of(target)
    if kept is not None and not os.access(target, os.W_OK):
        raise PermissionError(errno.EACCES, "the file is read-only (not replaced)", str(path))
    if target.parent not in _tidied:  # once per folder and process: a folder may be large
        _tidied.add(target.parent)
        remove_stale(target.parent)
    tmp = target.with_name(f".{target.name}.{os.getpid()}-{os.urandom(4).hex()}.tmp")
    try:
        descriptor = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                             0o666 if mode is None else 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            chosen = kept if kept is not None else mode
            if chosen is not None:
                _chmod(handle.fileno(), tmp, chosen)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except OSError as exc:  # name the user's file, not the temporary one
        _remove(tmp)
        raise type(exc)(exc.errno, exc.strerror or str(exc), str(path)) from None
    except BaseException:
        _remove(tmp)
        raise
    _sync_folder(target.parent)
    return path


def target_of(path: str | Path) -> Path:
    """The file a write to ``path`` replaces: through every symbolic link the user owns to
    the file it names (a link whose target does not exist yet creates that target)."""
    path = Path(path)
    if not _own_link(path):
        return path
    target = Path(os.path.realpath(path))
    if target.is_symlink():  # realpath gives up inside a loop of links
        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), str(path))
    return target


_tidied: set[Path] = set()


def refuse_special(path: str | Path, target: Path | None = None) -> None:
    """Raise NotAFileError when what a write to ``path`` would replace (``target``, default
    ``target_of(path)``) exists and is not a regular file (a link left there is another
    user's: replaced, never followed). Asked before long work, it saves a lost result."""
    path = Path(path)
    target = target_of(path) if target is None else target
    try:
        mode = os.lstat(target).st_mode
    except OSError:
        return  # a new name; any other trouble is the write's to report
    if stat.S_ISREG(mode) or stat.S_ISLNK(mode):
        return
    what = kind_of(mode)
    reason = f"is {what}" if target == path else f"links to {target}, {what}"
    raise NotAFileError(errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL,
                        f"{reason}, not a file: only regular files are written", str(path))


def _remove(tmp: Path) -> None:
    """Remove a temporary after a failed write; a clean-up that fails too (a read-only file
    system) must not replace the write's own error."""
    with contextlib.suppress(OSError):
        tmp.unlink(missing_ok=True)


def _own_link(path: Path) -> bool:
    """A symbolic link this user made (another user's, in a shared folder, is not followed:
    it could point at any file of ours)."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    getuid = getattr(os, "getuid", None)  # (Windows: no owners to compare)
    return stat.S_ISLNK(info.st_mode) and (getuid is None or info.st_uid == getuid())


def _mode_of(path: Path) -> int | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return stat.S_IMODE(info.st_mode) if stat.S_ISREG(info.st_mode) else None


def _chmod(descriptor: int, path: Path, mode: int) -> None:
    if hasattr(os, "fchmod"):
        os.fchmod(descriptor, mode)
    else:  # Windows: only the read-only bit exists
        os.chmod(path, mode)


def _sync_folder(folder: Path) -> None:
    """Flush a folder's entries (the rename) to disk, where the system allows it."""
    try:
        descriptor = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return  # Windows cannot open a folder; its rename is already durable
    try:
        os.fsync(descriptor)
    except OSError:
        pass  # some file systems refuse fsync on a folder: the data itself is on disk
    finally:
        os.close(descriptor)


def remove_stale(folder: str | Path, name: str | None = None) -> list[Path]:
    """Remove the temporary files this writer left in ``folder`` (for the file ``name``, or
    for any) when the process that wrote each is no longer running and the file is older
    than ``STALE_AFTER_S`` (a folder shared with another machine may hold a live writer's).
    Returns what was removed; a folder that cannot be read has nothing to remove."""
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    now = time.time()
    for entry in entries:
        match = _TEMPORARY.match(entry.name)
        if not match or (name is not None and match["name"] != name):
            continue
        with contextlib.suppress(OSError):
            info = entry.stat(follow_symlinks=False)
            if (stat.S_ISREG(info.st_mode) and now - info.st_mtime > STALE_AFTER_S
                    and not running(int(match["pid"]), None)):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
    return removed
