"""GGUF files where local runners keep them: LM Studio's model folders, Ollama's blob store
(named through its manifests), and any folder the user names. Only names and paths are
read here (a manifest is a small JSON file); ``gguf_file`` reads a file found.

- LM Studio: ``~/.cache/lm-studio/models`` and ``~/.lmstudio/models``, as
  ``publisher/repository/file.gguf``.
- Ollama (its ``envconfig.Models`` and ``manifest/paths.go``): ``$OLLAMA_MODELS``, else
  ``~/.ollama/models``; a manifest at ``manifests/<host>/<namespace>/<model>/<tag>`` lists
  layers, the model's with media type ``application/vnd.ollama.image.model``, whose digest
  ``sha256:<hex>`` names the blob ``blobs/sha256-<hex>``. The model is named
  ``model:tag`` (``namespace/model:tag`` outside the default "library").
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

MODEL_LAYER = "application/vnd.ollama.image.model"
LIMIT = 2_000  # files listed from one place at most (a folder of a whole disk stops there)
_DIGEST = re.compile(r"sha256[:-]([0-9a-fA-F]{64})")


@dataclass(frozen=True)
class FoundGguf:
    """A GGUF file found: what to call it, where it is, and which store holds it."""

    name: str
    path: Path
    store: str  # "lm-studio" | "ollama" | "folder"


def lm_studio_folders(home: Path) -> tuple[Path, ...]:
    return (home / ".cache" / "lm-studio" / "models", home / ".lmstudio" / "models")


def ollama_folder(home: Path, environ: Mapping[str, str]) -> Path:
    return Path(environ["OLLAMA_MODELS"]) if environ.get("OLLAMA_MODELS") else home / ".ollama" / "models"


def find_ggufs(home: Path | None = None, environ: Mapping[str, str] | None = None,
               folders: tuple[Path, ...] = ()) -> list[FoundGguf]:
    """Every GGUF file in LM Studio's folders, Ollama's store and ``folders``, each once."""
    home = Path.home() if home is None else home
    environ = os.environ if environ is None else environ
    found: dict[Path, FoundGguf] = {}
    for folder in lm_studio_folders(home):
        for item in in_folder(folder, "lm-studio"):
            found.setdefault(item.path.resolve(), item)
    for item in in_ollama(ollama_folder(home, environ)):
        found.setdefault(item.path.resolve(), item)
    for folder in folders:
        for item in in_folder(folder, "folder"):
            found.setdefault(item.path.resolve(), item)
    return sorted(found.values(), key=lambda f: (f.store, f.name))


def in_folder(folder: Path, store: str) -> Iterator[FoundGguf]:
    """The ``*.gguf`` files under ``folder`` (sorted, at most ``LIMIT``), named by their path
    inside it without the extension."""
    if not folder.is_dir():
        return
    paths = sorted(p for p in folder.rglob("*") if p.suffix.lower() == ".gguf" and p.is_file())
    for path in paths[:LIMIT]:
        yield FoundGguf(path.relative_to(folder).with_suffix("").as_posix(), path, store)


def in_ollama(models: Path) -> Iterator[FoundGguf]:
    """Ollama's models: each manifest's model layer, its blob when present."""
    manifests = models / "manifests"
    if not manifests.is_dir():
        return
    for manifest in sorted(p for p in manifests.rglob("*") if p.is_file())[:LIMIT]:
        blob = _model_blob(manifest, models / "blobs")
        if blob is not None:
            yield FoundGguf(_ollama_name(manifest.relative_to(manifests)), blob, "ollama")


def _model_blob(manifest: Path, blobs: Path) -> Path | None:
    try:
        layers = json.loads(manifest.read_text(encoding="utf-8")).get("layers", [])
    except (OSError, ValueError, AttributeError):
        return None  # not a manifest (or unreadable): nothing to list
    for layer in layers if isinstance(layers, list) else []:
        if isinstance(layer, dict) and layer.get("mediaType") == MODEL_LAYER:
            match = _DIGEST.fullmatch(str(layer.get("digest", "")))
            blob = blobs / f"sha256-{match.group(1)}" if match else None
            return blob if blob is not None and blob.is_file() else None
    return None


def _ollama_name(relative: Path) -> str:
    """``registry.ollama.ai/library/llama3/8b`` → ``llama3:8b``; another namespace or host kept."""
    parts = relative.parts
    if len(parts) < 3:
        return relative.as_posix()
    *where, model, tag = parts
    if where and where[0] == "registry.ollama.ai":
        where = where[1:]
    if where == ["library"]:
        where = []
    return "/".join([*where, model]) + f":{tag}"
