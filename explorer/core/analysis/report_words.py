"""A step in words, for the terminal and the status bar: what runs and how it is spread, a
model's parameters, a training run, the expected time, and the one-line summary."""

from __future__ import annotations

from types import EllipsisType
from typing import TYPE_CHECKING

from explorer.core.analysis.analysis import Analysis
from explorer.core.analysis.energy_report import energy_words
from explorer.core.analysis.engine_terms import band_words, efficiency_unchecked
from explorer.core.analysis.expected import Expected, expected_for, missing_efficiency
from explorer.core.model.applicability import Phase
from explorer.core.model.models import ModelSpec, TransformerSpec
from explorer.core.model.training import Run
from explorer.core.model.workload import WorkloadParams
from explorer.core.units import format_bytes, format_parameters, format_si, format_time

if TYPE_CHECKING:
    from explorer.core.model.custom import CustomSpec


def split_lines(a: Analysis) -> list[str]:
    """How the step is spread, in words (nothing on one device)."""
    p = a.params
    if p.split.devices == 1:
        return []
    parts = [f"{degree.long} {value}" for degree, value in p.split.used()]
    crossed = {x for x in a.links if x is not None}
    assert all(x.latency_s is not None for x in crossed)  # the catalogue requires a link's latency
    links = sorted({(x.name, x.per_direction_bytes_per_s, x.latency_s or 0.0) for x in crossed})
    crossing = "; ".join(f"{name} {format_si(rate, 'B/s')} per direction, {latency * 1e6:.1f} µs a step"
                         for name, rate, latency in links)
    return [f"{p.split.devices:,} devices: {', '.join(parts)}; the ops below are one device's"
            + (f"; links: {crossing}" if crossing else "")]


def run_lines(run: Run) -> list[str]:
    """A training run in words: the time at the stated utilisation and at the roofline."""
    energy = run.energy_j()
    return [
        "",
        f"training on {run.tokens:.3g} tokens: {run.steps:,.0f} steps of {run.tokens_per_step:,} tokens, "
        f"{run.model_flops_per_step * run.steps:.3g} FLOP (forward + backward)",
        f"  at {run.mfu:.0%} model-FLOPs utilisation (stated default 40%): "
        f"{format_time(run.mfu_step_s)} a step, {run.seconds() / 86400:,.1f} days on "
        f"{run.devices:,} devices, {run.device_hours():,.0f} device-hours"
        + (f", {energy / 3.6e9:,.0f} MWh of GPU energy at TDP (every device at its TDP; host, network "
           f"and cooling not counted)" if energy else ""),
        f"  at the roofline's step time ({run.roofline_mfu:.0%} utilisation; it counts recomputation and "
        f"does not overlap communication): "
        f"{run.seconds(False) / 86400:,.1f} days, {run.device_hours(False):,.0f} device-hours",
    ]

def expected_words(a: Analysis, e: Expected | None) -> str:
    """"expected 8.1 ms with published efficiency: 1.79× the bound, 124 tokens/s, 5.3–13.3 ms:
    a band that held the measured time of 86.5% of 89 published GPU runs (12 sources), each
    predicted without its source" (or calibrated; the band: ``engine_terms.band_words``), or
    what stands in for it."""
    if e is None:
        return missing_efficiency(a) or "the bound alone (efficiency: bound)"
    rate = a.totals.items_per_step / e.time_s
    words = band_words(a.hardware, efficiency_unchecked(a.params.efficiency))
    band = "" if e.band is None else f", {format_time(e.band[0])}–{format_time(e.band[1])}: {words}"
    return (f"expected {format_time(e.time_s)} with {a.params.efficiency} efficiency: "
            f"{e.ratio:.2f}× the bound, {rate:,.0f} {a.totals.item_unit}/s{band}")


def parameter_words(model: ModelSpec | CustomSpec) -> str:
    """"8.03 B parameters"; a mixture of experts: "46.7 B parameters, 12.9 B active per token
    (2 of 8 experts; all resident in memory)"."""
    words = f"{format_parameters(model.parameter_count())} parameters"
    if isinstance(model, TransformerSpec) and model.moe:
        words += (f", {format_parameters(model.parameter_count(active=True))} active per token "
                  f"({model.experts_per_token} of {model.experts} experts; all resident in memory)")
    return words


def _step_words(model: ModelSpec | CustomSpec, params: WorkloadParams) -> str:
    """What one step is on one device, in words: "decode, batch 8, context 1,024", "prefill, batch 1,
    2,048-token prompts", or for a CNN (which has no phases) "forward pass, batch 64,
    224×224 images"."""
    p = params
    if model.item_unit != "tokens":
        size = getattr(model, "image_size", None)
        return f"forward pass, batch {p.batch:,}" + (f", {size}×{size} images" if size else "")
    if p.phase == Phase.PREFILL:
        cached = f" after a {p.prefix:,}-token cached prefix" if p.prefix else ""
        return f"prefill, batch {p.batch:,}, {p.seq:,}-token prompts{cached}"
    if p.phase == Phase.TRAIN:
        return f"training step, batch {p.batch:,} × {p.seq:,} tokens" + training_words(p)
    return f"decode, batch {p.batch:,}, context {p.context:,}"


def training_words(p: WorkloadParams) -> str:
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


def split_words(params: WorkloadParams) -> str:
    """"TP 8 × PP 4 × DP 2 (64 devices)"; "" on one device."""
    split = params.split
    if split.devices == 1:
        return ""
    parts = [f"{degree.short} {value}" for degree, value in split.used()]
    extra = ""
    if split.trim and split.pp > 1:
        ends, layers = "chunks" if split.vpp > 1 else "stages", "layers" if split.trim > 1 else "layer"
        extra += f", first and last {ends} {split.trim} {layers} shorter"
    if params.dispatch == "two-hop" and split.ep > 1:
        extra += ", two-hop expert dispatch"
    return f"{' × '.join(parts)} ({split.devices:,} devices{extra})"


def step_words(model: ModelSpec | CustomSpec, params: WorkloadParams) -> str:
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
