"""The "why" paragraphs: our own words on the ideas the app shows, with every number
filled in from the hardware catalogue when the text is read (resources/explain/why.yaml):
``{h100-sxm/bandwidth}`` becomes "3.35 TB/s". Scene captions use the same placeholders."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from explorer.core.datafile import DataFileError, Fields, read_entries
from explorer.core.littles_law import (
    NoLatencyError,
    bytes_in_flight_needed,
    effective_bandwidth,
    latency_of,
)
from explorer.core.registry import UnknownIdError
from explorer.core.units import (
    BYTES,
    UnitError,
    format_bytes,
    format_si,
    format_time,
    parse_quantity,
    rate_unit,
)
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
    if field == "latency":
        latency = latency_of(hw)
        return latency, format_time(latency)
    if field.startswith("bandwidth@"):  # Little's law with this much in flight
        in_flight = parse_quantity(field.removeprefix("bandwidth@"), BYTES)
        value = float(effective_bandwidth(hw.bandwidth_bytes_per_s, latency_of(hw), in_flight))
        return value, format_si(value, "B/s")
    if field == "in-flight":  # bytes that must be outstanding to reach the bandwidth
        needed = bytes_in_flight_needed(hw.bandwidth_bytes_per_s, latency_of(hw))
        return needed, format_bytes(needed)
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


def fill(text: str, catalog) -> str:
    """``text`` with every ``{…}`` placeholder replaced by its value from ``catalog``
    (KeyError names a placeholder that cannot be filled)."""
    def resolve(match: re.Match) -> str:
        try:
            return _resolve(match.group(1), catalog)
        except (NoLatencyError, UnknownIdError, UnitError) as exc:
            raise KeyError(f"{{{match.group(1)}}}: {exc}") from None

    return _PLACEHOLDER.sub(resolve, text)


def render(topic: Topic, catalog) -> str:
    return fill(topic.text, catalog)


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
