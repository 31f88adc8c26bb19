"""The bound and the expected time beside published measurements of real runs.

``resources/validation/published-runs.yaml`` lists serving and training runs as their
publishers measured them, each with its exact configuration and source. ``check`` costs
one run the way the app costs any workload (``analysis.analyze`` for the bound,
``expected.expected`` with the device's published efficiency), so the table says how far
both are from reality: the bound should never exceed a measured time, and the expected
time should fall near it. Models that only these runs use (Megatron-LM's GPT models) are in
``resources/validation/models.yaml``, out of the model picker.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from pathlib import Path
from typing import Any

from explorer.core.analysis.analysis import analyze
from explorer.core.analysis.engine_terms import AIM, TYPICAL, RunTerms, apply, features, read_terms
from explorer.core.analysis.expected import expected
from explorer.core.analysis.run_fit import ALL, HeldOut, RunRow, Terms, held_out
from explorer.core.files.datafile import DataFileError, Fields, read_entries
from explorer.core.hardware.efficiency import Efficiency, efficiency_for
from explorer.core.hardware.hardware import DeviceKind, Hardware, kind_label
from explorer.core.model.applicability import Phase
from explorer.core.model.models import ModelSpec
from explorer.core.model.parameters import PARAMETERS
from explorer.core.model.presets import load_model_file
from explorer.core.model.workload import WorkloadError, WorkloadParams
from explorer.paths import resource_path

SCHEMA = 1


class RunKind(StrEnum):
    """What a published run measured: a run's ``kind``."""

    GENERATE = "generate"  # a prompt, then output tokens
    PREFILL = "prefill"
    DECODE = "decode"
    TRAIN = "train"


KINDS = tuple(kind.value for kind in RunKind)  # plain strings: what the file holds
BAND = AIM  # the band the expected time is aimed at (expected ÷ measured)
_SETTABLE = {p.name for p in PARAMETERS} - {"phase", "seq", "context"}  # the kind sets these


@dataclass(frozen=True)
class Run:
    """One published measurement and the configuration it was measured in."""

    id: str
    kind: RunKind
    model: str
    hardware: str
    workload: dict[str, Any]
    measured_s: float
    source: str
    where: str
    quote: str
    derivation: str
    engine: str
    prompt: int = 0
    output: int = 0
    context: int = 0
    group: str = ""  # the independent source it comes from (held out together); its URL by default

    @property
    def source_group(self) -> str:
        return self.group or self.source

    @property
    def phase(self) -> Phase:
        """The phase whose band it falls in (a whole request: decode's, most of its steps)."""
        return {RunKind.PREFILL: Phase.PREFILL, RunKind.TRAIN: Phase.TRAIN}.get(self.kind, Phase.DECODE)

    @property
    def engine_id(self) -> str:
        return str(self.workload.get("engine", TYPICAL))


@dataclass(frozen=True)
class Checked:
    run: Run
    bound_s: float
    expected_s: float | None  # None: no published efficiency for the device
    efficiency: Efficiency | None
    kernels_s: float | None = None  # the kernels alone at their microbenchmarks' shares (no fitted terms)
    band: tuple[float, float] | None = None  # where the measured time is expected (seconds)
    row: RunRow | None = None  # what the fit sees of it

    @property
    def bound_ratio(self) -> float:
        return self.bound_s / self.run.measured_s

    @property
    def expected_ratio(self) -> float | None:
        return None if self.expected_s is None else self.expected_s / self.run.measured_s

    @property
    def in_band(self) -> bool:
        ratio = self.expected_ratio
        return ratio is not None and BAND[0] <= ratio <= BAND[1]


def _read_run(fields: Fields) -> Run:
    ident = fields.identifier("id")
    kind = RunKind(fields.text("kind", choices=KINDS))
    workload = fields.mapping("workload")
    unknown = sorted(set(map(str, workload)) - _SETTABLE)
    if unknown:
        raise fields.error("workload", f"{unknown[0]} is not a workload parameter a run sets "
                                       f"(the kind sets phase, seq and context)")
    needs = {RunKind.GENERATE: ("prompt", "output"), RunKind.PREFILL: ("prompt",),
             RunKind.DECODE: ("context",), RunKind.TRAIN: ("prompt",)}
    sizes = {name: fields.integer(name, required=name in needs[kind], default=0)
             for name in ("prompt", "output", "context")}
    return Run(ident, kind, fields.identifier("model"), fields.identifier("hardware"), dict(workload),
               fields.number("measured_s"), fields.url("source"), fields.text("where"), fields.text("quote"),
               fields.text("derivation"), fields.text("engine"), **sizes,
               group=fields.text("group", required=False) or "")


def read_runs(path: str | Path | None = None) -> list[Run]:
    """The runs of ``path`` (the bundled file by default)."""
    return read_entries(path or resource_path("validation", "published-runs.yaml"), "runs", SCHEMA, _read_run)


@lru_cache(maxsize=1)
def run_models() -> dict[str, ModelSpec]:
    """The models only the published runs use, by id."""
    return {m.id: m for m in load_model_file(resource_path("validation", "models.yaml"))}


def _params(run: Run, phase: Phase, origin: str = "published-runs.yaml", **sizes: Any) -> WorkloadParams:
    try:
        return WorkloadParams(**run.workload, phase=phase, **sizes)
    except (TypeError, WorkloadError) as error:
        raise DataFileError(origin, str(error), run.id, "workload") from None


def _steps(run: Run, origin: str = "published-runs.yaml") -> list[tuple[WorkloadParams, int]]:
    """The steps a run takes and how many of each."""
    if run.kind == RunKind.PREFILL:
        return [(_params(run, Phase.PREFILL, origin, seq=run.prompt), 1)]
    if run.kind == RunKind.DECODE:
        return [(_params(run, Phase.DECODE, origin, context=run.context), 1)]
    if run.kind == RunKind.TRAIN:
        return [(_params(run, Phase.TRAIN, origin, seq=run.prompt), 1)]
    # One prefill gives the first token, each decode step one more: at the middle context.
    return [(_params(run, Phase.PREFILL, origin, seq=run.prompt), 1),
            (_params(run, Phase.DECODE, origin, context=run.prompt + run.output // 2), run.output - 1)]


def check(run: Run, models: Mapping[str, ModelSpec], catalog: Mapping[str, Hardware],
          families: Iterable[Efficiency], terms: RunTerms | None = None,
          origin: str = "published-runs.yaml") -> Checked:
    """``run``'s bound and expected time (``models``, ``catalog``: by id) with the fitted
    ``terms`` (the bundled ones by default); ``origin``: the file it was read from."""
    if run.hardware not in catalog:
        raise DataFileError(origin, f"no device {run.hardware!r} in the catalogue (see roofline-explorer "
                                    "hardware list)", run.id, "hardware")
    hardware = catalog[run.hardware]
    if run.model not in models and run.model not in run_models():
        raise DataFileError(origin, f"no model {run.model!r} (see roofline-explorer models)", run.id, "model")
    model = models[run.model] if run.model in models else run_models()[run.model]
    family = efficiency_for(hardware, families)
    terms = terms or read_terms()
    bound = kernels = expect = low = high = 0.0
    units: dict[str, float] = {}
    for params, count in _steps(run, origin):
        a = analyze(model, params, hardware)
        bound += count * a.totals.time_s
        if family is None:
            continue
        e = expected(a, family)
        kernels += count * e.time_s
        for name, value in features(a, e).items():
            units[name] = units.get(name, 0.0) + count * value
        fitted = apply(a, e, terms, run.engine_id)
        assert fitted.band is not None  # apply sets it
        expect += count * fitted.time_s
        low, high = low + count * fitted.band[0], high + count * fitted.band[1]
    if family is None:
        return Checked(run, bound, None, None)
    row = RunRow(run.id, run.source_group, run.engine_id, run.phase, family.id, hardware.id, hardware.kind,
                 run.measured_s, bound, kernels, units)
    return Checked(run, bound, expect, family, kernels, (low, high), row)


def held_out_runs(checked: Sequence[Checked]) -> dict[str, HeldOut]:
    """Each run (with an expected time) predicted with terms fitted without its source, by id."""
    return {h.row.id: h for h in held_out([c.row for c in checked if c.row is not None])}


def share(fraction: float) -> str:
    """A share as the figures print it: to one decimal ("79.8%"), so a share just under a
    goal (80 % of runs within the band) never prints as the goal."""
    return f"{fraction:.1%}"


def _figures(ratios: Sequence[float]) -> str:
    inside = sum(BAND[0] <= r <= BAND[1] for r in ratios)
    return (f"{inside} of {len(ratios)} runs ({share(inside / len(ratios))}) within {BAND[0]:g}–{BAND[1]:g} "
            f"of the measured time, median {statistics.median(ratios):.2f}")


def _held_figures(held: Sequence[HeldOut]) -> str:
    covered = sum(h.covered for h in held) / len(held)
    sources = len({h.row.group for h in held})
    return (f"{_figures([h.ratio for h in held])}, the band holding the measured time for {share(covered)} "
            f"({sources} sources)")


def summary(checked: Sequence[Checked], held: Mapping[str, HeldOut] | None = None) -> str:
    """"Held out (…): on GPUs, 71 of 89 runs (79.8%) within 0.8–1.25 of the measured time,
    median 1.01, the band holding the measured time for 84.3% (12 sources); on CPUs, …. Fitted
    to every run: …; the kernels alone: …; the bound is at most 0.94 of the measured time."."""
    timed = [c for c in checked if c.expected_ratio is not None]
    worst = max(c.bound_ratio for c in checked)
    parts = []
    if held:
        kinds = [(kind, [h for h in held.values() if h.row.kind == kind])
                 for kind in (DeviceKind.GPU, DeviceKind.CPU, DeviceKind.ACCELERATOR)]
        each = [f"on {kind_label(kind)}s, {_held_figures(mine)}" for kind, mine in kinds if mine]
        parts.append("Held out (each source's runs predicted with terms fitted without that source): "
                     + "; ".join(each) + ".")
    if timed:
        parts.append(f"Fitted to every run: {_figures([c.expected_ratio or 0.0 for c in timed])}.")
        kernels = [c.kernels_s / c.run.measured_s for c in timed if c.kernels_s is not None]
        parts.append(f"The kernels alone: {_figures(kernels)}.")
    parts.append(f"The bound is at most {worst:.2f} of the measured time.")
    return " ".join(parts)


def terms_table(checked: Sequence[Checked]) -> str:
    """Which fitted terms close which source's gap: each source's median expected ÷ measured,
    held out, with the kernels alone, with the class factors only, with the engines' terms
    only and with both; and each kind's share of runs within ``BAND``."""
    rows = [c.row for c in checked if c.row is not None]
    ways = (Terms(False, False), Terms(True, False), Terms(False, True), ALL)
    held = [{h.row.id: h.ratio for h in held_out(rows, which)} for which in ways]
    lines = ["| source | device | runs | kernels alone | + class factors | + engines' terms | both |",
             "|---|---|---:|---:|---:|---:|---:|"]
    groups = sorted({(r.kind, r.group) for r in rows}, key=lambda g: (g[0] != DeviceKind.GPU, g[1]))
    for kind, group in groups:
        mine = [r for r in rows if r.group == group and r.kind == kind]
        medians = [f"{statistics.median(h[r.id] for r in mine):.2f}" for h in held]
        lines.append(f"| {group} | {kind_label(kind)} | {len(mine)} | " + " | ".join(medians) + " |")
    for kind in (DeviceKind.GPU, DeviceKind.CPU, DeviceKind.ACCELERATOR):
        mine = [r for r in rows if r.kind == kind]
        if not mine:
            continue
        shares = [share(sum(BAND[0] <= h[r.id] <= BAND[1] for r in mine) / len(mine)) for h in held]
        lines.append(f"| **within {BAND[0]:g}–{BAND[1]:g}** | {kind_label(kind)} | {len(mine)} | "
                     + " | ".join(shares) + " |")
    return "\n".join(lines)


def _what(r: Run) -> str:
    return {RunKind.GENERATE: f"batch {r.workload.get('batch', 1)}, {r.prompt:,} + {r.output:,} tokens",
            RunKind.PREFILL: f"first token, {r.prompt:,}-token prompt",
            RunKind.DECODE: f"a token at {r.context:,} context",
            RunKind.TRAIN: "training step"}[r.kind]


def markdown_table(checked: Sequence[Checked], held: Mapping[str, HeldOut] | None = None) -> str:
    """One row per run: what ran, the measured time, bound ÷ measured, expected ÷ measured
    (fitted to every run) and held out ÷ measured."""
    held = held or {}
    lines = ["| run | model, device | what | measured | bound ÷ measured | expected ÷ measured | "
             "held out ÷ measured | source |",
             "|---|---|---|---|---:|---:|---:|---|"]
    for c in checked:
        r = c.run
        devices = r.workload.get("tp", 1) * r.workload.get("pp", 1) * r.workload.get("dp", 1)
        ratio = "–" if c.expected_ratio is None else f"{c.expected_ratio:.2f}"
        out = f"{held[r.id].ratio:.2f}" if r.id in held else "–"
        lines.append(f"| {r.id} | {r.model}, {r.hardware} × {devices}, {r.workload.get('dtype', 'bf16')} | "
                     f"{_what(r)} | {_seconds(r.measured_s)} | {c.bound_ratio:.2f} | {ratio} | {out} | "
                     f"[{r.engine}]({r.source}) |")
    return "\n".join(lines)


def _seconds(value: float) -> str:
    return f"{value * 1e3:.1f} ms" if value < 1 else f"{value:.2f} s"
