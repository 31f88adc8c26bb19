"""The user's own files in the data folder: loaded one by one, and a broken one is skipped.

The bundled catalogue, models and scenes are the app's own: a mistake there is a bug,
and loading stops. The user's files (their devices, scenes, measurement results, the
autosaved session) are theirs to edit by hand: a broken one is skipped with the loader's
error (file, entry, field) and reported, never fatal. Only a command that needs the broken
item fails, and then it names the file and the field.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from explorer.core.files.datafile import DataFileError, peek_yaml

PLURALS = {"device": "devices", "scene": "scenes", "results file": "results files",
           "autosaved session": "autosaved sessions"}


@dataclass(frozen=True)
class Skipped:
    """A user's file that could not be loaded, and why."""

    what: str  # "device", "scene", "results file", "autosaved session"
    error: DataFileError
    ids: tuple[str, ...] = ()  # the ids it meant to define, as far as they can be read

    @property
    def path(self) -> Path:
        return Path(self.error.file)

    def describe(self) -> str:
        """"my-gpu.yaml, field compute[0].peak: unknown unit 'QFLOP/s'"."""
        where = [self.path.name]
        if self.error.entry and self.error.entry not in self.ids:
            where.append(f"entry {self.error.entry}")
        if self.error.field:
            where.append(f"field {self.error.field}")
        return f"{', '.join(where)}: {self.error.reason}"


class UnusableEntryError(DataFileError):
    """An id the user asked for whose file is broken: names the file and the field."""

    def __init__(self, ident: str, skipped: Skipped) -> None:
        error = skipped.error
        super().__init__(error.file, f"your {skipped.what} '{ident}' could not be loaded: {error.reason}",
                         error.entry, error.field)


def notice(skipped: Iterable[Skipped]) -> str:
    """One sentence per kind of file: "1 of your devices could not be loaded: my-gpu.yaml,
    field compute[0].peak: unknown unit 'QFLOP/s'"."""
    by_kind: dict[str, list[Skipped]] = {}
    for s in skipped:
        by_kind.setdefault(s.what, []).append(s)
    return "\n".join(f"{len(items)} of your {PLURALS.get(what, what + 's')} could not be loaded: "
                     + "; ".join(s.describe() for s in items) for what, items in by_kind.items())


def ids_in(path: Path, list_key: str) -> tuple[str, ...]:
    """The ids a file means to define, read as leniently as possible (for a broken file:
    its entries' ``id`` fields if the YAML parses at all), plus the file's stem."""
    ids: list[str] = []
    data = peek_yaml(path)  # bounded like every read: a refused file is not read again in full
    entries = data.get(list_key) if isinstance(data, dict) else None
    for entry in entries if isinstance(entries, list) else ():
        if isinstance(entry, dict) and isinstance(entry.get("id"), str):
            ids.append(entry["id"])
    if path.stem not in ids:
        ids.append(path.stem)
    return tuple(ids)


def load_each(paths: Iterable[Path], load: Callable[[Path], list[Any]], what: str,
              list_key: str) -> tuple[list[Any], list[Skipped]]:
    """Load every file with ``load``; a file it refuses is skipped, not fatal. A file that
    defines an id an earlier file already defined is skipped too."""
    loaded: list[Any] = []
    skipped: list[Skipped] = []
    first: dict[str, Path] = {}
    for path in paths:
        try:
            items = load(path)
        except DataFileError as exc:
            skipped.append(Skipped(what, exc, ids_in(path, list_key)))
            continue
        again = next((item.id for item in items if item.id in first), None)
        if again is not None:
            error = DataFileError(path, f"defines '{again}' again (first in {first[again].name})",
                                  again, "id")
            skipped.append(Skipped(what, error, tuple(item.id for item in items)))
            continue
        first.update((item.id, path) for item in items)
        loaded.extend(items)
    return loaded, skipped


def yaml_files(directory: str | Path | None) -> list[Path]:
    """The ``*.yaml`` files of a user folder (none if it does not exist)."""
    if directory is None or not Path(directory).is_dir():
        return []
    return sorted(Path(directory).glob("*.yaml"))
