"""Plain-data views (dicts of JSON types) of an analysis, for the CLI and files: the
``analyze --json`` document, its efficiency and a training run."""

from __future__ import annotations

from typing import Any

from explorer.core.analysis.analysis import Analysis, Totals
from explorer.core.analysis.energy_report import energy_dict
from explorer.core.analysis.expected import Expected, expected_for, missing_efficiency
from explorer.core.analysis.hardware_report import link_dict
from explorer.core.model import collective_costs
from explorer.core.model.applicability import Phase
from explorer.core.model.parameters import PARAMETERS
from explorer.core.model.training import MFU_SOURCES, Run


def run_dict(run: Run) -> dict[str, Any]:
    """A training run (``training.Run``) for JSON: at the stated utilisation and at the
    roofline's step time."""
    return {
        "tokens": run.tokens, "devices": run.devices, "tokens_per_step": run.tokens_per_step,
        "steps": run.steps, "model_flops_per_step": run.model_flops_per_step,
        "peak_flops_per_s": run.peak_flops_per_s, "tdp_w": run.tdp_w,
        "at_mfu": {"mfu": run.mfu, "step_s": run.mfu_step_s, "seconds": run.seconds(),
                   "device_hours": run.device_hours(), "energy_j_at_tdp": run.energy_j()},
        "at_roofline": {"mfu": run.roofline_mfu, "step_s": run.roofline_step_s, "seconds": run.seconds(False),
                        "device_hours": run.device_hours(False), "energy_j_at_tdp": run.energy_j(False)},
        "mfu_default_sources": list(MFU_SOURCES),
        "energy_note": "at TDP: every device at its TDP for the whole run, host, network and cooling "
                       "not counted; not a bound (the run's time is a stated utilisation's)",
    }


def analysis_dict(a: Analysis, run: Run | None = None) -> dict[str, Any]:
    """The ``analyze --json`` document: FLOPs and bytes as integers, times in seconds. On
    several devices, the ops and totals are one device's (``workload.devices``).
    ``totals.time_s`` is the roofline bound, ``totals.expected_time_s`` the expected time
    (None: the bound alone was asked for, or no efficiency is published for the device) and
    ``expected_low_s``–``expected_high_s`` the band a measured time is expected in
    (``engine_terms.band``; what it held of the published runs, each held out:
    ``efficiency.engine.band_note``)."""
    e = expected_for(a)
    return {
        "hardware": _hardware_dict(a),
        "workload": _workload_dict(a),
        "ops": _op_dicts(a),
        "communication": _communication_dicts(a),
        "totals": {**_totals_dict(a.totals), "expected_time_s": None if e is None else e.time_s,
                   "expected_low_s": None if e is None or e.band is None else e.band[0],
                   "expected_high_s": None if e is None or e.band is None else e.band[1]},
        "efficiency": efficiency_dict(a, e),
        "energy": energy_dict(a, e),
        **({"training": run_dict(run)} if run is not None else {}),
        "notes": list(a.notes),
    }


def efficiency_dict(a: Analysis, e: Expected | None) -> dict[str, Any]:
    """Which efficiency the expected time uses, each factor with its source, and where the
    expected time goes (seconds by class of op)."""
    out: dict[str, Any] = {"asked": a.params.efficiency, "note": missing_efficiency(a)}
    if e is None:
        return out
    family = e.efficiency
    out.update(family=family.id, name=family.name, expected_over_bound=e.ratio, parts_s=dict(e.parts),
               engine=_engine_dict(a, e),
               factors={name: {"value": f.value, "source": f.source, "note": f.note}
                        for name, f in family.factors.items()})
    if a.params.phase == Phase.TRAIN:
        out["expected_mfu"] = expected_mfu(a, e)
    return out


def _engine_dict(a: Analysis, e: Expected) -> dict[str, Any]:
    """The fitted terms the expected time includes: the engine's and the class factors, with
    the runs they were fitted to (``engine_terms``)."""
    from explorer.core.analysis.engine_terms import band_words, efficiency_unchecked, read_terms

    every = read_terms()
    terms = every.of(e.efficiency.kind or a.hardware.kind)
    fit = terms.engine(e.engine or "typical")
    return {"id": fit.id, "asked": a.params.engine, "runs": fit.runs, "sources": list(fit.sources),
            "terms": {t.value: v for t, v in fit.terms.items()},
            "class_factors": {c.value: v for c, v in terms.classes.items()},
            "products_peak": _products_peak(a),
            "band_note": band_words(a.hardware, efficiency_unchecked(a.params.efficiency), every)}


def _products_peak(a: Analysis) -> dict[str, Any]:
    """The peak the expected time runs matrix products at: the bound's, or on a CPU the unit
    the engine's kernels use (``engine_units``), with where it comes from."""
    from explorer.core.analysis.expected import products_peak

    peak = products_peak(a)
    return {"precision": peak.precision, "unit": peak.unit, "flops_per_s": peak.flops_per_s,
            "same_as_bound": peak is a.roofs.matrix, "source": peak.provenance.url,
            "formula": peak.provenance.formula}


def expected_mfu(a: Analysis, e: Expected) -> float:
    """The model-FLOPs utilisation the expected time implies: the step's model FLOPs
    (recomputation left out) over the expected time at the matrix peak."""
    return a.model_flops / (e.time_s * a.roofs.matrix.flops_per_s)


def _hardware_dict(a: Analysis) -> dict[str, Any]:
    peak, bandwidth = a.roofs.matrix, a.roofs.bandwidth_bytes_per_s
    return {"id": a.hardware.id, "name": a.hardware.name, "peak_flops": peak.flops_per_s, "peak": peak.label,
            "vector_peak_flops": a.roofs.vector.flops_per_s, "bandwidth": bandwidth,
            "ridge": peak.flops_per_s / bandwidth, "memory_bytes": a.hardware.memory_capacity_bytes,
            "links": [link_dict(x) for x in a.hardware.links]}


def _workload_dict(a: Analysis) -> dict[str, Any]:
    """Every parameter of the table (a precision "as dtype" shown as the one it takes), the
    devices the step is spread over, and the model's parameter counts."""
    p = a.params
    values = {q.name: getattr(p, q.name) for q in PARAMETERS}
    values.update(weight_dtype=p.weight_dtype or p.dtype, kv_dtype=p.kv_dtype or p.dtype)
    return {"model": a.model.id, **values, "devices": p.split.devices,
            "parameters": a.model.parameter_count(),
            "active_parameters": a.model.parameter_count(active=True)}


def _op_dicts(a: Analysis) -> list[dict[str, Any]]:
    rows = a.rows
    return [{"name": rows.names[i], "role": rows.roles[i],
             "layer": int(rows.layers[i]) if rows.layers[i] >= 0 else None, "unit": rows.units[i],
             "flops": int(rows.flops[i]), "bytes": int(rows.bytes[i]), "intensity": float(rows.intensity[i]),
             "time_s": float(rows.time_s[i]), "bound": str(rows.bounds[i])} for i in range(len(rows))]


def _communication_dicts(a: Analysis) -> list[dict[str, Any]]:
    """Each communication op: its link, the bytes one device sends and the steps it takes
    by the algorithm it runs (an all-reduce's chosen one), the algorithm, and its time and
    latency by that algorithm."""
    links, training = a.links, a.params.phase == Phase.TRAIN
    out = []
    for i, o in enumerate(a.ops):
        link = links[i]
        if link is None:
            continue
        algorithm, latency = collective_costs.op_algorithm(link, o, training)
        sent, steps = collective_costs.op_traffic(link, o, training)
        out.append({"name": o.name, "role": o.role, "count": o.count, "link": link.name,
                    "tier": link.tier, "bytes_sent": int(sent), "steps": int(steps),
                    "algorithm": algorithm, "time_s": float(a.time_s[i]), "latency_s": latency,
                    "detail": o.detail})
    return out


TOTALS = ("flops", "bytes", "intensity", "time_s", "compute_time_s", "memory_time_s", "items_per_step",
          "item_unit", "tokens_per_s", "weight_bytes", "kv_bytes_per_token", "kv_cache_bytes",
          "activation_bytes", "memory_required_bytes", "memory_usable_bytes", "memory_budget_bytes",
          "fits_in_memory", "state_bytes", "link_bytes", "link_time_s", "bound")


def _totals_dict(t: Totals) -> dict[str, Any]:
    return {**{name: getattr(t, name) for name in TOTALS}, "per_device": t.devices > 1}
