"""The catalogue as the hardware panel lists it: grouped by kind, then class (data centre,
workstation, desktop, laptop, edge), then vendor, and searched by any name a user types."""

from __future__ import annotations

import re
from collections.abc import Iterable

from explorer.core.hardware.hardware import CLASS_WORDS, CLASSES, Hardware, class_label

_FIRST_KINDS = ("gpu", "cpu")  # listed first; any other kind follows in catalogue order
UNCLASSIFIED = "Other"  # the class title of a user's device that names none

Vendors = dict[str, list[Hardware]]


def group_title(kind: str) -> str:
    """A group's title for devices of ``kind``: "GPUs", "CPUs", "TPUs", "Accelerators"."""
    kind = str(kind)
    return f"{kind.upper()}s" if len(kind) <= 4 else f"{kind.capitalize()}s"


def class_title(hw: Hardware) -> str:
    """The title of ``hw``'s class group: "Data centre", "Edge", …; "Other" without a class."""
    return class_label(hw.device_class) if hw.device_class else UNCLASSIFIED


def catalogue_groups(devices: Iterable[Hardware]) -> list[tuple[str, dict[str, Vendors]]]:
    """(kind, {class title: {vendor: devices}}) for every kind present: GPUs and CPUs first,
    then the other kinds as the catalogue first lists them; classes from the data centre down
    to the edge (a device without a class last, under "Other"); vendors by name; devices in
    catalogue order."""
    by_kind: dict[str, dict[str, Vendors]] = {}
    for hw in devices:
        by_kind.setdefault(str(hw.kind), {}).setdefault(class_title(hw), {}).setdefault(
            hw.vendor, []).append(hw)
    order = [k for k in _FIRST_KINDS if k in by_kind] + [k for k in by_kind if k not in _FIRST_KINDS]
    titles = [class_label(c) for c in CLASSES] + [UNCLASSIFIED]
    return [(kind, {title: {vendor: by_kind[kind][title][vendor]
                            for vendor in sorted(by_kind[kind][title], key=str.lower)}
                    for title in titles if title in by_kind[kind]})
            for kind in order]


def row_name(hw: Hardware) -> str:
    """``hw``'s name as its row under its vendor's group reads it: without the vendor's name
    first ("Jetson AGX Orin 64GB (MAXN)", "Instinct MI300X"), unless what is left starts with
    a digit ("Raspberry Pi 5 (BCM2712)" stays whole)."""
    prefix = hw.vendor + " "
    rest = hw.name[len(prefix):] if hw.name.startswith(prefix) else ""
    return rest if rest[:1].isalpha() else hw.name


def search_text(hw: Hardware) -> str:
    """Every name a user may type for ``hw``, lower case: id, name, short name, vendor, kind,
    class (with its other words: "datacenter", "data center", "server"), its cores' and
    matrix units' names."""
    classes = [str(hw.device_class), class_label(hw.device_class),
               CLASS_WORDS.get(hw.device_class, "")] if hw.device_class else []
    return " ".join([hw.id, hw.name, hw.short_name, hw.vendor, str(hw.kind), group_title(hw.kind),
                     *classes, hw.specs.core_label, hw.specs.matrix_unit or ""]).lower()


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
