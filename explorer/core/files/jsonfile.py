"""Reading JSON as strictly as the YAML data files: a key written twice is refused, and
anything JSON cannot read (bad syntax, nesting too deep, an integer of thousands of digits)
is a ``DataFileError`` naming the file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from explorer.core.files.datafile import brief
from explorer.core.files.errors import DataFileError


class DuplicateKey(ValueError):
    """A JSON object that names a key twice (JSON would keep the last one silently)."""


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) < len(pairs):  # (the first key written twice is named)
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(f"the key {brief(key)} is written twice in one object")
            seen.add(key)
    return out


def parse_json(text: str, path: str | Path) -> Any:
    """JSON as strictly as the YAML files are read: a key written twice is refused; anything
    JSON cannot read (bad syntax, nesting too deep, an integer of thousands of digits) is a
    DataFileError naming ``path``."""
    try:
        return json.loads(text, object_pairs_hook=_refuse_duplicates)
    except RecursionError:
        raise DataFileError(path, "nests too deeply to read") from None
    except DuplicateKey as exc:
        raise DataFileError(path, str(exc)) from None
    except ValueError as exc:  # JSONDecodeError, and int() refusing a number too long to convert
        raise DataFileError(path, f"is not valid JSON: {exc}") from None
