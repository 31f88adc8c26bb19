"""The models already on this machine: the config.json of every model in the local Hugging
Face cache (``hub_folder``: where huggingface_hub puts it), where a download keeps
``models--ORG--NAME/snapshots/REVISION/config.json``. Only config files are read, offline;
a broken entry is skipped with its reason, never fatal. A cache of more than
``MAX_REPOSITORIES`` is read up to that many and says how many it left out."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from explorer.core.files.errors import DataFileError
from explorer.core.files.reading import read_text
from explorer.core.model.hf_config import read_config_file
from explorer.core.model.hf_names import CACHE_PREFIX, repository_of
from explorer.core.model.models import TransformerSpec

MAX_REPOSITORIES = 1000  # a cache folder holding more is read up to this many, in name order


@dataclass(frozen=True)
class Cached:
    repository: str  # "org/name"
    path: Path  # its config.json
    spec: TransformerSpec | None  # None: skipped, ``problem`` says why
    problem: str = ""


def _expanded(value: str, environ: Mapping[str, str]) -> str:
    """``~`` and ``$VAR`` expanded, as huggingface_hub does (``os.path.expanduser`` then
    ``os.path.expandvars``), against ``environ``."""
    value = os.path.expanduser(value)
    return re.sub(r"\$(\w+)|\$\{(\w+)\}",
                  lambda m: environ.get(m.group(1) or m.group(2), m.group(0)), value)


def hub_folder(environ: Mapping[str, str] = os.environ) -> Path:
    """The cache folder huggingface_hub downloads models to, in its order (its
    src/huggingface_hub/constants.py at commit 03333b689b5a2dee604676791c0792ede6246a31:
    ``HF_HOME = expandvars(expanduser(getenv("HF_HOME", join(getenv("XDG_CACHE_HOME",
    "~/.cache"), "huggingface"))))``, ``default_cache_path = join(HF_HOME, "hub")``,
    ``HUGGINGFACE_HUB_CACHE = getenv("HUGGINGFACE_HUB_CACHE", default_cache_path)``,
    ``HF_HUB_CACHE = expandvars(expanduser(getenv("HF_HUB_CACHE", HUGGINGFACE_HUB_CACHE)))``):
    ``$HF_HUB_CACHE``, the legacy ``$HUGGINGFACE_HUB_CACHE``, ``$HF_HOME/hub``,
    ``$XDG_CACHE_HOME/huggingface/hub``, ``~/.cache/huggingface/hub``. A variable set to ""
    counts as unset here (huggingface_hub would read "" as the current folder)."""
    for variable in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if environ.get(variable):
            return Path(_expanded(environ[variable], environ))
    if environ.get("HF_HOME"):
        return Path(_expanded(environ["HF_HOME"], environ)) / "hub"
    cache = _expanded(environ["XDG_CACHE_HOME"], environ) if environ.get("XDG_CACHE_HOME") else \
        os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "huggingface" / "hub"


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


@dataclass(frozen=True)
class Scan:
    """What a read of the cache found: its ``models`` (the first ``MAX_REPOSITORIES``
    repositories in name order) of ``repositories`` there in all."""

    folder: Path
    models: tuple[Cached, ...]
    repositories: int

    @property
    def left_out(self) -> int:
        return self.repositories - len(self.models)

    def cut_notice(self) -> str:
        """Why the list is short, or "" when it holds every repository."""
        if not self.left_out:
            return ""
        verb = "is" if self.left_out == 1 else "are"
        return (f"{self.left_out:,} of the {self.repositories:,} repositories in {self.folder} {verb} not "
                f"listed: only the first {len(self.models):,} in name order are read, so that listing "
                "stays quick")


def scan(folder: Path | None = None, limit: int | None = None) -> Scan:
    """Every model repository in the cache ``folder`` (default: ``hub_folder()``), up to
    ``limit`` of them (default ``MAX_REPOSITORIES``)."""
    folder = hub_folder() if folder is None else folder
    limit = MAX_REPOSITORIES if limit is None else limit
    try:
        repositories = sorted(p for p in folder.iterdir() if p.name.startswith(CACHE_PREFIX) and p.is_dir())
    except OSError:
        return Scan(folder, (), 0)
    out = []
    for repo in repositories[:limit]:
        name = repository_of(repo)
        config = _snapshot(repo)
        if config is None:
            out.append(Cached(name, repo, None, f"{name}: no snapshot holds a config.json"))
            continue
        try:  # named by its repository (read_config_file sees it in the path)
            out.append(Cached(name, config, read_config_file(config)))
        except DataFileError as exc:  # named by its repository: the path alone hides it in the cache
            out.append(Cached(name, config, None, f"{name}: {_problem(config) or exc}"))
    return Scan(folder, tuple(out), len(repositories))


def cached_models(folder: Path | None = None) -> list[Cached]:
    """Every model repository in the cache ``folder`` (default: ``hub_folder()``), up to
    ``MAX_REPOSITORIES`` (``scan`` says how many more there are)."""
    return list(scan(folder).models)
