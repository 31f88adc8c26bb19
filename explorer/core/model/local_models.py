"""The models read from config.json files that the app lists by id (``roofline-explorer
models``) and that ``--model ID`` accepts: the configs shipped with the app, then the
models in this machine's Hugging Face cache (``hf_cache``).

An id is ``hf-`` and the model's name (``hf_config``); each file has its own: a file whose
id an earlier one (or a preset) already has gets a suffix from its path, the first six hex
digits of the path's SHA-1, so the same file keeps the same id from one run to the next.
The shipped configs come first, so theirs never change; the cache's are in repository
order. Then the GGUF files found on this machine (``gguf_models``): ``gguf-`` ids made from
their names alone, so one is found without reading the others.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Collection, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from explorer.core.files.datafile import DataFileError
from explorer.core.files.registry import UnknownIdError
from explorer.core.model.gguf_discovery import FoundGguf
from explorer.core.model.gguf_models import PREFIX, base_id, found, read_gguf_listed, read_gguf_model
from explorer.core.model.hf_cache import Scan, scan
from explorer.core.model.hf_config import read_config_file
from explorer.core.model.models import TransformerSpec

SHIPPED, CACHE, GGUF = "shipped", "cache", "gguf"


@dataclass(frozen=True)
class Listed:
    """A config.json the app lists: its model under its unique id (``spec`` None: it
    cannot be read, ``problem`` says why)."""

    kind: str  # SHIPPED, CACHE or GGUF
    path: Path  # the config.json (a cache repository's folder when no snapshot holds one), the GGUF file
    spec: TransformerSpec | None
    repository: str = ""  # a cache's "ORG/NAME"; a GGUF file's name (Ollama's "model:tag")
    problem: str = ""
    store: str = ""  # a GGUF file's: "lm-studio", "ollama" or "folder"
    weight_bytes: int = 0  # a GGUF file's: the bytes its tensors take

    @property
    def id(self) -> str | None:
        return self.spec.id if self.spec is not None else None


def shipped_paths() -> list[Path]:
    from explorer.paths import resource_path

    return sorted(Path(resource_path("models", "configs")).glob("*.json"))


def _suffixed(ident: str, path: Path) -> str:
    digest = hashlib.sha1(os.path.abspath(path).encode("utf-8", "surrogateescape")).hexdigest()
    return f"{ident}-{digest[:6]}"


def _unique(entries: Iterator[Listed], taken: Collection[str]) -> Iterator[Listed]:
    seen = set(taken)
    for entry in entries:
        if entry.spec is not None:
            ident = entry.spec.id
            if ident in seen:
                ident = _suffixed(ident, entry.path)
                entry = replace(entry, spec=replace(entry.spec, id=ident))
            seen.add(ident)
        yield entry


def _shipped() -> Iterator[Listed]:
    for path in shipped_paths():
        yield Listed(SHIPPED, path, read_config_file(path))


def _cached(found: Scan) -> Iterator[Listed]:
    for cached in found.models:
        yield Listed(CACHE, cached.path, cached.spec, cached.repository, cached.problem)


def local_models(taken: Collection[str] = (), cache: Scan | None = None) -> list[Listed]:
    """The shipped configs and the cache's models (``cache``: a scan already made, else the
    cache is read now), each with its own id, none of them one of ``taken`` (the presets')."""
    found = scan() if cache is None else cache
    return list(_unique(iter([*_shipped(), *_cached(found)]), taken))


def gguf_ids(found: list[FoundGguf]) -> list[tuple[str, FoundGguf]]:
    """Each GGUF file found with its id, made from its name (``gguf_models.base_id``), a
    name two files share suffixed from the path."""
    seen: set[str] = set()
    out = []
    for item in found:
        ident = base_id(item)
        if ident in seen:
            ident = _suffixed(ident, item.path)
        seen.add(ident)
        out.append((ident, item))
    return out


def _gguf(ident: str, item: FoundGguf) -> Listed:
    try:
        spec, size = read_gguf_listed(item.path, ident)
        return Listed(GGUF, item.path, spec, item.name, store=item.store, weight_bytes=size)
    except DataFileError as exc:
        return Listed(GGUF, item.path, None, item.name, str(exc), item.store)


def gguf_models(folders: tuple[Path, ...] = ()) -> list[Listed]:
    """The GGUF files found (``gguf_models.found``; ``folders`` besides), each read."""
    return [_gguf(ident, item) for ident, item in gguf_ids(found(folders))]


def find_model(ident: str, taken: Collection[str] = ()) -> TransformerSpec:
    """The model listed as ``ident`` (the shipped configs are looked at before the cache is
    read; a ``gguf-`` id reads the one file it names); an ``UnknownIdError`` naming close
    matches when none is, or a ``DataFileError`` when the GGUF file named cannot be read."""
    if ident.startswith(PREFIX):
        named = gguf_ids(found())
        for listed_id, item in named:
            if listed_id == ident:
                return read_gguf_model(item.path, ident)
        raise UnknownIdError("model", ident, [*taken, *(i for i, _ in named)])
    shipped = list(_unique(_shipped(), taken))
    for entry in shipped:
        if entry.id == ident and entry.spec is not None:
            return entry.spec
    listed = local_models(taken)
    for entry in listed:
        if entry.id == ident and entry.spec is not None:
            return entry.spec
    raise UnknownIdError("model", ident, [*taken, *(e.id for e in listed if e.id)])
