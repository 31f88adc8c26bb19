"""The energy lower bound and estimate against published measurements of the GPU energy of
serving an LLM (resources/validation/published-energy.yaml), in joules per output token.

A row is costed as ``serve`` costs the same workload (``serving_timing.Timing``, one model
for both): a replica's cycle of ``output`` decode steps at batch ``batch`` (the decode step
at the middle context, prompt + output // 2) and each request's prefill of ``prompt``
tokens, alone (batch 1, between the decode steps: an engine with chunked prefill off) or,
with ``prefill_chunk``, riding on the decode steps (``mixed_step``: one weight read for both,
as vLLM's V1 engine schedules them). Per output token, the decode step over the batch plus
what the prompts add to the cycle over the output; a chunk's busy time leaves out the weight
reads it shares with its decode step. Each share's energy is ``energy.power_w``'s over its expected time
(occupancy the compute roof's time plus the memory roof's over it) and
``energy.lower_bound_joules``'s.

Two checks, because the estimate is a power times a time and the two can err apart:
``power_ratio`` puts the power model alone to the test, at the row's measured time per
token (its J/token over its measured average power) with the same FLOPs and bytes, and
``ratio`` the estimate as the app gives it, at the expected time. ``time_ratio`` (expected
over measured time per token) says how much of the second's error is the time's.
``fit_idle_share`` finds the power model's one constant by least squares on the logarithm of
``power_ratio``; ``held_out`` fits it without each device (or source) in turn and predicts
that device's rows."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from explorer.core.analysis.analysis import analyze
from explorer.core.analysis.energy import IDLE_SHARE, lower_bound_joules
from explorer.core.analysis.expected import expected_for
from explorer.core.analysis.serving_energy import TokenEnergy
from explorer.core.analysis.serving_request import decode_params as serving_decode_params
from explorer.core.analysis.serving_timing import Timing
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
    power_w: float  # measured average power, all the GPUs together
    source: str
    where: str
    quote: str
    derivation: str
    counted: str
    engine: str
    prefill_chunk: int | None = None  # tokens a step prefills beside the decodes; None: prefills alone

    @property
    def source_group(self) -> str:
        """"mlenergy-v3": the leaderboard version the row comes from."""
        return "-".join(self.id.split("-")[:2])

    @property
    def seconds_per_token(self) -> float:
        """The measured time per output token of the whole configuration (J/token over W)."""
        return self.joules_per_token / self.power_w


@dataclass(frozen=True)
class Costed:
    """A row with the app's figures for it: per output token, the expected seconds and the
    roofs' busy seconds (compute time plus memory time, each device) of its decode and
    prefill shares (``serving_energy.TokenEnergy``, what ``serve`` estimates), and the lower
    bound."""

    run: EnergyRun
    energy: TokenEnergy
    lower_bound: float  # J/token

    @property
    def decode_s(self) -> float:
        return self.energy.decode_s

    @property
    def prefill_s(self) -> float:
        return self.energy.prefill_s

    def estimate(self, idle_share: float = IDLE_SHARE) -> float:
        """J/token at the expected time: each share at its own occupancy's power."""
        return self.energy.joules(idle_share)

    def at_measured_time(self, idle_share: float = IDLE_SHARE) -> float:
        """J/token of the power model at the measured time per token (the same work)."""
        return self.energy.at_seconds(self.run.seconds_per_token, idle_share)

    def ratio(self, idle_share: float = IDLE_SHARE) -> float:
        """The estimate over the measured J/token."""
        return self.estimate(idle_share) / self.run.joules_per_token

    def power_ratio(self, idle_share: float = IDLE_SHARE) -> float:
        """The power model's J/token at the measured time over the measured J/token (the
        modelled power over the measured one)."""
        return self.at_measured_time(idle_share) / self.run.joules_per_token

    @property
    def time_ratio(self) -> float:
        """The expected time per output token over the measured one."""
        return (self.decode_s + self.prefill_s) / self.run.seconds_per_token


def _read(fields: Fields) -> EnergyRun:
    return EnergyRun(fields.identifier("id"), fields.identifier("model"), fields.identifier("hardware"),
                     dict(fields.mapping("workload")), fields.integer("prompt"), fields.number("output"),
                     fields.number("joules_per_token"), fields.number("power_w"),
                     fields.url("source"), fields.text("where"), fields.text("quote"),
                     fields.text("derivation"), fields.text("counted"), fields.text("engine"),
                     fields.integer("prefill_chunk", False))


def read_energy_runs(path: str | Path | None = None) -> list[EnergyRun]:
    return read_entries(path or resource_path("validation", "published-energy.yaml"), "runs", SCHEMA, _read)


def estimate_source() -> str:
    """What ``serve``'s J/token estimate is: the power model, its constant, and how many
    published measurements check it."""
    return (f"power model: TDP × ({IDLE_SHARE:g} + {1 - IDLE_SHARE:g} × occupancy) at the expected time, "
            "each of a cycle's decode and prefill shares at its own occupancy (compute time plus memory time "
            f"over its time, at most 1), validated against {len(read_energy_runs())} published measurements "
            "(resources/validation/published-energy.yaml; docs/commands.md, analyze's energy)")


def cost(run: EnergyRun, models: Mapping[str, ModelSpec], catalog: Mapping[str, Hardware]) -> Costed:
    """``run`` at the app's expected times and the floor operation energies, its time as
    ``serve`` works it out (``serving_timing.Timing``: the same cycle): a replica's cycle of
    ``output`` decode steps at batch ``batch`` and its requests' prefills, alone between the
    decode steps or, with ``prefill_chunk``, riding on them (``mixed_step``). Per output
    token, the decode share is the plain decode step over the batch and the prefill share
    what the prompts add to the cycle, over the output."""
    hardware, model = catalog[run.hardware], models[run.model]
    if not hardware.specs.tdp_w:
        raise DataFileError("runs", f"{hardware.name} states no TDP", run.id, "hardware")
    params = WorkloadParams(**run.workload)
    batch, output = params.batch, max(1, round(run.output))
    decode_params = serving_decode_params(params, run.prompt, output)  # serve's: at prompt + output // 2
    decode = analyze(model, decode_params, hardware)
    prefill = analyze(model, replace(params, phase=Phase.PREFILL, batch=1, seq=run.prompt), hardware)
    p = expected_for(prefill)
    if p is None:
        raise DataFileError("runs", f"no expected time for {hardware.name}", run.id, "hardware")
    timing = Timing(model, decode_params, hardware, output, run.prompt, 0, p.time_s, None, run.prefill_chunk,
                    prefill=prefill)
    energy = timing.energy(batch, timing.times(batch)[2], run.output)
    if energy is None:
        raise DataFileError("runs", f"no expected time for {hardware.name}", run.id, "hardware")
    dt, pt = decode.totals, prefill.totals
    lower = energy.devices * (lower_bound_joules(float(dt.flops), float(dt.bytes)) / batch
                              + lower_bound_joules(float(pt.flops), float(pt.bytes)) / run.output)
    return Costed(run, energy, lower)


def fit_idle_share(costed: Sequence[Costed]) -> float:
    """The idle share (0–1, to 0.005) minimising the squared logarithms of the power
    model's ratios at the measured times (``Costed.power_ratio``)."""
    def loss(share: float) -> float:
        return sum(math.log(c.power_ratio(share)) ** 2 for c in costed)
    return min((i / 200 for i in range(201)), key=loss)


def held_out(costed: Sequence[Costed], key: Callable[[Costed], str],
             measure: Callable[[Costed, float], float] = Costed.ratio) -> dict[str, float]:
    """Each row's ``measure`` (``Costed.ratio``: the estimate's; or ``Costed.power_ratio``)
    at the idle share fitted without the rows of its ``key``, by id."""
    out: dict[str, float] = {}
    for group in sorted({key(c) for c in costed}):
        share = fit_idle_share([c for c in costed if key(c) != group])
        out.update({c.run.id: measure(c, share) for c in costed if key(c) == group})
    return out


def within(ratios: Sequence[float]) -> float:
    """The share of ``ratios`` within ``BAND``."""
    return sum(BAND[0] <= r <= BAND[1] for r in ratios) / len(ratios)


def by_device(c: Costed) -> str:
    return c.run.hardware


def by_source(c: Costed) -> str:
    return c.run.source_group


def markdown_table(costed: Sequence[Costed]) -> str:
    """A row a run: measured J/token; the estimate, its ratio in sample and held out by
    device; the power model's ratio at the measured time, held out by device; expected over
    measured time per token; the lower bound."""
    est, power = held_out(costed, by_device), held_out(costed, by_device, Costed.power_ratio)
    head = ("| run | measured J/token | estimate | estimate ÷ measured | held out by device | "
            "power model at the measured time ÷ measured, held out by device | expected ÷ measured time "
            "| lower bound |\n|---|---:|---:|---:|---:|---:|---:|---:|")
    rows = [f"| {c.run.id} | {c.run.joules_per_token:.3f} | {c.estimate():.3f} | {c.ratio():.2f} | "
            f"{est[c.run.id]:.2f} | {power[c.run.id]:.2f} | {c.time_ratio:.2f} | {c.lower_bound:.4f} |"
            for c in costed]
    return "\n".join([head, *rows])
