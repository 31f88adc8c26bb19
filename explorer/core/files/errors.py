"""The error every reader of a file raises: which file, which entry, which field, what is wrong."""

from __future__ import annotations

from pathlib import Path


class DataFileError(ValueError):
    """A data file that cannot be used, with the place of the mistake."""

    def __init__(self, file: str | Path, message: str, entry: str | None = None,
                 field: str | None = None) -> None:
        self.file = str(file)
        self.entry = entry
        self.field = field
        self.reason = message
        where = [self.file]
        if entry is not None:
            where.append(f"entry '{entry}'")
        if field is not None:
            where.append(f"field '{field}'")
        super().__init__(": ".join([*where, message]))
