"""Fitting ``engine_terms`` to published runs, and testing the fit on runs it never saw.

Each run's expected time is linear in the terms: its kernel model's time (``expected``),
plus (factor − 1) × its seconds in each ``FitClass``, plus each engine term × its units
(steps, requests × steps, kernels). The fit minimises the runs' squared relative error,
each source weighted by the square root of its runs (a source of ten runs counts about three
times one of a single run, not ten), every term at least its neutral value (no factor below
1, no negative cost) and held towards it by a small ridge, so a term the runs do not
determine stays near neutral:

1. the class factors and a pooled engine (``typical``) over every run;
2. each engine's terms over its own runs, the factors fixed, held towards ``typical``'s.

``held_out`` predicts each source's runs with terms fitted without that source (an engine
whose runs all come from it falls back to ``typical``), the figure ``validate`` heads with.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from explorer.core.analysis.engine_terms import (
    AIM,
    SCHEMA,
    TERM_SCALE,
    TYPICAL,
    EngineFit,
    EngineTerm,
    FitClass,
    KindTerms,
    RunTerms,
)
from explorer.core.hardware.hardware import DeviceKind
from explorer.core.model.applicability import Phase

CLASS_RIDGE = 0.05  # per factor, against (factor − 1)
TERM_RIDGE = 0.01  # per engine term, against (term − its neutral value) / TERM_TYPICAL
TERM_TYPICAL = {EngineTerm.STEP: 1.0, EngineTerm.SEQUENCE: 20.0, EngineTerm.KERNEL: 5.0,
                EngineTerm.COLLECTIVE: 20.0, EngineTerm.RANK: 100.0}  # ms, µs, µs, µs, µs
# Huber's weight in log scale: a run still more than this far (log of expected ÷ measured)
# from its prediction counts as if it were this far, so a few runs that no factor of the
# kernel model can explain (an engine that leaves a device's matrix units idle runs a prompt
# at 0.3–13 % of their roof, Intel's LLM Runtime on a Xeon 8480) do not set every factor of
# their kind; log 1.5: the band the expected time aims at is 0.8–1.25.
HUBER = math.log(1.5)
BAND_PERCENTILES = (5.0, 95.0)
WIDEN = 2.0  # a family with no runs of its own: twice the band's width in log scale
COLUMNS = (*[c.value for c in FitClass], *[t.value for t in EngineTerm])


@dataclass(frozen=True)
class RunRow:
    """One run as the fit sees it: what each term multiplies, summed over its steps."""

    id: str
    group: str  # its source: runs of one source are held out together
    engine: str
    phase: Phase  # its step's (a whole request: decode)
    family: str  # its device's efficiency family
    hardware: str  # its device's catalogue id
    kind: DeviceKind  # its device's: GPUs and CPUs are fitted apart
    measured_s: float
    bound_s: float
    base_s: float  # the kernel model's expected time
    units: dict[str, float]  # by column: a class's seconds, a term's units


def nnls(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """x ≥ 0 minimising |a x − b| (Lawson and Hanson's active set method)."""
    norms = np.linalg.norm(a, axis=0)
    norms[norms == 0] = 1.0
    a = a / norms
    n = a.shape[1]
    x, free = np.zeros(n), np.zeros(n, dtype=bool)
    for _ in range(3 * n + 3):
        gradient = a.T @ (b - a @ x)
        if free.all() or np.max(np.where(free, -np.inf, gradient)) <= 1e-12:
            break
        free[int(np.argmax(np.where(free, -np.inf, gradient)))] = True
        while True:
            z = np.zeros(n)
            z[free] = np.linalg.lstsq(a[:, free], b, rcond=None)[0]
            if np.all(z[free] > 0):
                x = z
                break
            leaving = free & (z <= 0)
            step = np.min(x[leaving] / (x[leaving] - z[leaving]))
            x = x + step * (z - x)
            free &= x > 1e-15
    return np.asarray(x / norms, dtype=np.float64)


def _weights(rows: Sequence[RunRow]) -> NDArray[np.float64]:
    size: dict[str, int] = defaultdict(int)
    for r in rows:
        size[r.group] += 1
    return np.array([1.0 / math.sqrt(size[r.group]) for r in rows])


Column = tuple[str, str | None]  # a class or a term, and the engine it is for (None: every run's)


def _solve(rows: Sequence[RunRow], columns: Sequence[Column],
           prior: dict[Column, float]) -> dict[Column, float]:
    """The values ≥ 0 of ``columns`` (seconds a unit; a class's: its factor − 1) minimising
    the rows' weighted error in log scale (Gauss–Newton: each pass weighs a row's error by
    its last prediction), each held towards its ``prior`` value (else 0) by the ridge."""
    w = _weights(rows)
    units = np.array([[r.units[name] if engine is None or r.engine == engine else 0.0
                       for name, engine in columns] for r in rows])
    base = np.array([r.base_s for r in rows])
    measured = np.array([r.measured_s for r in rows])
    ridge = np.diag([math.sqrt(_ridge(name)) for name, _ in columns])
    target = ridge @ np.array([prior.get(c, 0.0) for c in columns])
    x, scale, robust = np.zeros(len(columns)), measured, np.ones(len(rows))
    for _ in range(8):
        a = units / scale[:, None] * (w * robust)[:, None]
        b = (measured - base) / scale * w * robust
        x = nnls(np.vstack([a, ridge]), np.concatenate([b, target]))
        scale = np.maximum(base + units @ x, 1e-12)
        miss = np.abs(np.log(scale / measured))
        robust = np.minimum(1.0, HUBER / np.maximum(miss, 1e-12))
    return {c: float(v) for c, v in zip(columns, x, strict=True)}


def _ridge(column: str) -> float:
    if column in FitClass.__members__.values():
        return CLASS_RIDGE
    term = EngineTerm(column)
    return TERM_RIDGE / (TERM_TYPICAL[term] * TERM_SCALE[term]) ** 2


def _term_seconds(terms: dict[EngineTerm, float]) -> dict[str, float]:
    return {t.value: v * TERM_SCALE[t] for t, v in terms.items()}


@dataclass(frozen=True)
class Terms:
    """Which terms a fit may move (the others stay neutral): to see which closed which gap."""

    classes: bool = True
    engines: bool = True


ALL = Terms()


def fit(rows: Sequence[RunRow], which: Terms = ALL) -> tuple[dict[FitClass, float], dict[str, EngineFit]]:
    """The class factors and each engine's terms fitted to ``rows``: first every run with one
    engine's terms (``typical``'s), then the factors again with each engine's own terms,
    held towards ``typical``'s. ``which``: the terms the fit may move."""
    classes: list[Column] = [(c.value, None) for c in FitClass] if which.classes else []
    shared: list[Column] = [(t.value, None) for t in EngineTerm] if which.engines else []
    pooled = _solve(rows, classes + shared, {}) if classes + shared else {}
    typical = {t: pooled.get((t.value, None), 0.0) / TERM_SCALE[t] for t in EngineTerm}
    engines = {TYPICAL: EngineFit(TYPICAL, typical, len(rows), tuple(sorted({r.group for r in rows})))}
    named = sorted({r.engine for r in rows} - {TYPICAL})
    own: list[Column] = [(t.value, e) for e in named for t in EngineTerm] if which.engines else []
    # a run that names no engine keeps typical's terms: they count as its own, fixed
    typical_rows = [replace(r, base_s=r.base_s + sum(pooled[(t, None)] * r.units[t] for t, _ in shared))
                    if r.engine == TYPICAL else r for r in rows]
    joint = _solve(typical_rows, classes + own, {(t, e): pooled[(t, None)] for t, e in own}) \
        if classes + own else {}
    factors = {c: 1.0 + joint.get((c.value, None), 0.0) for c in FitClass}
    for e in named:
        mine = [r for r in rows if r.engine == e]
        engines[e] = EngineFit(e, {t: joint.get((t.value, e), 0.0) / TERM_SCALE[t] for t in EngineTerm},
                               len(mine), tuple(sorted({r.group for r in mine})))
    return factors, engines


def predict(row: RunRow, factors: dict[FitClass, float], engines: dict[str, EngineFit]) -> float:
    """``row``'s expected time with these terms."""
    engine = engines.get(row.engine) or engines[TYPICAL]
    extra = sum((factors[c] - 1.0) * row.units[c.value] for c in FitClass)
    return row.base_s + extra + sum(v * row.units[t] for t, v in _term_seconds(engine.terms).items())


@dataclass(frozen=True)
class HeldOut:
    """A run predicted with terms fitted without its source, and the band around it."""

    row: RunRow
    expected_s: float
    low_s: float  # the band, its width from the other sources' held-out errors
    high_s: float

    @property
    def ratio(self) -> float:
        return self.expected_s / self.row.measured_s

    @property
    def covered(self) -> bool:
        return self.low_s <= self.row.measured_s <= self.high_s


def held_out(rows: Sequence[RunRow], which: Terms = ALL) -> list[HeldOut]:
    """Every run predicted with the terms fitted without its source (on its kind of device);
    its band from the held-out errors of the other sources' runs of its kind (``band_of``).
    ``which``: the terms the fits may move."""
    predicted: dict[str, float] = {}
    for kind in {r.kind for r in rows}:
        mine = [r for r in rows if r.kind == kind]
        for g in sorted({r.group for r in mine}):
            rest = [r for r in mine if r.group != g]
            factors, engines = fit(rest, which) if rest else ({c: 1.0 for c in FitClass}, _neutral_engines())
            for r in mine:
                if r.group == g:
                    predicted[r.id] = predict(r, factors, engines)
    ratios = {r.id: predicted[r.id] / r.measured_s for r in rows}
    out = []
    for r in rows:
        others = [(o.group, ratios[o.id]) for o in rows if o.kind == r.kind and o.group != r.group]
        low, high = band_of(others)
        expected = predicted[r.id]
        out.append(HeldOut(r, expected, expected / max(high, 1.0), expected / min(low, 1.0)))
    return out


def _neutral_engines() -> dict[str, EngineFit]:
    return {TYPICAL: EngineFit(TYPICAL, {t: 0.0 for t in EngineTerm}, 0)}


def band_of(ratios: Sequence[tuple[str, float]]) -> tuple[float, float]:
    """The ``BAND_PERCENTILES`` of held-out expected ÷ measured, given as (source, ratio),
    each source's runs together weighing as one (a source of ten runs counts as much as one
    of a single run, not ten times), every phase together: each run at the middle of its
    weight (Hazen's plotting position), linear in log scale between them.

    The errors cluster by source (an engine's release, a machine's set-up), and a user's run
    is a new source: percentiles over runs let the sources with many runs set the band, and
    split by phase each holds too few sources for a 5th and 95th percentile. What the band
    held, against a band by phase over runs: docs/validation.md, "The band" (tested)."""
    if not ratios:
        return 1.0, 1.0
    size: dict[str, int] = defaultdict(int)
    for group, _ in ratios:
        size[group] += 1
    logs = np.array([math.log(v) for _, v in ratios])
    weights = np.array([1.0 / size[group] for group, _ in ratios])
    order = np.argsort(logs)
    logs, weights = logs[order], weights[order]
    # each run at the middle of its weight (Hazen's plotting position), between them linear
    at = (np.cumsum(weights) - weights / 2) / weights.sum()
    low, high = (math.exp(float(np.interp(p / 100, at, logs))) for p in BAND_PERCENTILES)
    return low, high


def ceiling(rows: Sequence[RunRow], cell: Callable[[RunRow], Hashable], band: tuple[float, float]) -> int:
    """How many of ``rows`` (one kind of device) would lie within ``band`` (expected ÷
    measured) were each cell's runs (``cell``: their key, a device, say) given the one factor
    that puts most of them there, chosen knowing their measured times, on top of the fit to
    every run: no factor per cell on top of that fit, however chosen, places more. (A cell
    of one run is always placed.)"""
    if not rows:
        return 0
    factors, engines = fit(rows)
    width = math.log(band[1] / band[0])
    cells: dict[Hashable, list[float]] = defaultdict(list)
    for r in rows:
        cells[cell(r)].append(math.log(predict(r, factors, engines) / r.measured_s))
    return sum(_most_within(logs, width) for logs in cells.values())


def _most_within(values: Sequence[float], width: float) -> int:
    """The most of ``values`` one interval ``width`` long holds (its ends included)."""
    ordered, start, most = sorted(values), 0, 0
    for end, v in enumerate(ordered):
        while v - ordered[start] > width * (1 + 1e-12):
            start += 1
        most = max(most, end - start + 1)
    return most


def terms_of(rows: Sequence[RunRow], origin: str = "") -> RunTerms:
    """The terms to ship: for each kind of device, fitted to its runs, its band from the
    held-out runs (``band_of``), the share of them it held and the share whose expected time
    fell within ``AIM``."""
    held = held_out(rows)
    kinds = {}
    for kind in sorted({r.kind for r in rows}):
        mine = [r for r in rows if r.kind == kind]
        factors, engines = fit(mine)
        theirs = [h for h in held if h.row.kind == kind]
        band = band_of([(h.row.group, h.ratio) for h in theirs])
        kinds[kind] = KindTerms(factors, engines, band, len(mine), len({r.group for r in mine}),
                                sum(h.covered for h in theirs) / len(theirs),
                                sum(AIM[0] <= h.ratio <= AIM[1] for h in theirs) / len(theirs))
    return RunTerms(kinds, WIDEN, frozenset(r.hardware for r in rows), origin)


HEADER = """\
# What whole runs pay beyond their kernels' microbenchmarks (explorer/core/analysis/engine_terms.py
# says what each term means), fitted to the published runs of
# resources/validation/published-runs.yaml by explorer/core/analysis/run_fit.py. Generated:
# do not edit; `python -m tests.core.test_engine_terms --write` writes it again after the runs
# or the model change, and the tests check it is the fit of today's runs.
"""


def terms_yaml(terms: RunTerms) -> str:
    """``terms`` as ``engines.yaml`` holds them (values to 4 significant digits)."""
    from explorer.core.files.datafile import dump_yaml

    def g(value: float) -> float:
        return float(f"{value:.4g}")

    data = {
        "schema": SCHEMA,
        "widen": terms.widen,
        "validated_devices": sorted(terms.validated),
        "kinds": [{
            "kind": kind.value,
            "runs": k.runs,
            "sources": k.sources,
            "classes": {c.value: g(v) for c, v in k.classes.items()},
            "engines": [{"id": e.id, **{t.value: g(v) for t, v in e.terms.items()}, "runs": e.runs,
                         "sources": list(e.sources)} for e in k.engines.values()],
            "band": [g(k.band[0]), g(k.band[1])],
            "band_held": g(k.held),
            "within": g(k.within),
        } for kind, k in terms.kinds.items()],
    }
    return HEADER + dump_yaml(data, sort_keys=False, allow_unicode=True)
