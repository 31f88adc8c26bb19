"""The models already on this machine: the config.json of every model in the local Hugging
Face cache (``$HF_HUB_CACHE``, else ``$HF_HOME/hub``, else ``~/.cache/huggingface/hub``),
where a download keeps ``models--ORG--NAME/snapshots/REVISION/config.json``. Only config
files are read, offline; a broken entry is skipped with its reason, never fatal."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from explorer.core.files.errors import DataFileError
from explorer.core.files.reading import read_text
from explorer.core.model.hf_config import read_config_file
from explorer.core.model.models import TransformerSpec

MAX_REPOSITORIES = 1000  # a cache folder holding more is read up to this many, in name order


@dataclass(frozen=True)
class Cached:
    repository: str  # "org/name"
    path: Path  # its config.json
    spec: TransformerSpec | None  # None: skipped, ``problem`` says why
    problem: str = ""


def hub_folder(environ: Mapping[str, str] = os.environ) -> Path:
    if environ.get("HF_HUB_CACHE"):
        return Path(environ["HF_HUB_CACHE"])
    home = Path(environ["HF_HOME"]) if environ.get("HF_HOME") else Path.home() / ".cache" / "huggingface"
    return home / "hub"


def _snapshot(folder: Path) -> Path | None:
    """The config.json of the revision ``refs/main`` names, else of the newest snapshot;
    one that is there but no regular file (a FIFO, a link to a blob that is gone) when no
    snapshot has a readable one, so that the reader says what it is."""
    snapshots = folder / "snapshots"
    try:  # a regular file of a few bytes, or nothing (never a pipe or a device: read_text)
        main = read_text(folder / "refs" / "main", 256).strip()
    except (DataFileError, OSError):
        main = ""
    if main and (snapshots / main / "config.json").is_file():
        return snapshots / main / "config.json"
    try:
        present = [p / "config.json" for p in snapshots.iterdir() if os.path.lexists(p / "config.json")]
    except OSError:
        return None
    found = [p for p in present if p.is_file()]
    return max(found, key=lambda p: p.stat().st_mtime) if found else min(present, default=None)


def _problem(config: Path) -> str | None:
    """What a config.json that no reader can open is, where the reader cannot say it."""
    if config.is_symlink() and not config.exists():
        return (f"{config}: is a link to {os.readlink(config)}, which does not exist (a download "
                "cut short?)")
    return None


def cached_models(folder: Path | None = None) -> list[Cached]:
    """Every model repository in the cache ``folder`` (default: ``hub_folder()``)."""
    folder = hub_folder() if folder is None else folder
    try:
        repositories = sorted(p for p in folder.iterdir() if p.name.startswith("models--") and p.is_dir())
    except OSError:
        return []
    out = []
    for repo in repositories[:MAX_REPOSITORIES]:
        name = repo.name.removeprefix("models--").replace("--", "/")
        config = _snapshot(repo)
        if config is None:
            out.append(Cached(name, repo, None, f"{name}: no snapshot holds a config.json"))
            continue
        try:
            out.append(Cached(name, config, read_config_file(config, name, named=True)))
        except DataFileError as exc:  # named by its repository: the path alone hides it in the cache
            out.append(Cached(name, config, None, f"{name}: {_problem(config) or exc}"))
    return out
