"""The "why" paragraphs: our own words on the ideas the app shows, with every number
filled in from the hardware catalogue when the text is read (resources/explain/why.yaml):
``{h100-sxm/bandwidth}`` becomes "3.35 TB/s"."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from explorer.core.datafile import DataFileError, Fields, read_entries
from explorer.core.units import format_bytes, format_si, rate_unit
from explorer.paths import resource_path

SCHEMA = 1
_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")


@dataclass(frozen=True)
class Topic:
    id: str
    title: str
    text: str  # with placeholders
    origin: str = ""


def _value(catalog, reference: str):
    """(number, text) of ``ID/FIELD``."""
    ident, _, field = reference.partition("/")
    hw = catalog[ident]
    if field == "bandwidth":
        return hw.bandwidth_bytes_per_s, format_si(hw.bandwidth_bytes_per_s, "B/s")
    if field == "cores":
        return hw.specs.cores, f"{hw.specs.cores:,}"
    if field == "core_label":
        return None, hw.specs.core_label
    if field == "memory":
        return hw.memory_capacity_bytes, format_bytes(hw.memory_capacity_bytes)
    if field.startswith("peak-"):
        precision = field.removeprefix("peak-")
        peak = hw.peak_flops(precision)
        return peak, format_si(peak, rate_unit(precision))
    raise KeyError(f"unknown field {field!r} in {{{reference}}}")


def _resolve(placeholder: str, catalog) -> str:
    if placeholder.startswith("ratio:"):
        first, _, second = placeholder.removeprefix("ratio:").partition(":")
        value = _value(catalog, first)[0] / _value(catalog, second)[0]
        return f"{value:.0f}" if value >= 10 else f"{value:.1f}"
    return _value(catalog, placeholder)[1]


def render(topic: Topic, catalog) -> str:
    return _PLACEHOLDER.sub(lambda m: _resolve(m.group(1), catalog), topic.text)


def _read_topic(fields: Fields) -> Topic:
    return Topic(id=fields.identifier("id"), title=fields.text("title"), text=fields.text("text"),
                 origin=fields.file)


def load_topics(catalog, path: str | Path | None = None) -> list[Topic]:
    """The topics, checked: every placeholder must resolve against ``catalog``."""
    path = Path(path) if path else resource_path("explain", "why.yaml")
    topics = read_entries(path, "topics", SCHEMA, _read_topic)
    for topic in topics:
        try:
            render(topic, catalog)
        except KeyError as exc:
            raise DataFileError(path, f"cannot fill in: {exc.args[0]}", topic.id, "text") from None
    return topics
