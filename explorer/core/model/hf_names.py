"""What a Hugging Face ``config.json`` is called, from where it lies (``hf_config`` names a
model with these).

A file in a Hugging Face cache lies in ``models--ORG--NAME/snapshots/REVISION/``: it is the
repository ``ORG/NAME`` (huggingface_hub writes ``/`` in a repository's id as ``--``:
``REPO_ID_SEPARATOR`` in its constants.py). Elsewhere a folder names it, but not one that
says nothing of the model: a snapshot's 40-character commit hash, a Trainer's
``checkpoint-500`` (transformers' ``PREFIX_CHECKPOINT_DIR`` and the step), a cache's
``snapshots`` folder; then the folder above. A ``_name_or_path`` that is a path (a config
saved after loading from disk keeps the folder it was loaded from) is read the same way.
"""

from __future__ import annotations

import re
from pathlib import PurePath

CACHE_PREFIX = "models--"
SEPARATOR = "--"
_HASH = re.compile(r"[0-9a-f]{40}")  # a git commit: a snapshot's folder
_CHECKPOINT = re.compile(r"checkpoint-\d+")  # a Trainer's save: checkpoint-STEP
_SAYS_NOTHING = ("snapshots", "", ".", "..")


def repository_of(path: str | PurePath) -> str:
    """The ``ORG/NAME`` of the cache repository ``path`` lies in ("" when it lies in none):
    the innermost ``models--ORG--NAME`` folder among its parts."""
    for part in reversed(PurePath(path).parts):
        if part.startswith(CACHE_PREFIX) and len(part) > len(CACHE_PREFIX):
            return part.removeprefix(CACHE_PREFIX).replace(SEPARATOR, "/")
    return ""


def says_nothing(folder: str) -> bool:
    """Whether a folder's name says nothing of the model in it (a hash, checkpoint-N…)."""
    return folder in _SAYS_NOTHING or bool(_HASH.fullmatch(folder.lower()) or _CHECKPOINT.fullmatch(folder))


def folder_name(path: str | PurePath) -> str:
    """The name of the innermost folder of ``path`` (a folder, not a file) that names the
    model: the repository for a cache's, else skipping hashes and checkpoints ("" if none)."""
    repository = repository_of(path)
    if repository:
        return repository
    for part in reversed(PurePath(path).parts):
        if not says_nothing(part) and part not in ("/", "\\", "~"):
            return part
    return ""


def is_path(given: str) -> bool:
    """Whether a ``_name_or_path`` is a place on a disk rather than a Hub id ("ORG/NAME" or
    "NAME"): absolute, home-relative, relative with dots, or more than one folder deep."""
    return (given.startswith(("/", "~", ".", "\\")) or given.count("/") > 1 or "\\" in given
            or bool(re.match(r"[A-Za-z]:", given)))


def hub_name(given: str) -> str:
    """``given`` (a ``_name_or_path``) as a Hub id: itself when it is one ("ORG/NAME",
    "NAME"); for a path, the name its folders give ("" when none does)."""
    if is_path(given) or any(says_nothing(part) for part in given.split("/")):
        return folder_name(given)
    return given
