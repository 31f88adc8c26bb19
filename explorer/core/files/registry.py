"""An ordered, read-only collection of things with ids, with helpful errors for unknown ids."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Protocol, TypeVar, overload

from explorer.core.files.datafile import DataFileError
from explorer.core.files.userfiles import Skipped, UnusableEntryError


class _HasId(Protocol):  # (read-only: frozen dataclasses have it)
    @property
    def id(self) -> str: ...

    @property
    def origin(self) -> str: ...


T = TypeVar("T", bound=_HasId)
D = TypeVar("D")


class UnknownIdError(KeyError):
    """An id that is not in a collection; the message names the closest matches."""

    def __init__(self, what: str, wanted: str, known: Iterable[str]) -> None:
        import difflib  # only for the message (2.6 ms of the window's start-up at the top)

        known = list(known)
        close = difflib.get_close_matches(wanted, known, n=3, cutoff=0.5)
        close += [k for k in known if wanted and wanted.lower() in k and k not in close]
        if close:
            hint = "did you mean " + ", ".join(close[:3]) + "?"
        else:
            hint = "known ids: " + ", ".join(known)
        self.message = f"unknown {what} '{wanted}': {hint}"
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message


class Registry(Mapping[str, T]):
    """Items by id in load order; an id defined twice (across files too) is an error.

    ``skipped`` lists the user's files that could not be loaded: asking for an id one of them
    meant to define raises ``UnusableEntryError``, which names the file and the field."""

    def __init__(self, what: str, items: Iterable[T], skipped: Iterable[Skipped] = ()) -> None:
        self.what = what
        self.skipped = tuple(skipped)
        self._items: dict[str, T] = {}
        for item in items:
            if item.id in self._items:
                first = self._items[item.id].origin
                raise DataFileError(item.origin, f"this id is already defined in {first}",
                                    item.id, "id")
            self._items[item.id] = item

    def __getitem__(self, ident: str) -> T:
        try:
            return self._items[ident]
        except KeyError:
            broken = next((s for s in self.skipped if ident in s.ids), None)
            if broken is not None:
                raise UnusableEntryError(ident, broken) from None
            raise UnknownIdError(self.what, ident, self._items) from None

    def __contains__(self, ident: object) -> bool:
        return ident in self._items

    @overload
    def get(self, ident: str) -> T | None: ...
    @overload
    def get(self, ident: str, default: T | D) -> T | D: ...
    def get(self, ident: str, default: object = None) -> object:
        return self._items.get(ident, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)
