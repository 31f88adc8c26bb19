"""Reading YAML data files strictly: safe loading, no duplicate keys, errors that point home.

Every data file (hardware, model presets, later sessions and scenes) goes through
here, so every mistake is reported the same way: which file, which entry, which
field, and what was expected.
"""

from __future__ import annotations

import math
import re
import reprlib
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType
from typing import Any, Literal, cast, overload

from explorer.core import units
from explorer.core.files.errors import DataFileError
from explorer.core.files.parse_cache import cached
from explorer.core.files.reading import MAX_FILE_BYTES, read_text

_ID = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_URL = re.compile(r"^https?://\S+$")


SEAL_START = "# Roofline Explorer "
SEAL_END = "# end"


def sealed(kind: str, text: str) -> str:
    """``text`` between a first line naming the app and a last line ``# end``: a file the
    app wrote that lost its end (copied halfway, cut by a full disk) is refused on load
    instead of read with changed values (``seq: 512`` cut to ``seq: 5``)."""
    return (f"{SEAL_START}{kind}, written by the app. A file that does not end with "
            f"the line '{SEAL_END}' was cut short.\n{text.rstrip()}\n{SEAL_END}\n")


def _check_seal(path: Path, text: str) -> None:
    if text.startswith(SEAL_START) and text.rstrip().rsplit("\n", 1)[-1].strip() != SEAL_END:
        raise DataFileError(path, f"was cut short: the app wrote it with '{SEAL_END}' as its last line, "
                                  "and that line is missing (a copy or a disk that stopped halfway); "
                                  "use an earlier copy")


def load_yaml(path: str | Path, text: str | None = None) -> Any:
    """Parse a YAML file (or ``text`` on behalf of ``path``) safely, rejecting duplicate keys,
    a file the app wrote that was cut short (see ``sealed``), files over ``MAX_FILE_BYTES``
    or not regular (``reading``), alias bombs, values that hold themselves and nesting too
    deep to read. Within ``parse_cache`` (the window's start) a text parsed before is not
    parsed again."""
    path = Path(path)
    if text is None:
        text = read_text(path)
    elif len(text) > MAX_FILE_BYTES:
        raise DataFileError(path, f"is over {MAX_FILE_BYTES >> 20} MB; larger files are refused")
    _check_seal(path, text)
    return cached(text, "strict", lambda: _yamltext().parse(path, text))


def peek_yaml(path: str | Path) -> Any:
    """A user file's content read as leniently as is safe (duplicate keys allowed, for
    naming what a broken file meant to define), or None when it cannot be read at all.
    Bounded like ``load_yaml``: size, regular files only, alias expansion."""
    try:
        text = read_text(path)
    except DataFileError:
        return None
    return _yamltext().peek(text)


def dump_yaml(data: Any, **options: Any) -> str:
    """``data`` as YAML text (``yaml.safe_dump`` and its ``options``)."""
    return cast(str, _yamltext().dump(data, **options))


def _yamltext() -> ModuleType:
    """PyYAML and the app's loaders (``yamltext``), imported when a text is first parsed or
    written (not at the window's start, whose files come from the parse cache)."""
    from explorer.core.files import yamltext

    return yamltext


class Fields:
    """One mapping of a data file, read field by field.

    Each accessor removes the field it reads; ``finish()`` then reports any field
    left over as unknown, so a typo never passes silently.
    """

    def __init__(self, data: Any, file: str | Path, entry: str | None, prefix: str = "") -> None:
        self.file = str(file)
        self.entry = entry
        self.prefix = prefix
        if not isinstance(data, dict):
            where = prefix.rstrip(".") or None
            raise DataFileError(self.file, f"expected a mapping of fields, got {_kind(data)}",
                                entry, where)
        self._data = dict(data)
        self._known: list[str] = []

    # -- errors ---------------------------------------------------------------------------
    def error(self, name: object, message: str) -> DataFileError:
        return DataFileError(self.file, message, self.entry, f"{self.prefix}{name}")

    def child(self, data: Any, name: str) -> Fields:
        return Fields(data, self.file, self.entry, f"{self.prefix}{name}.")

    # -- accessors ------------------------------------------------------------------------
    def _take(self, name: str, required: bool) -> Any:
        self._known.append(name)
        if name not in self._data or self._data[name] is None:
            if required:
                raise self.error(name, "is missing")
            self._data.pop(name, None)
            return None
        return self._data.pop(name)

    def has(self, name: str) -> bool:
        return self._data.get(name) is not None

    def raw(self, name: str, required: bool = True) -> Any:
        return self._take(name, required)

    # A required field is never None (a missing one raises): the overloads tell type checkers so.
    @overload
    def text(self, name: str, required: Literal[True] = ..., choices: Iterable[str] | None = ...,
             default: str | None = ...) -> str: ...
    @overload
    def text(self, name: str, required: bool, choices: Iterable[str] | None = ..., *,
             default: str) -> str: ...
    @overload
    def text(self, name: str, required: bool, choices: Iterable[str] | None = ...,
             default: str | None = ...) -> str | None: ...
    def text(self, name: str, required: bool = True, choices: Iterable[str] | None = None,
             default: str | None = None) -> str | None:
        value = self._take(name, required)
        if value is None:
            return default
        if not isinstance(value, str) or not value.strip():
            raise self.error(name, f"expected non-empty text, got {_kind(value)}")
        if choices is not None:
            allowed = tuple(choices)
            if value not in allowed:
                raise self.error(name, f"expected one of {', '.join(allowed)}; got {brief(value)}")
        return value

    def identifier(self, name: str) -> str:
        value = self.text(name)
        if not _ID.match(value):
            raise self.error(name, f"{brief(value)} is not a valid id: use lower-case letters, "
                                   "digits, '-', '.' and '_'")
        return value

    def url(self, name: str) -> str:
        value = self.text(name)
        if not _URL.match(value):
            raise self.error(name, f"expected an http(s) URL, got {brief(value)}")
        return value

    def flag(self, name: str, default: bool = False) -> bool:
        value = self._take(name, required=False)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.error(name, f"expected true or false, got {_kind(value)}")
        return value

    @overload
    def integer(self, name: str, required: Literal[True] = ..., minimum: int = ...,
                default: int | None = ..., maximum: int | None = ...) -> int: ...
    @overload
    def integer(self, name: str, required: bool, minimum: int = ..., *,
                default: int, maximum: int | None = ...) -> int: ...
    @overload
    def integer(self, name: str, required: bool, minimum: int = ...,
                default: int | None = ..., maximum: int | None = ...) -> int | None: ...
    def integer(self, name: str, required: bool = True, minimum: int = 1,
                default: int | None = None, maximum: int | None = None) -> int | None:
        value = self._take(name, required)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(name, f"expected a whole number, got {_kind(value)}")
        if value < minimum:
            qualifier = "positive" if minimum == 1 else f">= {minimum}"
            raise self.error(name, f"must be {qualifier}, got {brief(value)}")
        if maximum is not None and value > maximum:
            raise self.error(name, f"must be at most {maximum:,}, got {brief(value)}")
        return value

    @overload
    def number(self, name: str, required: Literal[True] = ..., default: float | None = ...) -> float: ...
    @overload
    def number(self, name: str, required: bool, default: float) -> float: ...
    @overload
    def number(self, name: str, required: bool, default: float | None = ...) -> float | None: ...
    def number(self, name: str, required: bool = True, default: float | None = None) -> float | None:
        value = self._take(name, required)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(name, f"expected a number, got {_kind(value)}")
        return self._positive_finite(name, self.float_of(name, value))

    def float_of(self, name: str, value: int | float) -> float:
        """``value`` as a float: an integer no float holds (JSON and YAML read hundreds of
        digits) is an error naming the field, never an OverflowError."""
        try:
            return float(value)
        except OverflowError:
            digits = str(abs(value))
            raise self.error(name, f"is too large for a number: {digits[:20]}… ({len(digits):,} "
                                   "digits)") from None

    @overload
    def quantity(self, name: str, dimension: units.Dimension, required: Literal[True] = ...) -> float: ...
    @overload
    def quantity(self, name: str, dimension: units.Dimension, required: bool) -> float | None: ...
    def quantity(self, name: str, dimension: units.Dimension,
                 required: bool = True) -> float | None:
        value = self._take(name, required)
        if value is None:
            return None
        try:
            parsed = units.parse_quantity(value, dimension)
        except units.UnitError as exc:
            raise self.error(name, str(exc)) from None
        return self._positive_finite(name, parsed)

    def items(self, name: str, required: bool = True) -> list[Any]:
        value = self._take(name, required)
        if value is None:
            return []
        if not isinstance(value, list) or not value:
            raise self.error(name, f"expected a non-empty list, got {_kind(value)}")
        return value

    def mapping(self, name: str, required: bool = True) -> dict[Any, Any]:
        value = self._take(name, required)
        if value is None:
            return {}
        if not isinstance(value, dict) or not value:
            raise self.error(name, f"expected a non-empty mapping, got {_kind(value)}")
        return value

    def finish(self) -> None:
        """Reject every field not read by an accessor."""
        if self._data:
            name = sorted(map(str, self._data))[0]
            known = ", ".join(sorted(set(self._known)))
            raise self.error(name, f"is not a known field (known fields: {known})")

    def _positive_finite(self, name: str, value: float) -> float:
        if not math.isfinite(value):
            raise self.error(name, f"must be a finite number, got {value}")
        if value <= 0:
            raise self.error(name, f"must be positive, got {value:g}")
        return value


_BRIEF = reprlib.Repr()
_BRIEF.maxlevel, _BRIEF.maxstring, _BRIEF.maxother, _BRIEF.maxlong = 3, 60, 60, 60
_BRIEF.maxlist = _BRIEF.maxdict = _BRIEF.maxtuple = _BRIEF.maxset = 6


def brief(value: Any, limit: int = 60) -> str:
    """A short ``repr`` of ``value``: an error message names the value, it does not echo a
    whole file (a session that is one long line, a symlink to a big file) nor expand a
    structure built of aliases (reprlib stops after a few items and levels)."""
    text = _BRIEF.repr(value) if isinstance(value, list | dict | tuple | set) else repr(value)
    return text if len(text) <= limit else f"{text[:limit - 1]}… ({len(text):,} characters)"


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return f"a boolean ({value})"
    if isinstance(value, str):
        return f"text {brief(value)}"
    if isinstance(value, int | float):
        return f"the number {brief(value)}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def check_schema(top: Fields, version: int, schema: int) -> None:
    """Refuse a file of another schema, saying whether a newer or an older app wrote it."""
    if version > schema:
        raise top.error("schema", f"was written by a newer version of the app (schema {version}); "
                                  f"this version reads schema {schema}: update Roofline Explorer")
    if version != schema:
        raise top.error("schema", f"uses schema {version}, which this version no longer reads "
                                  f"(it reads schema {schema})")


def read_entries(path: str | Path, list_key: str, schema: int,
                 read_entry: Callable[[Fields], Any], text: str | None = None) -> list[Any]:
    """Load a file of the form ``{schema: N, <list_key>: [entry, ...]}`` with one reader per entry.

    Entries must carry an ``id``; ids must be unique within the file.
    """
    data = load_yaml(path, text)
    top = Fields(data, path, None)
    version = top.integer("schema")
    check_schema(top, version, schema)
    raw_entries = top.items(list_key)
    top.finish()
    entries: list[Any] = []
    seen: set[str] = set()
    for index, raw in enumerate(raw_entries):
        label = raw.get("id") if isinstance(raw, dict) and isinstance(raw.get("id"), str) else None
        fields = Fields(raw, path, label or f"#{index + 1}")
        entry = read_entry(fields)
        fields.finish()
        if entry.id in seen:
            raise DataFileError(path, "this id is used twice in the file", entry.id, "id")
        seen.add(entry.id)
        entries.append(entry)
    return entries
