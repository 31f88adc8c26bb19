"""Plain-data views (dicts of JSON types) of hardware and analyses, for the CLI and files."""

from __future__ import annotations

from types import EllipsisType
from typing import Any

from explorer.core.analysis.analysis import Analysis
from explorer.core.analysis.energy import StepEnergy, tdp_bound
from explorer.core.analysis.expected import Expected, expected_for, missing_efficiency
from explorer.core.hardware.hardware import Hardware, Provenance
from explorer.core.model import collective_costs
from explorer.core.model.parameters import PARAMETERS
from explorer.core.model.training import MFU_SOURCES
from explorer.core.units import format_bytes, format_parameters, format_si, format_time


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
        "links": [_link(x) for x in hw.links],
        "sources": dict(hw.sources),
        "notes": hw.notes,
    }


def _link(link) -> dict[str, Any]:
    return {"name": link.name, "tier": link.tier, "bandwidth_bytes_per_s": link.bandwidth_bytes_per_s,
            "direction": link.direction, "per_direction_bytes_per_s": link.per_direction_bytes_per_s,
            "group": link.group or None, "latency_s": link.latency_s, **_provenance(link.provenance),
            "latency": _provenance(link.latency_provenance) if link.latency_provenance else None}


def run_dict(run) -> dict[str, Any]:
    """A training run (``training.Run``) for JSON: at the stated utilisation and at the
    roofline's step time."""
    return {
        "tokens": run.tokens, "devices": run.devices, "tokens_per_step": run.tokens_per_step,
        "steps": run.steps, "model_flops_per_step": run.model_flops_per_step,
        "peak_flops_per_s": run.peak_flops_per_s, "tdp_w": run.tdp_w,
        "at_mfu": {"mfu": run.mfu, "step_s": run.mfu_step_s, "seconds": run.seconds(),
                   "device_hours": run.device_hours(), "energy_j_upper_bound": run.energy_j()},
        "at_roofline": {"mfu": run.roofline_mfu, "step_s": run.roofline_step_s, "seconds": run.seconds(False),
                        "device_hours": run.device_hours(False), "energy_j_upper_bound": run.energy_j(False)},
        "mfu_default_sources": list(MFU_SOURCES),
        "energy_note": "every device at its TDP for the whole run: an upper bound on the devices' own "
                       "energy (host, network and cooling not counted)",
    }


def split_lines(a: Analysis) -> list[str]:
    """How the step is spread, in words (nothing on one device)."""
    p = a.params
    if p.split.devices == 1:
        return []
    parts = [f"{degree.long} {value}" for degree, value in p.split.used()]
    links = sorted({(x.name, x.per_direction_bytes_per_s, x.latency_s) for x in a.links if x is not None})
    crossing = "; ".join(f"{name} {format_si(rate, 'B/s')} per direction, {latency * 1e6:.1f} µs a step"
                         for name, rate, latency in links)
    return [f"{p.split.devices:,} devices: {', '.join(parts)}; the ops below are one device's"
            + (f"; links: {crossing}" if crossing else "")]


def run_lines(run) -> list[str]:
    """A training run in words: the time at the stated utilisation and at the roofline."""
    energy = run.energy_j()
    return [
        "",
        f"training on {run.tokens:.3g} tokens: {run.steps:,.0f} steps of {run.tokens_per_step:,} tokens, "
        f"{run.model_flops_per_step * run.steps:.3g} FLOP (forward + backward)",
        f"  at {run.mfu:.0%} model-FLOPs utilisation (stated default 40%): "
        f"{format_time(run.mfu_step_s)} a step, {run.seconds() / 86400:,.1f} days on "
        f"{run.devices:,} devices, {run.device_hours():,.0f} device-hours"
        + (f", at most {energy / 3.6e9:,.0f} MWh of GPU energy (every device at its TDP; host, network "
           f"and cooling not counted)" if energy else ""),
        f"  at the roofline's step time ({run.roofline_mfu:.0%} utilisation; it counts recomputation and "
        f"does not overlap communication): "
        f"{run.seconds(False) / 86400:,.1f} days, {run.device_hours(False):,.0f} device-hours",
    ]


def analysis_dict(a: Analysis, run=None) -> dict[str, Any]:
    """The ``analyze --json`` document: FLOPs and bytes as integers, times in seconds. On
    several devices, the ops and totals are one device's (``workload.devices``).
    ``totals.time_s`` is the roofline bound, ``totals.expected_time_s`` the expected time
    (None: the bound alone was asked for, or no efficiency is published for the device)."""
    e = expected_for(a)
    return {
        "hardware": _hardware_dict(a),
        "workload": _workload_dict(a),
        "ops": _op_dicts(a),
        "communication": _communication_dicts(a),
        "totals": {**_totals_dict(a.totals), "expected_time_s": None if e is None else e.time_s},
        "efficiency": efficiency_dict(a, e),
        "energy": energy_dict(a, e),
        **({"training": run_dict(run)} if run is not None else {}),
        "notes": list(a.notes),
    }


def step_energy(a: Analysis, e: Expected | None):
    """The TDP × time upper bound of ``a``'s step (``energy.tdp_bound``) at its expected time,
    else its bound; None where the device has no TDP."""
    seconds, time = (e.time_s, "expected") if e is not None else (a.totals.time_s, "bound")
    return tdp_bound(a.hardware, a.params.split.devices, seconds, a.totals.items_per_step, time)


def fitted_energy(a: Analysis, e: Expected | None) -> StepEnergy | None:
    """The step's energy at the constants a calibration of the device fitted to its measured
    power (Choi et al.'s model: each device's FLOPs, main-memory bytes and expected time),
    every device together; None where the expected time's profile keeps none, or where they
    do not describe the step (``fitted_energy_note`` says why)."""
    kept = e.efficiency.energy if e is not None else None
    joules = _fitted_estimate(a, e) if kept is not None else None
    if joules is None:
        return None
    return StepEnergy(joules, joules / max(a.totals.items_per_step, 1), joules / e.time_s, "expected",
                      f"{e.efficiency.name}: {kept.constants.source}")


def _fitted_estimate(a: Analysis, e: Expected) -> float | None:
    """Joules of the step, every device, at the kept constants (None: precisions differ)."""
    kept = e.efficiency.energy
    if kept.precision != a.params.dtype:
        return None
    per_device = kept.constants.joules(float(a.totals.flops), float(a.totals.bytes), e.time_s)
    joules = per_device * a.params.split.devices
    tdp = a.hardware.specs.tdp_w
    return None if tdp and joules / e.time_s > tdp * a.params.split.devices else joules


def fitted_energy_note(a: Analysis, e: Expected | None) -> str | None:
    """Why a calibration's energy constants are not applied to this step (None: they are,
    or there are none)."""
    kept = e.efficiency.energy if e is not None else None
    if kept is None or fitted_energy(a, e) is not None:
        return None
    if kept.precision != a.params.dtype:
        return (f"the calibration's energy constants are for {kept.precision} arithmetic, the step runs "
                f"{a.params.dtype}: a FLOP of one costs what a FLOP of the other does only by chance")
    power = kept.constants.joules(float(a.totals.flops), float(a.totals.bytes), e.time_s) / e.time_s
    return (f"the calibration's energy constants give {format_si(power, 'W')} a device, above the "
            f"{format_si(a.hardware.specs.tdp_w, 'W')} TDP: a power cap would stretch the step, which "
            "the model does not follow")


def energy_dict(a: Analysis, e: Expected | None) -> dict[str, Any]:
    """``energy_j`` (the step, every device), ``joules_per_token`` (or per image) and
    ``power_w``: every device at its TDP for the step, an upper bound, with its source; and
    ``fitted``, the same at a calibration's fitted constants where the expected time's
    profile keeps them."""
    s, per_item = step_energy(a, e), f"joules_per_{a.totals.item_unit[:-1]}"
    fitted = fitted_energy(a, e)
    out: dict[str, Any] = {"fitted_note": fitted_energy_note(a, e), "fitted": None if fitted is None else {
        "energy_j": fitted.joules, per_item: fitted.joules_per_item, "power_w": fitted.power_w,
        "constants": {"flop_j": e.efficiency.energy.constants.flop_j,
                      "byte_j": e.efficiency.energy.constants.byte_j,
                      "constant_w": e.efficiency.energy.constants.constant_w,
                      "precision": e.efficiency.energy.precision},
        "source": fitted.source}}
    if s is None:
        return {"energy_j": None, per_item: None, "power_w": None, "upper_bound": None,
                "source": f"no energy data: the catalogue gives {a.hardware.name} no TDP", **out}
    return {"energy_j": s.joules, per_item: s.joules_per_item,
            "power_w": s.power_w, "upper_bound": True,
            "source": f"every device at its TDP ({s.source}) for the {s.time} step time: an upper bound; "
                      "no per-operation energy is sourced for any catalogue device", **out}


def efficiency_dict(a: Analysis, e: Expected | None) -> dict[str, Any]:
    """Which efficiency the expected time uses, each factor with its source, and where the
    expected time goes (seconds by class of op)."""
    out: dict[str, Any] = {"asked": a.params.efficiency, "note": missing_efficiency(a)}
    if e is None:
        return out
    family = e.efficiency
    out.update(family=family.id, name=family.name, expected_over_bound=e.ratio, parts_s=dict(e.parts),
               factors={name: {"value": f.value, "source": f.source, "note": f.note}
                        for name, f in family.factors.items()})
    if a.params.phase == "train":
        out["expected_mfu"] = expected_mfu(a, e)
    return out


def expected_mfu(a: Analysis, e: Expected) -> float:
    """The model-FLOPs utilisation the expected time implies: the step's model FLOPs
    (recomputation left out) over the expected time at the matrix peak."""
    return a.model_flops / (e.time_s * a.roofs.matrix.flops_per_s)


def expected_words(a: Analysis, e: Expected | None) -> str:
    """"expected 8.1 ms with published efficiency: 1.79× the bound, 124 tokens/s" (or
    calibrated), or what stands in for it."""
    if e is None:
        return missing_efficiency(a) or "the bound alone (efficiency: bound)"
    rate = a.totals.items_per_step / e.time_s
    return (f"expected {format_time(e.time_s)} with {a.params.efficiency} efficiency: "
            f"{e.ratio:.2f}× the bound, {rate:,.0f} {a.totals.item_unit}/s")


def _hardware_dict(a: Analysis) -> dict[str, Any]:
    peak, bandwidth = a.roofs.matrix, a.roofs.bandwidth_bytes_per_s
    return {"id": a.hardware.id, "name": a.hardware.name, "peak_flops": peak.flops_per_s, "peak": peak.label,
            "vector_peak_flops": a.roofs.vector.flops_per_s, "bandwidth": bandwidth,
            "ridge": peak.flops_per_s / bandwidth, "memory_bytes": a.hardware.memory_capacity_bytes,
            "links": [_link(x) for x in a.hardware.links]}


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
    """Each communication op: its link, bytes (an all-reduce's as a ring sends them), the
    algorithm it runs and its time and latency by that algorithm."""
    links, training = a.links, a.params.phase == "train"
    out = []
    for i, o in enumerate(a.ops):
        if links[i] is None:
            continue
        algorithm, latency = collective_costs.op_algorithm(links[i], o, training)
        out.append({"name": o.name, "role": o.role, "count": o.count, "link": links[i].name,
                    "tier": links[i].tier, "bytes_sent": int(a.bytes[i]), "steps": int(o.steps),
                    "algorithm": algorithm, "time_s": float(a.time_s[i]), "latency_s": latency,
                    "detail": o.detail})
    return out


TOTALS = ("flops", "bytes", "intensity", "time_s", "compute_time_s", "memory_time_s", "items_per_step",
          "item_unit", "tokens_per_s", "weight_bytes", "kv_bytes_per_token", "kv_cache_bytes",
          "activation_bytes", "memory_required_bytes", "memory_usable_bytes", "memory_budget_bytes",
          "fits_in_memory", "state_bytes", "link_bytes", "link_time_s", "bound")


def _totals_dict(t) -> dict[str, Any]:
    return {**{name: getattr(t, name) for name in TOTALS}, "per_device": t.devices > 1}


def parameter_words(model) -> str:
    """"8.03 B parameters"; a mixture of experts: "46.7 B parameters, 12.9 B active per token
    (2 of 8 experts; all resident in memory)"."""
    words = f"{format_parameters(model.parameter_count())} parameters"
    if getattr(model, "moe", False):
        words += (f", {format_parameters(model.parameter_count(active=True))} active per token "
                  f"({model.experts_per_token} of {model.experts} experts; all resident in memory)")
    return words


def _step_words(model, params) -> str:
    """What one step is on one device, in words: "decode, batch 8, context 1,024", "prefill, batch 1,
    2,048-token prompts", or for a CNN (which has no phases) "forward pass, batch 64,
    224×224 images"."""
    p = params
    if model.item_unit != "tokens":
        size = getattr(model, "image_size", None)
        return f"forward pass, batch {p.batch:,}" + (f", {size}×{size} images" if size else "")
    if p.phase == "prefill":
        cached = f" after a {p.prefix:,}-token cached prefix" if p.prefix else ""
        return f"prefill, batch {p.batch:,}, {p.seq:,}-token prompts{cached}"
    if p.phase == "train":
        return f"training step, batch {p.batch:,} × {p.seq:,} tokens" + training_words(p)
    return f"decode, batch {p.batch:,}, context {p.context:,}"


def training_words(p) -> str:
    """", sequence parallel, selective recomputation, ZeRO-1, 4 virtual stages": the training
    options in use that change the step ("" when none does)."""
    used = []
    if p.sp and p.tp > 1:
        used.append("sequence parallel")
    if p.recompute != "none":
        used.append(f"{p.recompute} recomputation")
    if p.zero and p.dp * p.ep > 1:
        used.append(f"ZeRO-{p.zero}")
    if p.vpp > 1 and p.pp > 1:
        used.append(f"{p.vpp} virtual stages")
    return "".join(", " + u for u in used)


def split_words(params) -> str:
    """"TP 8 × PP 4 × DP 2 (64 devices)"; "" on one device."""
    split = params.split
    if split.devices == 1:
        return ""
    parts = [f"{degree.short} {value}" for degree, value in split.used()]
    return f"{' × '.join(parts)} ({split.devices:,} devices)"


def step_words(model, params) -> str:
    """What one step is, in words, with how it is spread: "decode, batch 8, context 1,024,
    TP 8 (8 devices)"."""
    spread = split_words(params)
    return _step_words(model, params) + (f", {spread}" if spread else "")


def step_summary(a: Analysis, e: Expected | EllipsisType | None = ...) -> str:
    """The step in one line, for the status bar: what runs, its time, throughput and bound,
    its expected time (``e``: already worked out, e.g. the document's; worked out here when
    not given), and its memory against the budget."""
    t, p = a.totals, a.params
    fit = "fits in" if t.fits_in_memory else "does NOT fit in"
    memory = ", ".join(name for name, held in (("weights", True), ("optimizer state", t.state_bytes),
                                               ("KV cache", t.kv_bytes_per_token), ("activations", True))
                       if held)
    e = expected_for(a) if e is ... else e
    expected = f"; {expected_words(a, e)}" if e is not None else ""
    return (f"{a.model.name}, {step_words(a.model, p)}, {p.dtype}: bound at datasheet peaks "
            f"{format_time(t.time_s)} per step, {t.tokens_per_s:,.0f} {t.item_unit}/s, "
            f"{t.bound}-bound{expected}; "
            f"{memory} {format_bytes(t.memory_required_bytes)} {fit} the "
            f"{format_bytes(t.memory_budget_bytes)} budget ({p.budget_share:.0%} of "
            f"{format_bytes(t.memory_usable_bytes)} usable){energy_words(a, e)}")


def energy_words(a: Analysis, e: Expected | None) -> str:
    """"; 2.1 J a token at this machine's fitted constants" (a calibration's, where the
    expected time uses one), else "; at most 4.6 J a token at TDP", else nothing."""
    unit = a.totals.item_unit[:-1]
    fitted = fitted_energy(a, e)
    if fitted is not None:
        return (f"; {format_si(fitted.joules_per_item, 'J')} a {unit}, {format_si(fitted.power_w, 'W')} "
                "at this machine's fitted energy constants")
    bound = step_energy(a, e)
    return "" if bound is None else f"; at most {format_si(bound.joules_per_item, 'J')} a {unit} at TDP"
