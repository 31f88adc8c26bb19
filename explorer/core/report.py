"""Plain-data views (dicts of JSON types) of hardware and analyses, for the CLI and files."""

from __future__ import annotations

from typing import Any

from explorer.core.analysis import Analysis
from explorer.core.hardware import Hardware, Provenance
from explorer.core.units import format_bytes, format_parameters, format_time


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
        "sources": dict(hw.sources),
        "notes": hw.notes,
    }


def analysis_dict(a: Analysis) -> dict[str, Any]:
    """The ``analyze --json`` document: FLOPs and bytes as integers, times in seconds."""
    p, t, rows = a.params, a.totals, a.rows
    peak = a.roofs.matrix
    bandwidth = a.roofs.bandwidth_bytes_per_s
    model_id = a.model.id
    return {
        "hardware": {
            "id": a.hardware.id,
            "name": a.hardware.name,
            "peak_flops": peak.flops_per_s,
            "peak": peak.label,
            "vector_peak_flops": a.roofs.vector.flops_per_s,
            "bandwidth": bandwidth,
            "ridge": peak.flops_per_s / bandwidth,
            "memory_bytes": a.hardware.memory_capacity_bytes,
        },
        "workload": {
            "model": model_id,
            "phase": p.phase,
            "batch": p.batch,
            "seq": p.seq,
            "context": p.context,
            "dtype": p.dtype,
            "weight_dtype": p.weight_dtype or p.dtype,
            "kv_dtype": p.kv_dtype or p.dtype,
            "attention": p.attention,
            "memory_fraction": p.memory_fraction,
            "routing": p.routing,
            "parameters": a.model.parameter_count(),
            "active_parameters": a.model.parameter_count(active=True),
        },
        "ops": [
            {
                "name": rows.names[i],
                "role": rows.roles[i],
                "layer": int(rows.layers[i]) if rows.layers[i] >= 0 else None,
                "unit": rows.units[i],
                "flops": int(rows.flops[i]),
                "bytes": int(rows.bytes[i]),
                "intensity": float(rows.intensity[i]),
                "time_s": float(rows.time_s[i]),
                "bound": str(rows.bounds[i]),
            }
            for i in range(len(rows))
        ],
        "totals": {
            "flops": t.flops,
            "bytes": t.bytes,
            "intensity": t.intensity,
            "time_s": t.time_s,
            "compute_time_s": t.compute_time_s,
            "memory_time_s": t.memory_time_s,
            "items_per_step": t.items_per_step,
            "item_unit": t.item_unit,
            "tokens_per_s": t.tokens_per_s,
            "weight_bytes": t.weight_bytes,
            "kv_bytes_per_token": t.kv_bytes_per_token,
            "kv_cache_bytes": t.kv_cache_bytes,
            "activation_bytes": t.activation_bytes,
            "memory_required_bytes": t.memory_required_bytes,
            "memory_usable_bytes": t.memory_usable_bytes,
            "memory_budget_bytes": t.memory_budget_bytes,
            "fits_in_memory": t.fits_in_memory,
        },
        "notes": list(a.notes),
    }


def parameter_words(model) -> str:
    """"8.03 B parameters"; a mixture of experts: "46.7 B parameters, 12.9 B active per token
    (2 of 8 experts; all resident in memory)"."""
    words = f"{format_parameters(model.parameter_count())} parameters"
    if getattr(model, "moe", False):
        words += (f", {format_parameters(model.parameter_count(active=True))} active per token "
                  f"({model.experts_per_token} of {model.experts} experts; all resident in memory)")
    return words


def step_words(model, params) -> str:
    """What one step is, in words: "decode, batch 8, context 1,024", "prefill, batch 1,
    2,048-token prompts", or for a CNN (which has no phases) "forward pass, batch 64,
    224×224 images"."""
    p = params
    if model.item_unit != "tokens":
        size = getattr(model, "image_size", None)
        return f"forward pass, batch {p.batch:,}" + (f", {size}×{size} images" if size else "")
    if p.phase == "prefill":
        return f"prefill, batch {p.batch:,}, {p.seq:,}-token prompts"
    return f"decode, batch {p.batch:,}, context {p.context:,}"


def step_summary(a: Analysis) -> str:
    """The step in one line, for the status bar: what runs, its time, throughput and bound,
    and its memory against the budget."""
    t, p = a.totals, a.params
    fit = "fits in" if t.fits_in_memory else "does NOT fit in"
    memory = "weights, KV cache, activations" if t.kv_bytes_per_token else "weights, activations"
    return (f"{a.model.name}, {step_words(a.model, p)}, {p.dtype}: predicted "
            f"{format_time(t.time_s)} per step, {t.tokens_per_s:,.0f} {t.item_unit}/s, "
            f"{t.bound}-bound; "
            f"{memory} {format_bytes(t.memory_required_bytes)} {fit} the "
            f"{format_bytes(t.memory_budget_bytes)} budget ({p.memory_fraction:.0%} of "
            f"{format_bytes(t.memory_usable_bytes)} usable)")
