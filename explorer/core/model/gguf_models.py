"""GGUF files as models the app lists and keeps: their ids and what a session holds of one.

A GGUF file found on this machine (``gguf_discovery``: LM Studio's folders, Ollama's store,
the folders ``$ROOFLINE_EXPLORER_GGUF_DIRS`` names) is listed as ``gguf-`` and its name
(Ollama's ``model:tag``, else the file's name without ``.gguf``); the id is made from the
name alone, so ``--model gguf-ID`` reads only the file it names, and a name two files share
takes a suffix from the path (``local_models``' rule).

A session cannot carry a GGUF file's content (gigabytes) as it carries a config.json's: it
holds a reference, ``{"gguf_file": PATH, "bytes": SIZE, "modified_ns": TIME}`` in the place
of the config (``model: config``), and the model is read from the file again when the
session opens. A file gone opens the session with the default model and says so, as a
listed config.json gone does; a file whose size or time moved is read as it is now, and
the opening says so.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

from explorer.core.files.datafile import DataFileError
from explorer.core.model.gguf_discovery import FoundGguf, find_ggufs
from explorer.core.model.models import TransformerSpec

PREFIX = "gguf-"
FOLDERS_VARIABLE = "ROOFLINE_EXPLORER_GGUF_DIRS"  # folders of GGUF files, os.pathsep between them
KEY = "gguf_file"


def named_folders(environ: Mapping[str, str] | None = None) -> tuple[Path, ...]:
    """The folders ``$ROOFLINE_EXPLORER_GGUF_DIRS`` names (``os.pathsep`` between them)."""
    value = (os.environ if environ is None else environ).get(FOLDERS_VARIABLE, "")
    return tuple(Path(part).expanduser() for part in value.split(os.pathsep) if part.strip())


def found(folders: tuple[Path, ...] = (), home: Path | None = None,
          environ: Mapping[str, str] | None = None) -> list[FoundGguf]:
    """The GGUF files of the usual places, the named folders and ``folders``."""
    return find_ggufs(home, environ, (*named_folders(environ), *folders))


WATCH_DEPTH = 3  # LM Studio's publisher/repository/, Ollama's manifests/host/namespace/model/


def watched(home: Path | None = None, environ: Mapping[str, str] | None = None) -> tuple[Path, ...]:
    """The folders whose change means GGUF files came or went: LM Studio's, Ollama's
    manifests and the named folders, with their folders ``WATCH_DEPTH`` deep (a file added
    moves its own folder's time only), ``LIMIT`` at most from each."""
    from explorer.core.model.gguf_discovery import LIMIT, lm_studio_folders, ollama_folder

    home = Path.home() if home is None else home
    environ = os.environ if environ is None else environ
    out: list[Path] = []
    manifests = ollama_folder(home, environ) / "manifests"
    for top in (*lm_studio_folders(home), manifests, *named_folders(environ)):
        out.append(top)
        level = [top]
        for _ in range(WATCH_DEPTH):
            level = [sub for folder in level for sub in _folders(folder)][:LIMIT]
            out.extend(level)
    return tuple(out)


def _folders(folder: Path) -> list[Path]:
    try:
        return sorted(entry for entry in folder.iterdir() if entry.is_dir())
    except OSError:
        return []


def base_id(item: FoundGguf) -> str:
    """``gguf-`` and a slug of the name: Ollama's ``model:tag`` whole, a file's own name."""
    name = item.name if item.store == "ollama" else item.name.rsplit("/", 1)[-1]
    return PREFIX + (re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "model")


def is_reference(config: object) -> bool:
    return isinstance(config, Mapping) and KEY in config


def read_gguf_model(path: str | Path, ident: str = "") -> TransformerSpec:
    """The model the GGUF file ``path`` holds (``gguf_file``), its ``config`` the reference a
    session keeps; ``ident``: its listed id (else ``gguf_file``'s, from the file's name)."""
    return read_gguf_listed(path, ident)[0]


def read_gguf_listed(path: str | Path, ident: str = "") -> tuple[TransformerSpec, int]:
    """``read_gguf_model``'s model and the bytes the file's tensors take. A file read before
    with the same size and time is not read again (gguf's reader takes seconds over a
    vocabulary of 32,000 tokens: its metadata is parsed field by field in Python)."""
    where = os.path.abspath(path)
    try:
        stat = os.stat(where)
    except OSError as exc:
        raise DataFileError(str(path), f"cannot be read: {exc.strerror or exc}") from None
    spec, size = _read(where, stat.st_size, stat.st_mtime_ns)
    return replace(spec, id=ident or spec.id), size


@lru_cache(maxsize=64)
def _read(where: str, size: int, modified_ns: int) -> tuple[TransformerSpec, int]:
    from explorer.core.model.gguf_file import spec_from_gguf

    spec, file = spec_from_gguf(where)
    stored = json.dumps({KEY: where, "bytes": size, "modified_ns": modified_ns}, sort_keys=True,
                        separators=(",", ":"))
    return replace(spec, config=stored), file.weight_bytes


def referenced_path(config: Mapping[str, object], origin: str) -> Path:
    raw = config.get(KEY)
    if not isinstance(raw, str) or not raw:
        raise DataFileError(origin, "must be the GGUF file's path", field=KEY)
    return Path(raw)


def spec_from_reference(config: Mapping[str, object], origin: str) -> TransformerSpec:
    """The model of the GGUF file a session refers to; a ``DataFileError`` when it is gone."""
    path = referenced_path(config, origin)
    if not path.is_file():
        raise DataFileError(origin, gone(path), field=KEY)
    return read_gguf_model(path)


def gone(path: Path) -> str:
    return (f"the GGUF file {path} is no longer there (moved or deleted): open it where it is now "
            "(--model-config, or File › Models on this machine)")


def changed(config: Mapping[str, object]) -> str:
    """What moved since the session was saved ("": nothing; the file is there)."""
    path = Path(str(config.get(KEY, "")))
    try:
        stat = path.stat()
    except OSError:
        return ""
    moved = []
    if config.get("bytes") != stat.st_size:
        then = config.get("bytes")
        moved.append(f"{then:,} bytes then, {stat.st_size:,} now" if isinstance(then, int) else
                     f"{stat.st_size:,} bytes now")
    elif config.get("modified_ns") != stat.st_mtime_ns:
        moved.append("written again since")
    return (f"the GGUF file {path} changed since the session was saved ({moved[0]}): the model is read "
            "from the file as it is now") if moved else ""
