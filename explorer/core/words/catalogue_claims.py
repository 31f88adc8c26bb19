"""The catalogue's placeholders: a device's ``{ID/FIELD}``, ``{ratio:…}`` of two fields, a
precision's ridge, Little's law's bandwidth and bytes in flight, and ``{faster:…}``
(``placeholders`` lists every field)."""

from __future__ import annotations

from explorer.core.hardware.hardware import Hardware, Tier, vector_lanes
from explorer.core.hardware.littles_law import bytes_in_flight_needed, effective_bandwidth, latency_of
from explorer.core.model.workload import WorkloadParams
from explorer.core.units import BYTES, format_bytes, format_si, format_time, parse_quantity, rate_unit
from explorer.core.words.claims import Claim, Quantity, Ridge, State, faster
from explorer.core.words.placeholder_context import Context


def catalogue_value(hw: Hardware, field: str) -> tuple[float | None, str]:
    """(number, text) of one field of a catalogue device."""
    if field == "bandwidth":
        return hw.bandwidth_bytes_per_s, format_si(hw.bandwidth_bytes_per_s, "B/s")
    if field == "cores":
        return hw.specs.cores, f"{hw.specs.cores:,}"
    if field == "core_label":
        return None, hw.specs.core_label
    if field == "memory":
        return hw.memory_capacity_bytes, format_bytes(hw.memory_capacity_bytes)
    if field == "usable":
        return hw.usable_memory_bytes, format_bytes(hw.usable_memory_bytes)
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
    if field.startswith("link-"):  # a link's rate per direction: link-node, link-network, link-host
        tier = field.removeprefix("link-")
        link = hw.link(Tier(tier)) if tier in set(Tier) else None
        if link is None:
            raise KeyError(f"{hw.name} lists no {field.removeprefix('link-')} link")
        return link.per_direction_bytes_per_s, format_si(link.per_direction_bytes_per_s, "B/s")
    if field.startswith("peak-"):
        precision, _, unit = field.removeprefix("peak-").partition("-")
        peak = hw.peak_flops(precision, unit or None)
        return peak, format_si(peak, rate_unit(precision))
    if field.startswith("lanes-"):
        built = vector_lanes(hw, field.removeprefix("lanes-"))
        if built is None:
            raise KeyError(f"{hw.name}'s lanes cannot be derived from its catalogue entry")
        return built[1], f"{built[1]:,}"
    raise KeyError(f"unknown field {field!r}")


def catalogue_field(ctx: Context, reference: str) -> tuple[float | None, str]:
    ident, _, field = reference.partition("/")
    return catalogue_value(ctx.catalog[ident], field)


def ridge_field(ctx: Context, reference: str) -> tuple[str, Claim]:
    ident, _, field = reference.partition("/")
    hw = ctx.catalog[ident]
    peak = hw.peak(field.removeprefix("ridge-"))
    if peak is None:
        raise KeyError(f"{hw.name} has no {field.removeprefix('ridge-')} peak")
    claim = Ridge(hw, peak.label, peak.flops_per_s / hw.bandwidth_bytes_per_s)
    return claim.phrase, claim


def _number(ctx: Context, reference: str) -> float:
    """The number of a catalogue field (KeyError for a field that is text, ``core_label``)."""
    value = catalogue_field(ctx, reference)[0]
    if value is None:
        raise KeyError(f"{reference} is text, not a number")
    return value


def ratio_field(ctx: Context, body: str) -> tuple[str, Claim]:
    first, _, second = body.partition(":")
    value = _number(ctx, first) / _number(ctx, second)
    text = f"{value:.0f}" if value >= 9.95 else f"{value:.1f}"
    # Recomputed from the catalogue when checked: a changed entry shows up there.
    return text, Quantity(f"ratio {body}", value, text,
                          lambda: _number(ctx, first) / _number(ctx, second))


def faster_field(ctx: Context, body: str) -> tuple[str, Claim]:
    model_id, slow, fast = body.split(":")
    if ctx.models is None:
        raise KeyError("models are not available here")
    model, params = ctx.models[model_id], WorkloadParams()
    claim = faster(State(model, params, ctx.catalog[slow]), State(model, params, ctx.catalog[fast]))
    return claim.phrase, claim


def littles_law(hw: Hardware, field: str) -> float:
    """Bandwidth with SIZE in flight, or the bytes in flight for the peak, from the
    catalogue's bandwidth and measured latency (the check's own route)."""
    bandwidth, latency = hw.bandwidth_bytes_per_s, latency_of(hw)  # (main memory's)
    if field == "in-flight":
        return bandwidth * latency
    in_flight = parse_quantity(field.removeprefix("bandwidth@"), BYTES)
    return min(bandwidth, in_flight / latency)
