"""A file written to the first place that takes it: where it was meant to go, else the
data folder, else the temporary folder. Measurements took minutes to make; a full disk or
a read-only folder must cost the user a path, never the data."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from explorer.paths import user_file


@dataclass(frozen=True)
class Placed:
    """Where a file went (None: nowhere), and each place that refused it, with the reason."""

    path: Path | None
    refused: tuple[str, ...] = ()


NOWHERE = Placed(None)  # nothing was written (nothing to write)


def temporary(name: str) -> Path:
    """The last place a file can go: the temporary folder, under a name that says whose."""
    return Path(tempfile.gettempdir()) / f"roofline-{name}"


def is_temporary(path: Path) -> bool:
    """Whether ``path`` lies in the temporary folder (which a reboot may empty)."""
    return Path(tempfile.gettempdir()).resolve() in Path(path).resolve().parents


def fallbacks(kind: str, name: str) -> list[Path]:
    """Where a file goes when its own place fails: the data folder's ``kind`` folder, then
    the temporary folder."""
    return [user_file(kind, name), temporary(name)]


def place(write: Callable[[Path], object], targets: list[Path]) -> Placed:
    """Write with ``write`` to the first of ``targets`` that takes it (its folder created)."""
    refused = []
    for target in targets:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            write(target)
        except OSError as exc:
            refused.append(f"could not save to {target}: {exc.strerror or exc}")
            continue
        return Placed(target, tuple(refused))
    return Placed(None, tuple(refused))
