"""What a whole run pays beyond its kernels as microbenchmarks measure them: terms fitted to
published runs, and the band a measured time is expected in.

The expected time of ``expected.expected`` runs each kernel at the share of the roofs a
microbenchmark of its kind reaches (``hardware.efficiency``). Real runs are slower than
that, always in one direction (docs/validation.md): an engine's kernels meet shapes the
microbenchmarks do not (a mixture of experts' grouped products with a few rows an expert,
attention over a long cache at a large batch), and an engine's host does work for every
step, request and kernel. ``run_fit`` fits those costs to the published runs of
``resources/validation/published-runs.yaml`` and writes them to
``resources/efficiency/engines.yaml``:

- a factor for each class of kernel (``FitClass``), at least 1: how much longer that class
  takes in whole runs than its microbenchmark's share says;
- for each engine (the ``engine`` workload parameter), its host's milliseconds a step,
  microseconds a request a step and microseconds a kernel, and the microseconds each
  collective costs beyond its modelled time (engines run their own all-reduces, or NCCL's,
  in or out of a captured graph), and the microseconds an inference step costs for each
  device of the model beyond the first (``rank_us``: an engine whose driver process hands
  every step's inputs to one worker process per further GPU pays it on each step's critical
  path; vLLM before 0.6 broadcast a tensor dictionary from its driver to the other workers
  at the start of each decoding step, vllm-project/vllm#5792; its successor's executor
  still "broadcasts the scheduler output to the workers", over shared memory,
  vllm-project/vllm#9856, so ``typical`` carries the term too);
  ``typical`` is the fit over every engine's runs together,
  and stands in for an engine with no runs of its own;
- the band: the 5th and 95th percentiles of expected ÷ measured over runs predicted with
  terms fitted without their source (leave-one-source-out), each source weighing as one,
  every phase together (``run_fit.band_of`` says why); wider (``widen`` times in log scale)
  for a device with no published run of its own.

GPUs and CPUs are fitted apart (``KindTerms``): their kernels, libraries and engines share
nothing a factor could carry.

Every term only adds time, so the expected time stays at or above the bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from enum import StrEnum
from functools import lru_cache
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from explorer.core.analysis.analysis import Analysis
from explorer.core.analysis.expected import Expected, OpClass, launches, op_class, products_peak
from explorer.core.analysis.terms import once_per_step, step_total
from explorer.core.files.datafile import Fields
from explorer.core.hardware.efficiency import Source
from explorer.core.hardware.hardware import DeviceKind, Hardware, kind_label
from explorer.core.model import ops as op
from explorer.core.model import training
from explorer.core.model.applicability import Phase
from explorer.paths import resource_path

# 3: the share of held-out runs within AIM; 2: one band a kind, every phase together; 1: a band a phase
SCHEMA = 3
AIM = (0.8, 1.25)  # where an expected time aims to fall: expected ÷ measured
TYPICAL = "typical"  # the fit over every engine's runs: the default engine
EXPERT_ROLES = frozenset({op.Role.EXPERT_UP, op.Role.EXPERT_DOWN})


class FitClass(StrEnum):
    """The classes of kernel a whole run's factor is fitted for."""

    DENSE = "dense products"  # on matrix units (tensor cores, AMX)
    VECTOR = "products on vector units"  # a precision the device (or its engine) has no matrix unit for
    QUANTIZED = "int8 products on vector units"  # quantized dot products: each block rescaled in fp32
    WEIGHTS = "weight-bound products"  # the reading of a product's bytes (``class_seconds``)
    EXPERT = "expert products"
    ATTENTION = "attention"
    MEMORY = "memory-bound kernels"
    LINK = "communication"


class EngineTerm(StrEnum):
    """An engine's host costs: what each unit of its work adds."""

    STEP = "step_ms"  # each step
    SEQUENCE = "sequence_us"  # each request (sequence) in each inference step
    KERNEL = "kernel_us"  # each kernel launched
    COLLECTIVE = "collective_us"  # each collective across devices (an all-reduce's latency)
    RANK = "rank_us"  # each inference step, for each device of the model beyond the first


TERM_SCALE = {EngineTerm.STEP: 1e-3, EngineTerm.SEQUENCE: 1e-6, EngineTerm.KERNEL: 1e-6,
              EngineTerm.COLLECTIVE: 1e-6, EngineTerm.RANK: 1e-6}  # to seconds


@dataclass(frozen=True)
class EngineFit:
    """One engine's fitted host costs and the runs behind them."""

    id: str
    terms: dict[EngineTerm, float]
    runs: int  # of its own (0: ``typical``'s stand in)
    sources: tuple[str, ...] = ()


@dataclass(frozen=True)
class KindTerms:
    """The terms fitted to the runs on one kind of device (GPUs, CPUs): their kernels and
    engines differ too much to share a factor."""

    classes: dict[FitClass, float]
    engines: dict[str, EngineFit]
    band: tuple[float, float]  # expected ÷ measured: 5th and 95th percentiles, held out (``run_fit.band_of``)
    runs: int  # fitted to
    sources: int
    held: float  # the share of its runs, each held out, in the band the other sources give
    within: float  # the share of its runs whose expected time, held out, is within AIM of the measured

    def engine(self, name: str) -> EngineFit:
        """``name``'s fit, else ``typical``'s (an engine with no runs of its own)."""
        return self.engines.get(name) or self.engines[TYPICAL]


@dataclass(frozen=True)
class RunTerms:
    """The fitted terms of ``engines.yaml``."""

    kinds: dict[DeviceKind, KindTerms]
    widen: float  # the band's log-width multiplier for a family without runs of its own
    validated: frozenset[str]  # catalogue devices with published runs of their own
    origin: str = field(default="", compare=False)

    def of(self, kind: DeviceKind) -> KindTerms:
        """The terms of ``kind``'s runs (a kind with none: the GPUs')."""
        return self.kinds.get(kind) or self.kinds[DeviceKind.GPU]


def fit_class(o: op.Op, on_vector: bool = False, integer: bool = False) -> FitClass | None:
    """The class an op's work is scaled in (None: none; ``expected.op_class`` refined):
    ``on_vector`` when the step's products run on vector units (``expected.products_peak``),
    ``integer`` when its products are int8 dot products. A product's reading of its bytes
    is apart, in ``FitClass.WEIGHTS`` (``class_seconds``), but for an expert's.

    Int8 products on vector units are a class apart from float ones: a quantized dot
    product multiplies blocks of 8-bit values and rescales each block's sum in fp32 (ggml's
    Q8_0 and Q4_0: a scale per 32 values), work a float product's fused multiply-adds do not
    have, so the two reach different shares of their roofs (on a Ryzen 9 7950X, llama.cpp's
    prompt processing ran at about 1.8 TFLOP/s with F16 weights, 0.6 of the fp32 roof, and
    about 1.9 TOP/s with Q8_0, 0.16 of the int8 one: ik_llama.cpp's README table).

    The reading of a product's weights is its own class: what limits it in a whole run is
    the bandwidth the engine streams weights at, not the share of the arithmetic peak its
    micro-kernel reaches, and the two differ by engine and device (on a Ryzen 9 7950X,
    llama.cpp's Q8_0 prompt processing reached about a fifth of the int8 vector roof while
    its token generation streamed weights at about 0.8 of the DDR5 peak: ik_llama.cpp PR
    #54); one factor for both would carry a compute-bound product's shortfall into a
    weight-bound one's. A product's expected work is its arithmetic and its reading, the
    shorter as far as it is not hidden (``expected.product_parts``): each part takes its
    class's factor, so a decode's products (their reading the longer, the arithmetic hidden)
    scale as weight-bound and a prompt's with few rows on a CPU (the two added) as both."""
    kind = op_class(o)
    if kind == OpClass.GEMM:
        if o.role in EXPERT_ROLES:
            return FitClass.EXPERT
        if on_vector:
            return FitClass.QUANTIZED if integer else FitClass.VECTOR
        return FitClass.DENSE
    return {OpClass.ATTENTION: FitClass.ATTENTION, OpClass.MEMORY: FitClass.MEMORY,
            OpClass.LINK: FitClass.LINK}.get(kind)


SPLIT = frozenset({FitClass.DENSE, FitClass.VECTOR, FitClass.QUANTIZED})  # classes whose reading is WEIGHTS'


def classes(a: Analysis) -> list[FitClass | None]:
    """Each op's ``FitClass`` in ``a``'s step (a product's: its arithmetic's, at the unit its
    engine runs it on: ``expected.products_peak``)."""
    peak = products_peak(a)  # on a CPU, the unit its engine's kernels use (engine_units)
    on_vector, integer = peak.unit != "matrix", a.roofs.matrix.precision == "int8"
    return [fit_class(o, on_vector, integer) for o in a.ops]


def class_seconds(a: Analysis, work: NDArray[np.float64], reading: NDArray[np.float64] | None
                  ) -> dict[FitClass, NDArray[np.float64]]:
    """Each op's seconds of ``work`` in each ``FitClass``: a product's ``reading`` of its bytes
    in ``WEIGHTS`` (an expert's stays whole in ``EXPERT``), the rest in its own class."""
    assert reading is not None, "the kernel model's Expected gives each op's reading (expected.expected)"
    of = classes(a)
    split = np.array([c in SPLIT for c in of], dtype=bool)
    read = np.where(split, reading, 0.0)
    rest = np.maximum(work - read, 0.0)  # (not below 0 by rounding: every term only adds time)
    out = {c: np.where([k == c for k in of], rest, 0.0) for c in FitClass}
    out[FitClass.WEIGHTS] = out[FitClass.WEIGHTS] + read
    return out


def _step_sum(a: Analysis, values: NDArray[np.float64]) -> float:
    """A step's total of per-occurrence ``values``, added up as the step's time is."""
    factor = training.pipeline_factor(a.params, a.params.split, a.params.batch, a.model)
    return float(step_total(a.counts, values, once_per_step(a.ops), factor))


def _work(e: Expected) -> NDArray[np.float64]:
    return e.op_time_s - (e.kernel_s if e.kernel_s is not None else 0.0)


def features(a: Analysis, e: Expected) -> dict[str, float]:
    """What the fitted terms multiply in ``a``'s step: seconds of work by ``FitClass`` and the
    units of each ``EngineTerm`` (steps, requests, kernels)."""
    seconds = class_seconds(a, _work(e), e.reading_s)
    out = {c.value: _step_sum(a, seconds[c]) for c in FitClass}
    out[EngineTerm.STEP.value] = 1.0
    out[EngineTerm.SEQUENCE.value] = 0.0 if a.params.phase == Phase.TRAIN else float(a.params.local_batch)
    out[EngineTerm.KERNEL.value] = _step_sum(a, launches(a))
    out[EngineTerm.COLLECTIVE.value] = _step_sum(a, _collectives(a))
    out[EngineTerm.RANK.value] = _ranks(a)
    return out


def _ranks(a: Analysis) -> float:
    """The devices of the model beyond the first, at inference (0 in training): the workers
    an engine's driver hands each step's inputs to."""
    return 0.0 if a.params.phase == Phase.TRAIN else float(a.params.tp * a.params.pp - 1)


def _collectives(a: Analysis) -> NDArray[np.float64]:
    """Collectives each occurrence of each op runs (its launches, for the ops that cross a link)."""
    return np.where([o.unit == op.LINK for o in a.ops], launches(a), 0.0)


def scaled_work(a: Analysis, work: NDArray[np.float64], reading: NDArray[np.float64] | None,
                terms: KindTerms) -> NDArray[np.float64]:
    """Each op's ``work`` with its classes' factors (``class_seconds``; an op of none keeps it)."""
    seconds = class_seconds(a, work, reading)
    extra = sum((terms.classes.get(c, 1.0) - 1.0) * seconds[c] for c in FitClass)
    return work + extra


def launch_s(a: Analysis, fit: EngineFit) -> NDArray[np.float64]:
    """The engine's seconds beyond the kernel model for each occurrence of each op: its
    kernels' and its collectives' host costs."""
    return (fit.terms[EngineTerm.KERNEL] * TERM_SCALE[EngineTerm.KERNEL] * launches(a)
            + fit.terms[EngineTerm.COLLECTIVE] * TERM_SCALE[EngineTerm.COLLECTIVE] * _collectives(a))


def host_s(fit: EngineFit, phase: Phase, sequences: int, devices: int = 1) -> float:
    """The engine's host seconds a step: once, and for each of ``sequences`` requests and
    each of the model's ``devices`` beyond the first (at inference)."""
    inference = phase != Phase.TRAIN
    per_request = sequences * fit.terms[EngineTerm.SEQUENCE] if inference else 0.0
    per_rank = (devices - 1) * fit.terms.get(EngineTerm.RANK, 0.0) if inference else 0.0
    step = fit.terms[EngineTerm.STEP] * TERM_SCALE[EngineTerm.STEP]
    return step + per_request * TERM_SCALE[EngineTerm.SEQUENCE] + per_rank * TERM_SCALE[EngineTerm.RANK]


def apply(a: Analysis, e: Expected, terms: RunTerms, engine: str) -> Expected:
    """``e`` (the kernel model) with the fitted terms of ``engine``: each op's work scaled
    by its classes' factors (a product's reading by the weight-bound one, the rest by its
    arithmetic's: ``class_seconds``), the engine's host costs added, and the band around the
    result. Its ``reading_s`` is the scaled reading."""
    kind = terms.of(a.hardware.kind)
    fit = kind.engine(engine)
    kernel_s = (e.kernel_s if e.kernel_s is not None else np.zeros(len(a.ops))) + launch_s(a, fit)
    op_time = scaled_work(a, _work(e), e.reading_s, kind) + kernel_s
    assert e.reading_s is not None
    reading = e.reading_s * np.array([kind.classes[FitClass.WEIGHTS] if c in SPLIT else
                                      kind.classes.get(c, 1.0) if c is not None else 1.0 for c in classes(a)])
    parts = dict(e.parts)
    for name in (OpClass.GEMM, OpClass.ATTENTION, OpClass.MEMORY, OpClass.LINK):
        mask = np.array([op_class(o) == name for o in a.ops])
        parts[name] = _step_sum(a, np.where(mask, op_time - kernel_s, 0.0))
    parts[OpClass.KERNELS] = _step_sum(a, kernel_s)
    parts[OpClass.STEP] = e.parts[OpClass.STEP] + host_s(fit, a.params.phase, a.params.local_batch,
                                                          a.params.tp * a.params.pp)
    total = _step_sum(a, op_time) + parts[OpClass.STEP]
    out = replace(e, op_time_s=op_time, time_s=total, parts=parts, kernel_s=kernel_s, engine=fit.id,
                  reading_s=reading)
    return replace(out, band=band(out.time_s, a.hardware.id in terms.validated, kind, terms.widen))


def band(time_s: float, validated: bool, terms: KindTerms, widen: float) -> tuple[float, float]:
    """Where a measured time of a step expected at ``time_s`` is expected: the held-out ratio's
    5th and 95th percentiles (``run_fit.band_of``; what it held: ``band_words``), ``widen``
    times as wide in log scale for a device without published runs of its own, and stretched
    to hold ``time_s`` itself."""
    low, high = terms.band
    if not validated:
        centre = math.sqrt(low * high)
        low, high = centre * (low / centre) ** widen, centre * (high / centre) ** widen
    # a band of held-out errors all of one sign still holds the expected time itself
    return time_s / max(high, 1.0), time_s / min(low, 1.0)


def band_words(hardware: Hardware, unchecked: str = "", terms: RunTerms | None = None) -> str:
    """What a step's band on ``hardware`` stands on: "a band that held the measured time of
    86.5% of 89 published GPU runs (12 sources), each predicted without its source, the
    expected time itself within 0.8–1.25× of the measured one for 80.9% of them"; for a
    device without published runs of its own, that its band is the others' widened; and where
    the band was not checked as it is used (``unchecked``: "with calibrated efficiency", "for
    speculative decoding"), only whose band it is: the runs were predicted with published
    efficiency, one plain step each."""
    every = terms or read_terms()
    if hardware.id not in every.validated:
        return (f"a band {every.widen:g}× as wide in log scale as the devices' with runs: no published "
                f"run on {hardware.name}")
    mine = every.of(hardware.kind)
    runs = f"{mine.runs} published {kind_label(hardware.kind)} runs"
    if unchecked:
        return f"the band of {runs} held out, not checked {unchecked}"
    return (f"a band that held the measured time of {mine.held:.1%} of {runs} ({mine.sources} sources), "
            f"each predicted without its source, the expected time itself within {AIM[0]:g}–{AIM[1]:g}× "
            f"of the measured one for {mine.within:.1%} of them")


def efficiency_unchecked(efficiency: str) -> str:
    """``band_words``'s ``unchecked`` for a step's efficiency source: "" for published (what
    the held-out runs were predicted with)."""
    return "" if efficiency == Source.PUBLISHED else f"with {efficiency} efficiency"


def _ratio(fields: Fields, name: str, low: float, high: float) -> float:
    value = fields.raw(name)
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise fields.error(name, f"must be a number from {low:g} to {high:g}, got {value!r}")
    return float(value)


def _read_engine(fields: Fields) -> EngineFit:
    terms = {t: _ratio(fields, t.value, 0.0, 1e5) for t in EngineTerm}
    sources = fields.raw("sources", required=False) or []
    if not isinstance(sources, list) or not all(isinstance(s, str) for s in sources):
        raise fields.error("sources", "must be a list of source names")
    return EngineFit(fields.identifier("id"), terms, fields.integer("runs", minimum=0), tuple(sources))


def _read_kind(top: Fields, raw: object, index: int) -> tuple[DeviceKind, KindTerms]:
    fields = Fields(raw, top.file, raw.get("kind") if isinstance(raw, dict) else f"#{index + 1}")
    kind = DeviceKind(fields.text("kind", choices=[k.value for k in DeviceKind]))
    classes_f = fields.child(fields.mapping("classes"), "classes")
    classes = {c: _ratio(classes_f, c.value, 1.0, 100.0) for c in FitClass}
    classes_f.finish()
    pair = fields.raw("band")
    if (not isinstance(pair, list) or len(pair) != 2
            or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in pair)
            or not 0 < pair[0] <= pair[1]):
        raise fields.error("band", "must be two ratios above 0, the low one first")
    band = (float(pair[0]), float(pair[1]))
    engines: dict[str, EngineFit] = {}
    for number, item in enumerate(fields.items("engines")):
        entry = Fields(item, top.file, item.get("id") if isinstance(item, dict) else f"#{number + 1}")
        fit = _read_engine(entry)
        entry.finish()
        if fit.id in engines:
            raise entry.error("id", "this engine is listed twice")
        engines[fit.id] = fit
    if TYPICAL not in engines:
        raise fields.error("engines", f"has no {TYPICAL!r} engine (the one that stands in for the others)")
    out = KindTerms(classes, engines, band, fields.integer("runs"), fields.integer("sources"),
                    _ratio(fields, "band_held", 0.0, 1.0), _ratio(fields, "within", 0.0, 1.0))
    fields.finish()
    return kind, out


@lru_cache(maxsize=4)
def read_terms(path: str | Path | None = None) -> RunTerms:
    """The terms of ``path`` (the bundled ``resources/efficiency/engines.yaml`` by default)."""
    from explorer.core.files.datafile import check_schema, load_yaml

    where = path or resource_path("efficiency", "engines.yaml")
    top = Fields(load_yaml(where), where, None)
    check_schema(top, top.integer("schema"), SCHEMA)
    kinds = dict(_read_kind(top, raw, i) for i, raw in enumerate(top.items("kinds")))
    if DeviceKind.GPU not in kinds:
        raise top.error("kinds", "has no gpu terms (they stand in for a kind without runs)")
    validated = top.raw("validated_devices")
    if not isinstance(validated, list) or not all(isinstance(v, str) for v in validated):
        raise top.error("validated_devices", "must be a list of catalogue device ids")
    out = RunTerms(kinds, _ratio(top, "widen", 1.0, 10.0), frozenset(validated), str(where))
    top.finish()
    return out


def neutral_terms() -> RunTerms:
    """Terms that add nothing (the kernel model as it is): what the fit starts from."""
    typical = EngineFit(TYPICAL, {t: 0.0 for t in EngineTerm}, 0)
    neutral = KindTerms({c: 1.0 for c in FitClass}, {TYPICAL: typical}, (1.0, 1.0), 0, 0, 0.0, 0.0)
    return RunTerms({k: neutral for k in DeviceKind}, 1.0, frozenset())
