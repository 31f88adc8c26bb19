"""Plain-data views (dicts of JSON types) of a catalogue device, with the source of every
number: what ``hardware list --json`` and ``hardware show --json`` print."""

from __future__ import annotations

from typing import Any

from explorer.core.hardware.hardware import Hardware, Link, Provenance


def _provenance(p: Provenance) -> dict[str, Any]:
    out: dict[str, Any] = {"source": p.url, "derived": p.derived}
    if p.formula:
        out["formula"] = p.formula
    if p.note:
        out["note"] = p.note
    return out


def hardware_summary(hw: Hardware) -> dict[str, Any]:
    """A device in one line: what ``hardware list --json`` prints."""
    best = max(hw.peaks, key=lambda p: p.flops_per_s)
    return {
        "id": hw.id,
        "name": hw.name,
        "vendor": hw.vendor,
        "kind": hw.kind,
        "class": hw.device_class,
        "year": hw.year,
        "best_peak": {"precision": best.precision, "unit": best.unit,
                      "flops_per_s": best.flops_per_s},
        "bandwidth": hw.bandwidth_bytes_per_s,
        "memory_bytes": hw.memory_capacity_bytes,
    }


def hardware_detail(hw: Hardware) -> dict[str, Any]:
    """Everything the catalogue says about a device, with the source of every number."""
    specs = hw.specs
    return {
        **hardware_summary(hw),
        "specs": {
            "cores": specs.cores,
            "core_label": specs.core_label,
            "matrix_unit": specs.matrix_unit,
            "base_clock_hz": specs.base_clock_hz,
            "boost_clock_hz": specs.boost_clock_hz,
            "tdp_w": specs.tdp_w,
            **_provenance(specs.provenance),
        },
        "peaks": [
            {"precision": p.precision, "unit": p.unit, "flops_per_s": p.flops_per_s,
             "clock_hz": p.clock_hz, "ridge": p.flops_per_s / hw.bandwidth_bytes_per_s,
             **_provenance(p.provenance)}
            for p in hw.peaks
        ],
        "memory": [
            {"level": m.name, "main": m.main, "capacity_bytes": m.capacity_bytes,
             "bandwidth_bytes_per_s": m.bandwidth_bytes_per_s, **_provenance(m.provenance),
             **({"latency_s": m.latency_s, "latency": _provenance(m.latency_provenance)}
                if m.latency_s is not None and m.latency_provenance else {}),
             **({"usable_bytes": m.usable_bytes, "usable": _provenance(m.usable_provenance)}
                if m.usable_bytes is not None and m.usable_provenance else {})}
            for m in hw.memory
        ],
        "links": [link_dict(x) for x in hw.links],
        "sources": dict(hw.sources),
        "notes": hw.notes,
    }


def link_dict(link: Link) -> dict[str, Any]:
    return {"name": link.name, "tier": link.tier, "bandwidth_bytes_per_s": link.bandwidth_bytes_per_s,
            "direction": link.direction, "per_direction_bytes_per_s": link.per_direction_bytes_per_s,
            "group": link.group or None, "latency_s": link.latency_s, **_provenance(link.provenance),
            "latency": _provenance(link.latency_provenance) if link.latency_provenance else None}
