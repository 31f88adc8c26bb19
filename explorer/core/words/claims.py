"""Claims: the facts behind every sentence that states a number or a direction.

A sentence shown to a user (Explain, the design lab, a scene caption, a "why" paragraph)
is produced together with the claims it makes: "2.0× faster", "compute-bound from batch
213 on", "the largest batch that fits is 1,844". Each claim

- renders the words that state it (``phrase``), so the sentence says what was claimed;
- checks itself against an independent recomputation (``check``): the analysis of the
  state it is about, run again at the batches it names, or the catalogue.

``sentences.verify(text, claims)`` checks a sentence against its claims.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from explorer.core.analysis.analysis import Analysis, analyze
from explorer.core.analysis.roofline import COMMUNICATION, COMPUTE, MEMORY, BoundKind, Ceilings
from explorer.core.hardware.hardware import Hardware
from explorer.core.model.models import ModelSpec
from explorer.core.model.profile import Profile
from explorer.core.model.workload import WorkloadParams
from explorer.core.units import format_time

SAME = 0.01  # within 1 %, a time "does not move"
EXACT = 1e-9


@lru_cache(maxsize=512)
def _analysis(model: ModelSpec, params: WorkloadParams, hardware: Hardware) -> Analysis:
    return analyze(model, params, hardware)


@dataclass(frozen=True)
class State:
    """What a claim is about: a model's step under its parameters on one device (what-ifs
    applied to the device)."""

    model: ModelSpec
    params: WorkloadParams
    hardware: Hardware
    profile: Profile | None = None  # a real run of the step, shown beside it (``profile_claims``)

    def analysis(self) -> Analysis:
        return _analysis(self.model, self.params, self.hardware)

    def at(self, **changes: Any) -> State:
        return replace(self, params=replace(self.params, **changes))

    def describe(self) -> str:
        p = self.params
        return f"{self.model.name}, {p.phase}, batch {p.batch:,}, {p.dtype}, on {self.hardware.name}"


def _op_index(a: Analysis, op: str) -> int:
    for i, o in enumerate(a.ops):
        if o.name == op:
            return i
    raise KeyError(f"{a.model.name} has no op {op!r}")


def is_compute_bound(state: State, op: str | None = None) -> bool:
    """Recomputed from the analysis's own times: arithmetic at least as long as the bytes."""
    a = state.analysis()
    if op is None:
        return a.totals.compute_time_s >= a.totals.memory_time_s
    i = _op_index(a, op)
    return float(a.flops[i] / a.peaks[i]) >= float(a.bytes[i] / a.roofs.bandwidth_bytes_per_s)


def recomputed_bound(state: State, op: str | None = None) -> BoundKind:
    """"communication" for an op that crosses a link, or a step whose communication ops take
    longer than its arithmetic and its memory traffic (summed here from the ops); else
    "compute" or "memory" as ``is_compute_bound`` finds."""
    a = state.analysis()
    if op is not None:
        if a.links[_op_index(a, op)] is not None:
            return COMMUNICATION
    else:
        talking = sum(float(c * t) for c, t, link in zip(a.counts, a.time_s, a.links, strict=True)
                      if link is not None)
        others = [(float(c * f / p), float(c * b / a.roofs.bandwidth_bytes_per_s))
                  for c, f, p, b, link in zip(a.counts, a.flops, a.peaks, a.bytes, a.links, strict=True)
                  if link is None]
        if talking > max(sum(x for x, _ in others), sum(y for _, y in others)):
            return COMMUNICATION
    return COMPUTE if is_compute_bound(state, op) else MEMORY


def times(factor: float) -> str:
    """"16×", "2.0×", "1.04×": whole from 10, one decimal from 1.1, two below."""
    if factor >= 9.95:
        return f"{factor:.0f}×"
    return f"{factor:.1f}×" if factor >= 1.095 else f"{factor:.2f}×"


def _close(a: float, b: float, rel: float = EXACT) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=0.0)


class Claim:
    """One checkable fact. ``phrase`` is how a sentence states it."""

    kind = "claim"

    @property
    def phrase(self) -> str:
        return ""

    def check(self) -> str | None:  # pragma: no cover - every kind overrides it
        raise NotImplementedError

    def numbers(self) -> dict[str, float | int | str | None]:
        return {}

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "phrase": self.phrase, **self.numbers()}


@dataclass(frozen=True)
class Bound(Claim):
    """The step (or one op) is memory- or compute-bound."""

    state: State
    bound: BoundKind
    op: str | None = None
    kind = "bound"

    @classmethod
    def of(cls, state: State) -> Bound:
        """The step's bound as the analysis reports it."""
        return cls(state, state.analysis().totals.bound)

    @property
    def phrase(self) -> str:
        return f"{self.bound}-bound"

    def check(self) -> str | None:
        actual = recomputed_bound(self.state, self.op)
        if actual != self.bound:
            return (f"{self.op or 'the step'} is {actual}-bound, not {self.bound}-bound "
                    f"({self.state.describe()})")
        return None

    def numbers(self) -> dict[str, float | int | str | None]:
        return {"bound": self.bound, "op": self.op}


@dataclass(frozen=True)
class Faster(Claim):
    """``after`` runs the step ``factor`` times faster than ``before`` (below 1: slower)."""

    before: State
    after: State
    factor: float  # time before / time after
    kind = "faster"

    @property
    def word(self) -> str:
        if abs(self.factor - 1) < SAME:
            return "unchanged"
        return "faster" if self.factor > 1 else "slower"

    @property
    def phrase(self) -> str:
        """"2.0× faster", "7.1× slower"; a change under 10 % in percent ("3% slower"); under
        1 %, "no faster"."""
        if self.word == "unchanged":
            return "no faster"
        ratio = self.factor if self.word == "faster" else 1 / self.factor
        amount = f"{ratio - 1:.0%}" if ratio < 1.095 else times(ratio)
        return f"{amount} {self.word}"

    def check(self) -> str | None:
        actual = self.before.analysis().totals.time_s / self.after.analysis().totals.time_s
        if not _close(actual, self.factor, 1e-6):
            return f"the time ratio is {actual:.4g}, not {self.factor:.4g}"
        return None

    def numbers(self) -> dict[str, float | int | str | None]:
        return {"factor": self.factor, "time_before_s": self.before.analysis().totals.time_s,
                "time_after_s": self.after.analysis().totals.time_s}


def faster(before: State, after: State) -> Faster:
    return Faster(before, after, before.analysis().totals.time_s / after.analysis().totals.time_s)


@dataclass(frozen=True)
class Fits(Claim):
    state: State
    fits: bool
    kind = "fits"

    @property
    def phrase(self) -> str:
        return "fits" if self.fits else "does not fit"

    def check(self) -> str | None:
        actual = self.state.analysis().totals.fits_in_memory
        return None if actual == self.fits else f"the step {'fits' if actual else 'does not fit'}"

    def numbers(self) -> dict[str, float | int | str | None]:
        t = self.state.analysis().totals
        return {"fits": self.fits, "required_bytes": t.memory_required_bytes,
                "budget_bytes": t.memory_budget_bytes}


@dataclass(frozen=True)
class StepTime(Claim):
    state: State
    time_s: float
    kind = "time"

    @property
    def phrase(self) -> str:
        return format_time(self.time_s)

    def check(self) -> str | None:
        actual = self.state.analysis().totals.time_s
        return None if _close(actual, self.time_s) else f"the step takes {format_time(actual)}"

    def numbers(self) -> dict[str, float | int | str | None]:
        return {"time_s": self.time_s}


def step_time(state: State) -> StepTime:
    return StepTime(state, state.analysis().totals.time_s)


@dataclass(frozen=True)
class Throughput(Claim):
    state: State
    per_s: float
    kind = "throughput"

    @property
    def phrase(self) -> str:
        return f"{self.per_s:,.0f} {self.state.model.item_unit}/s"

    def check(self) -> str | None:
        actual = self.state.analysis().totals.tokens_per_s
        return None if _close(actual, self.per_s) else f"throughput is {actual:,.0f}, not {self.per_s:,.0f}"

    def numbers(self) -> dict[str, float | int | str | None]:
        return {"batch": self.state.params.batch, "per_s": self.per_s}


def throughput(state: State) -> Throughput:
    return Throughput(state, state.analysis().totals.tokens_per_s)


@dataclass(frozen=True)
class Direction(Claim):
    """A declared comparison: ``after`` is "faster", "slower" or "unchanged" against ``before``
    (within 1 %). Unlike ``Faster`` it carries no number; a scene's ``check`` declares it."""

    before: State
    after: State
    word: str
    kind = "faster"

    def check(self) -> str | None:
        actual = faster(self.before, self.after)
        return None if actual.word == self.word else f"the step is {actual.phrase}, not {self.word}"

    def numbers(self) -> dict[str, float | int | str | None]:
        return {"expected": self.word}


@dataclass(frozen=True)
class OpsBound(Claim):
    """Ops chosen by name or role are ``bound``-bound: all of them, or most (more than half)."""

    state: State
    select: str  # an op name, role:ROLE, or all (every op that computes)
    bound: str
    most: bool = False
    kind = "bound"

    def ops(self) -> list[str]:
        a = self.state.analysis()
        if self.select == "all":
            return [o.name for o, flops in zip(a.ops, a.flops, strict=True) if flops > 0]
        if self.select.startswith("role:"):
            role = self.select.removeprefix("role:")
            return [o.name for o, flops in zip(a.ops, a.flops, strict=True) if o.role == role and flops > 0]
        return [self.select]

    def check(self) -> str | None:
        names = self.ops()
        if not names:
            return f"{self.state.model.name} has no ops for {self.select!r}"
        known = {o.name for o in self.state.analysis().ops}
        if missing := [n for n in names if n not in known]:
            return f"{self.state.model.name} has no op {missing[0]!r} ({self.state.describe()})"
        hits = [n for n in names if is_compute_bound(self.state, n) == (self.bound == COMPUTE)]
        share = len(hits) / len(names)
        if (share > 0.5) if self.most else (share == 1):
            return None
        return (f"{len(hits)} of {len(names)} ops for {self.select!r} are {self.bound}-bound, "
                f"not {'most' if self.most else 'all'} ({self.state.describe()})")

    def numbers(self) -> dict[str, float | int | str | None]:
        return {"select": self.select, "bound": self.bound, "most": self.most}


@dataclass(frozen=True)
class Ridge(Claim):
    """A ridge point as the chart draws it: compute roof ``label`` over main memory."""

    hardware: Hardware
    label: str
    value: float
    kind = "ridge"

    @property
    def phrase(self) -> str:
        from explorer.core.units import format_number

        return f"{format_number(self.value)} FLOP/byte"

    def check(self) -> str | None:
        ceilings = Ceilings.from_hardware(self.hardware)
        for i, roof in enumerate(ceilings.compute):
            if roof.label == self.label:
                drawn = float(ceilings.ridges()[i, 0])
                return None if _close(drawn, self.value) else f"the chart's {self.label} ridge is {drawn:.4g}"
        return f"the chart draws no {self.label} roof for {self.hardware.name}"

    def numbers(self) -> dict[str, float | int | str | None]:
        return {"roof": self.label, "ridge": self.value}


@dataclass(frozen=True)
class Quantity(Claim):
    """A number recomputed by an independent route (the catalogue, Little's law): ``value``
    must equal ``recompute()``; ``text`` is how the sentence writes it."""

    name: str
    value: float
    text: str
    recompute: Callable[[], float] = field(compare=False, repr=False)
    rel: float = 1e-6
    kind = "quantity"

    @property
    def phrase(self) -> str:
        return self.text

    def check(self) -> str | None:
        actual = self.recompute()
        if _close(actual, self.value, self.rel):
            return None
        return f"{self.name} is {actual:.6g}, not {self.value:.6g}"

    def numbers(self) -> dict[str, float | int | str | None]:
        return {"name": self.name, "value": self.value}


# What a placeholder's field yields beside its text: one claim, several, or none to check.
Found = Claim | list[Claim] | None
