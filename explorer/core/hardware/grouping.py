"""The catalogue as the hardware panel lists it: grouped by kind, then vendor, and searched
by any name a user types."""

from __future__ import annotations

import re
from collections.abc import Iterable

from explorer.core.hardware.hardware import Hardware

_FIRST_KINDS = ("gpu", "cpu")  # listed first; any other kind follows in catalogue order


def group_title(kind: str) -> str:
    """A group's title for devices of ``kind``: "GPUs", "CPUs", "TPUs", "Accelerators"."""
    kind = str(kind)
    return f"{kind.upper()}s" if len(kind) <= 4 else f"{kind.capitalize()}s"


def catalogue_groups(devices: Iterable[Hardware]) -> list[tuple[str, dict[str, list[Hardware]]]]:
    """(kind, {vendor: devices}) for every kind present: GPUs and CPUs first, then the other
    kinds as the catalogue first lists them; vendors by name; devices in catalogue order."""
    by_kind: dict[str, dict[str, list[Hardware]]] = {}
    for hw in devices:
        by_kind.setdefault(str(hw.kind), {}).setdefault(hw.vendor, []).append(hw)
    order = [k for k in _FIRST_KINDS if k in by_kind] + [k for k in by_kind if k not in _FIRST_KINDS]
    return [(kind, {vendor: by_kind[kind][vendor] for vendor in sorted(by_kind[kind], key=str.lower)})
            for kind in order]


def search_text(hw: Hardware) -> str:
    """Every name a user may type for ``hw``, lower case: id, name, short name, vendor, kind,
    its cores' and matrix units' names."""
    return " ".join([hw.id, hw.name, hw.short_name, hw.vendor, str(hw.kind), group_title(hw.kind),
                     hw.specs.core_label, hw.specs.matrix_unit or ""]).lower()


def matches(hw: Hardware, text: str, anywhere: bool = False) -> bool:
    """Whether every word typed starts a word of one of ``hw``'s names ("orin", "4090",
    "rtx 40", "m4": not the A100's "SXM4"); with ``anywhere``, whether it is any part of one."""
    haystack = search_text(hw)
    if anywhere:
        return all(word in haystack for word in text.lower().split())
    return all(re.search(r"(?<![a-z0-9])" + re.escape(word), haystack) for word in text.lower().split())


def search(devices: Iterable[Hardware], text: str) -> set[str]:
    """The ids of ``devices`` that ``text`` finds: by the starts of their names' words, else
    (none found so) anywhere in them ("100" finds the A100s and H100s)."""
    devices = list(devices)
    found = {hw.id for hw in devices if matches(hw, text)}
    return found or {hw.id for hw in devices if matches(hw, text, anywhere=True)}
