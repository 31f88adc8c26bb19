"""The energy lower bound and estimate against published measurements of the GPU energy of
serving an LLM (resources/validation/published-energy.yaml), in joules per output token.

A row is costed as each request's prefill of ``prompt`` tokens (alone, batch 1) and its
``output`` tokens' shares of decode steps at batch ``batch`` (the decode step at the middle
context, prompt + output / 2): per output token, the decode step's over the batch plus the
prefill's over the output. Each step's energy is ``energy.estimate``'s (the power model over
its expected time, activity the bound's time over it) and ``energy.lower_bound_joules``'s.
``fit_floor_share`` finds the power model's one constant by least squares on the logarithm
of the ratio; ``held_out`` fits it without each device (or source) in turn and predicts it."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from explorer.core.analysis.analysis import analyze
from explorer.core.analysis.energy import FLOOR_SHARE, lower_bound_joules
from explorer.core.analysis.expected import expected_for
from explorer.core.files.datafile import DataFileError, Fields, read_entries
from explorer.core.hardware.hardware import Hardware
from explorer.core.model.applicability import Phase
from explorer.core.model.models import ModelSpec
from explorer.core.model.workload import WorkloadParams
from explorer.paths import resource_path

SCHEMA = 1
BAND = (0.8, 1.25)  # the estimate over the measured J/token the check aims within


@dataclass(frozen=True)
class EnergyRun:
    id: str
    model: str
    hardware: str
    workload: dict[str, Any]
    prompt: int
    output: float
    joules_per_token: float  # measured
    power_w: float | None  # measured, all the GPUs together, where given
    source: str
    where: str
    quote: str
    derivation: str
    counted: str
    engine: str

    @property
    def source_group(self) -> str:
        """"mlenergy-v3": the leaderboard version the row comes from."""
        return "-".join(self.id.split("-")[:2])


@dataclass(frozen=True)
class Costed:
    """A row with the app's figures for it: per output token, the device-seconds and the
    activity of its decode and prefill shares, the lower bound."""

    run: EnergyRun
    tdp_w: float
    devices: int
    decode_s: float  # the decode step's expected time over the batch
    decode_activity: float
    prefill_s: float  # the prefill's expected time over the output
    prefill_activity: float
    lower_bound: float  # J/token

    def estimate(self, floor_share: float = FLOOR_SHARE) -> float:
        """J/token at ``floor_share``: each share at its own activity's power."""
        def power(activity: float) -> float:
            return self.tdp_w * (floor_share + (1 - floor_share) * min(activity, 1.0))
        return self.devices * (power(self.decode_activity) * self.decode_s
                               + power(self.prefill_activity) * self.prefill_s)

    def ratio(self, floor_share: float = FLOOR_SHARE) -> float:
        return self.estimate(floor_share) / self.run.joules_per_token


def _read(fields: Fields) -> EnergyRun:
    return EnergyRun(fields.identifier("id"), fields.identifier("model"), fields.identifier("hardware"),
                     dict(fields.mapping("workload")), fields.integer("prompt"), fields.number("output"),
                     fields.number("joules_per_token"), fields.number("power_w", required=False),
                     fields.url("source"), fields.text("where"), fields.text("quote"),
                     fields.text("derivation"), fields.text("counted"), fields.text("engine"))


def read_energy_runs(path: str | Path | None = None) -> list[EnergyRun]:
    return read_entries(path or resource_path("validation", "published-energy.yaml"), "runs", SCHEMA, _read)


def cost(run: EnergyRun, models: Mapping[str, ModelSpec], catalog: Mapping[str, Hardware]) -> Costed:
    """``run`` at the app's expected times and the floor operation energies."""
    hardware, model = catalog[run.hardware], models[run.model]
    if not hardware.specs.tdp_w:
        raise DataFileError("runs", f"{hardware.name} states no TDP", run.id, "hardware")
    batch = int(run.workload["batch"])
    decode = analyze(model, WorkloadParams(**run.workload, phase=Phase.DECODE,
                                           context=int(run.prompt + run.output / 2)), hardware)
    prefill_params = {**run.workload, "batch": 1}
    prefill = analyze(model, WorkloadParams(**prefill_params, phase=Phase.PREFILL, seq=run.prompt), hardware)
    d, p = expected_for(decode), expected_for(prefill)
    if d is None or p is None:
        raise DataFileError("runs", f"no expected time for {hardware.name}", run.id, "hardware")
    devices = decode.params.split.devices
    dt, pt = decode.totals, prefill.totals
    lower = devices * (lower_bound_joules(float(dt.flops), float(dt.bytes)) / batch
                       + lower_bound_joules(float(pt.flops), float(pt.bytes)) / run.output)
    return Costed(run, hardware.specs.tdp_w, devices, d.time_s / batch, decode.totals.time_s / d.time_s,
                  p.time_s / run.output, prefill.totals.time_s / p.time_s, lower)


def fit_floor_share(costed: Sequence[Costed]) -> float:
    """The floor share (0–1, to 0.005) minimising the squared logarithms of the ratios."""
    def loss(share: float) -> float:
        return sum(math.log(c.ratio(share)) ** 2 for c in costed)
    return min((i / 200 for i in range(201)), key=loss)


def held_out(costed: Sequence[Costed], key: Callable[[Costed], str]) -> dict[str, float]:
    """Each row's ratio at the floor share fitted without the rows of its ``key``, by id."""
    out: dict[str, float] = {}
    for group in sorted({key(c) for c in costed}):
        share = fit_floor_share([c for c in costed if key(c) != group])
        out.update({c.run.id: c.ratio(share) for c in costed if key(c) == group})
    return out


def within(ratios: Sequence[float]) -> float:
    """The share of ``ratios`` within ``BAND``."""
    return sum(BAND[0] <= r <= BAND[1] for r in ratios) / len(ratios)


def markdown_table(costed: Sequence[Costed], by_device: Mapping[str, float]) -> str:
    head = ("| run | measured J/token | estimate | estimate ÷ measured | held out by device | lower bound |\n"
            "|---|---:|---:|---:|---:|---:|")
    rows = [f"| {c.run.id} | {c.run.joules_per_token:.3f} | {c.estimate():.3f} | {c.ratio():.2f} | "
            f"{by_device[c.run.id]:.2f} | {c.lower_bound:.4f} |" for c in costed]
    return "\n".join([head, *rows])
