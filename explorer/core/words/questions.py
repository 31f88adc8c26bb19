"""Predict, measure, reveal: a scene step that asks a question before it shows its answer.

A step with ``question:`` shows the roofs and hides the answer; the room types its guesses
(numbers, in the question's unit), then the reveal shows the answer and how far each
guess was from it. The answer is a placeholder's field (``placeholders`` lists them), so it
is the same number the analysis draws and the caption states, with the claim behind it::

    question:
      ask: How many tokens per second at batch 64?
      answer: step/tokens-per-s        # or ID/bandwidth, ID/peak-fp32, step/crossing, …
      unit: tokens/s                   # what a typed guess is in (``UNITS``)
      measure: {suite: stream, kernel: triad, rate: bytes}   # optional: measured on reveal

Where the step names a measurement, the reveal runs that kernel on this machine and the
measured rate (the fastest trusted point of that kernel) is the answer the guesses are
judged against; without one (or where it cannot run) the analysis' answer is."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol

from explorer.core.files.datafile import Fields
from explorer.core.units import format_number

if TYPE_CHECKING:
    from explorer.core.hardware.hardware import Hardware
    from explorer.core.model.models import ModelSpec
    from explorer.core.words.claims import Claim
    from explorer.core.words.placeholder_context import Context
    from explorer.core.words.scenes import Scene

MAX_GUESSES = 30  # a show of hands, or the markers one chart can hold legibly
# What a guess is typed in: the unit's size in the answer's own unit (B/s, FLOP/s, …).
UNITS = {"B/s": 1.0, "GB/s": 1e9, "TB/s": 1e12, "FLOP/s": 1.0, "GFLOP/s": 1e9, "TFLOP/s": 1e12,
         "tokens/s": 1.0, "batch": 1.0, "×": 1.0, "s": 1.0, "ms": 1e-3}
CLOSE = 1.1  # a guess within 10 % of the answer is "about right"
# The number a claim gives (``Claim.numbers``), by the key its kind uses.
VALUE_KEYS = ("per_s", "crossing_batch", "max_batch", "time_s", "factor", "value")
SUFFIXES = {"k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}


class Rate(StrEnum):
    """Which rate of a measured kernel the answer is."""

    BYTES = "bytes"  # bytes per second (a bandwidth kernel, STREAM's byte counting)
    FLOPS = "flops"  # FLOP per second


@dataclass(frozen=True)
class Measure:
    """A kernel measured on this machine when the answer is revealed."""

    suite: str
    kernel: str
    rate: Rate


class Measured(Protocol):
    """A measured kernel point (``kernels.results.Point``; core does not import kernels)."""

    suite: str
    kernel: str
    check: str | None
    suspect: str | None
    contended: str | None

    @property
    def flops_per_s(self) -> float: ...

    @property
    def bytes_per_s(self) -> float: ...


@dataclass(frozen=True)
class Question:
    ask: str
    answer: str  # a placeholder's reference, without braces: "step/tokens-per-s"
    unit: str
    measure: Measure | None = None

    @property
    def scale(self) -> float:
        return UNITS[self.unit]

    def shown(self, value: float) -> str:
        """``value`` (in the answer's own unit) written in the question's unit: "45 GB/s",
        "40.3×", "batch 326"."""
        number = format_number(value / self.scale)
        if self.unit == "×":
            return f"{number}×"
        return f"batch {number}" if self.unit == "batch" else f"{number} {self.unit}"


@dataclass(frozen=True)
class Answer:
    value: float  # in the answer's own unit (B/s, FLOP/s, tokens/s, a batch, a factor)
    text: str  # as a caption writes it
    claims: tuple[Claim, ...]  # the checked claims behind it (none for a datasheet figure)
    source: str  # where it comes from: "the analysis", "the datasheet", "measured: …"


def read_question(f: Fields) -> Question:
    """A step's ``question:`` mapping."""
    unit = f.text("unit", choices=UNITS)
    measure = None
    if f.has("measure"):
        m = f.child(f.mapping("measure"), "measure")
        measure = Measure(m.text("suite"), m.text("kernel"), Rate(m.text("rate", choices=tuple(Rate))))
        m.finish()
    question = Question(f.text("ask"), f.text("answer"), unit, measure)
    if "{" in question.answer or "}" in question.answer:
        raise f.error("answer", "a placeholder's reference without braces, such as step/tokens-per-s")
    f.finish()
    return question


def _value(claim: Claim) -> float | None:
    numbers = claim.numbers()
    for key in VALUE_KEYS:
        value = numbers.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    return None


def answer_in(question: Question, ctx: Context) -> Answer:
    """The analysis' (or the catalogue's) answer to ``question`` in ``ctx`` (KeyError where
    the reference cannot be filled or gives no number)."""
    from explorer.core.words.catalogue_claims import catalogue_field
    from explorer.core.words.placeholders import fill_with_claims

    reference = question.answer
    text, claims = fill_with_claims(f"{{{reference}}}", ctx)
    value = next((v for v in map(_value, claims) if v is not None), None)
    source = "the analysis"
    if value is None and "/" in reference and not reference.startswith(("step/", "op:", "role:")):
        value, _ = catalogue_field(ctx, reference)  # a datasheet figure (bandwidth, a peak)
        source = "the datasheet"
    if value is None or not math.isfinite(value) or value <= 0:
        raise KeyError(f"{{{reference}}} gives no positive number to answer with")
    return Answer(value, text, tuple(claims), source)


def answer_at(scene: Scene, step: int, catalog: Mapping[str, Hardware],
              models: Mapping[str, ModelSpec]) -> Answer:
    """The answer to step ``step``'s question, computed as its caption is (``Scene.explain_step``)."""
    from explorer.core.words.placeholder_context import Context

    question = scene.steps[step].question
    if question is None:
        raise ValueError(f"step {step + 1} of {scene.id!r} asks no question")
    state = scene.state_at(step, catalog, models)
    previous = scene.state_at(step - 1, catalog, models) if step > 0 else None
    return answer_in(question, Context(catalog, models, state, previous))


def measured_answer(question: Question, points: Iterable[Measured],
                    where: str = "this machine") -> Answer | None:
    """The fastest trusted point of the question's measured kernel as its answer (None: the
    question measures nothing, or no trusted point of that kernel was measured)."""
    m = question.measure
    if m is None:
        return None
    rated = [(p.bytes_per_s if m.rate == Rate.BYTES else p.flops_per_s, p) for p in points
             if p.suite == m.suite and p.kernel == m.kernel and p.check is None and p.suspect is None]
    rated = [(r, p) for r, p in rated if r > 0]
    if not rated:
        return None
    value, best = max(rated, key=lambda pair: pair[0])
    busy = "; other programs were busy, so it may be low" if best.contended else ""
    return Answer(value, question.shown(value), (), f"measured on {where} ({m.suite} {m.kernel}{busy})")


def parse_guess(text: str, question: Question) -> float:
    """A typed guess in the question's unit ("1,200", "1.2k", "3e3", "45 GB/s") as a number
    in the answer's own unit; ValueError for anything else or a guess not above zero."""
    cleaned = text.strip().replace(",", "").replace("_", "")
    if cleaned.endswith(question.unit):
        cleaned = cleaned[: -len(question.unit)].strip()
    match = re.fullmatch(r"([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([kKmMgGtT]?)[x×]?", cleaned)
    if match is None:
        raise ValueError(f"a guess is a number in {question.unit}, such as 1200 or 1.2k; got {text!r}")
    value = float(match.group(1)) * SUFFIXES.get(match.group(2).lower(), 1.0)
    if not math.isfinite(value) or value <= 0:
        raise ValueError("a guess must be above zero (the chart's axes are logarithmic)")
    return value * question.scale


def verdict(guess: float, answer: float) -> str:
    """How far ``guess`` was from ``answer``: "about right", "2.5× too low", "40× too high"."""
    ratio = guess / answer
    if 1 / CLOSE <= ratio <= CLOSE:
        return "about right"
    factor = ratio if ratio > 1 else 1 / ratio
    return f"{format_number(factor, 2)}× too {'high' if ratio > 1 else 'low'}"


@dataclass(frozen=True)
class Spread:
    """Several guesses as a spread: how many, the lowest, the median and the highest."""

    count: int
    low: float
    median: float
    high: float

    @classmethod
    def of(cls, guesses: Sequence[float]) -> Spread:
        if not guesses:
            raise ValueError("no guesses")
        import statistics  # (not at start-up: it imports decimal and fractions)

        return cls(len(guesses), min(guesses), float(statistics.median(guesses)), max(guesses))

    def describe(self, question: Question) -> str:
        if self.count == 1:
            return f"1 guess: {question.shown(self.low)}"
        return (f"{self.count} guesses from {question.shown(self.low)} to {question.shown(self.high)}, "
                f"median {question.shown(self.median)}")


def judged(question: Question, guesses: Sequence[float], answer: Answer) -> str:
    """The reveal in words: the answer, where it comes from, and how the guesses did."""
    head = f"Answer: {question.shown(answer.value)} ({answer.source})."
    if not guesses:
        return head
    spread = Spread.of(guesses)
    best = min(guesses, key=lambda g: abs(math.log(g / answer.value)))
    close = sum(1 / CLOSE <= g / answer.value <= CLOSE for g in guesses)
    if spread.count == 1:
        return f"{head} The guess, {question.shown(best)}, was {verdict(best, answer.value)}."
    return (f"{head} {spread.describe(question)}: the median was {verdict(spread.median, answer.value)}, "
            f"the closest ({question.shown(best)}) {verdict(best, answer.value)}; "
            f"{close} of {spread.count} within {round((CLOSE - 1) * 100)} %.")


def guess_key(scene_id: str, step: int) -> str:
    """Where a session keeps a question's guesses: the scene's id and the step, from 1."""
    return f"{scene_id}/{step + 1}"
