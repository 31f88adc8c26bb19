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

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from pathlib import Path
from typing import Any

from explorer.core.analysis.analysis import analyze
from explorer.core.analysis.expected import expected
from explorer.core.files.datafile import DataFileError, Fields, read_entries
from explorer.core.hardware.efficiency import Efficiency, efficiency_for
from explorer.core.hardware.hardware import Hardware
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
# The band the expected time is aimed at (expected ÷ measured).
BAND = (0.8, 1.25)
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


@dataclass(frozen=True)
class Checked:
    run: Run
    bound_s: float
    expected_s: float | None  # None: no published efficiency for the device
    efficiency: Efficiency | None

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
               fields.text("derivation"), fields.text("engine"), **sizes)


def read_runs(path: str | Path | None = None) -> list[Run]:
    """The runs of ``path`` (the bundled file by default)."""
    return read_entries(path or resource_path("validation", "published-runs.yaml"), "runs", SCHEMA, _read_run)


@lru_cache(maxsize=1)
def run_models() -> dict[str, ModelSpec]:
    """The models only the published runs use, by id."""
    return {m.id: m for m in load_model_file(resource_path("validation", "models.yaml"))}


def _params(run: Run, phase: Phase, **sizes: Any) -> WorkloadParams:
    try:
        return WorkloadParams(**run.workload, phase=phase, **sizes)
    except (TypeError, WorkloadError) as error:
        raise DataFileError("published-runs.yaml", str(error), run.id, "workload") from None


def _steps(run: Run) -> list[tuple[WorkloadParams, int]]:
    """The steps a run takes and how many of each."""
    if run.kind == RunKind.PREFILL:
        return [(_params(run, Phase.PREFILL, seq=run.prompt), 1)]
    if run.kind == RunKind.DECODE:
        return [(_params(run, Phase.DECODE, context=run.context), 1)]
    if run.kind == RunKind.TRAIN:
        return [(_params(run, Phase.TRAIN, seq=run.prompt), 1)]
    # One prefill gives the first token, each decode step one more: at the middle context.
    return [(_params(run, Phase.PREFILL, seq=run.prompt), 1),
            (_params(run, Phase.DECODE, context=run.prompt + run.output // 2), run.output - 1)]


def check(run: Run, models: Mapping[str, ModelSpec], catalog: Mapping[str, Hardware],
          families: Iterable[Efficiency]) -> Checked:
    """``run``'s bound and expected time (``models``, ``catalog``: by id)."""
    hardware = catalog[run.hardware]
    model = models[run.model] if run.model in models else run_models()[run.model]
    family = efficiency_for(hardware, families)
    bound = expect = 0.0
    for params, count in _steps(run):
        a = analyze(model, params, hardware)
        bound += count * a.totals.time_s
        if family is not None:
            expect += count * expected(a, family).time_s
    return Checked(run, bound, expect if family is not None else None, family)


def summary(checked: list[Checked]) -> str:
    """"21 of 33 runs (64%) expected within 0.8–1.25 of the measured time; the bound is at
    most 0.79 of the measured time."."""
    inside = sum(c.in_band for c in checked)
    worst = max(c.bound_ratio for c in checked)
    return (f"{inside} of {len(checked)} runs ({inside / len(checked):.0%}) expected within "
            f"{BAND[0]:g}–{BAND[1]:g} of the measured time; the bound is at most "
            f"{worst:.2f} of the measured time.")


def markdown_table(checked: list[Checked]) -> str:
    """One row per run: what ran, the measured time, bound ÷ measured, expected ÷ measured."""
    lines = ["| run | model, device | what | measured | bound ÷ measured | expected ÷ measured | source |",
             "|---|---|---|---|---:|---:|---|"]
    for c in checked:
        r = c.run
        devices = r.workload.get("tp", 1) * r.workload.get("pp", 1) * r.workload.get("dp", 1)
        what = {RunKind.GENERATE: f"batch {r.workload.get('batch', 1)}, {r.prompt:,} + {r.output:,} tokens",
                RunKind.PREFILL: f"first token, {r.prompt:,}-token prompt",
                RunKind.DECODE: f"a token at {r.context:,} context",
                RunKind.TRAIN: "training step"}[r.kind]
        ratio = "–" if c.expected_ratio is None else f"{c.expected_ratio:.2f}"
        lines.append(f"| {r.id} | {r.model}, {r.hardware} × {devices}, {r.workload.get('dtype', 'bf16')} | "
                     f"{what} | {_seconds(r.measured_s)} | {c.bound_ratio:.2f} | {ratio} | "
                     f"[{r.engine}]({r.source}) |")
    return "\n".join(lines)


def _seconds(value: float) -> str:
    return f"{value * 1e3:.1f} ms" if value < 1 else f"{value:.2f} s"
