"""A CPU as a run uses it: the compute roofs of the cores its threads occupy.

A CPU run names its threads (llama-bench's ``threads`` column, ``-t``); on a CPU with more
cores, the rest sit idle and every compute roof is that of the cores the threads run on.
Threads take the fastest cores first, one to a core: a hybrid CPU's performance cores
before its efficiency cores, where macOS (high-priority work) and Linux's scheduler put busy
threads, and a core's second hardware thread adds no arithmetic unit. Memory is left as the
catalogue gives it: a few cores draw less than a socket's bandwidth, by how much is a
measurement per CPU the catalogue does not hold, and a decode, bound by its bytes, keeps
its time (a prompt's arithmetic is what fewer cores slow down).

A peak whose catalogue formula counts cores term by term ("8 P-cores × … + 16 E-cores × …")
is worked out again from the cores used. One counted in units a cluster of cores shares
("2 P-clusters × … + 1 E-cluster × …", Apple's SME units) keeps as many units as the threads
can reach, one thread being enough to drive one (the fastest units first): a bound, since
no placement of the threads drives more. Any other peak scales with the share of cores used.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace

from explorer.core.hardware.hardware import (
    ComputePeak,
    DeviceKind,
    Hardware,
    Provenance,
    evaluate_formula,
    formula_terms,
)

_COUNT = re.compile(r"^\s*([0-9]+)\s+(\S+)")

Term = tuple[int, float, str]  # (how many: cores or units, rate of one, the term's text)


def restrict_cores(hw: Hardware, threads: int) -> Hardware:
    """``hw`` with the compute roofs of the ``threads`` cores a run uses (0, or at least
    every core: ``hw`` itself; only a CPU is restricted)."""
    cores = hw.specs.cores
    if hw.kind is not DeviceKind.CPU or threads <= 0 or threads >= cores:
        return hw
    peaks = tuple(_peak_on(p, threads, cores) for p in hw.peaks)
    said = _threads(threads)
    used = f"{said}, one to a core: {_used_cores(hw, threads, cores)} of its {cores} cores"
    specs = replace(hw.specs, cores=threads, cores_of=cores, core_label="core",
                    provenance=replace(hw.specs.provenance, derived=True, formula=used))
    return replace(hw, name=f"{hw.name}, {said}", short_name=f"{hw.label}, {said}", specs=specs, peaks=peaks)


def _threads(n: int) -> str:
    return f"{n} thread" + ("" if n == 1 else "s")


def _used_cores(hw: Hardware, threads: int, cores: int) -> str:
    """"8 P + 8 E" on a hybrid CPU (from its fp32 vector formula), else the count."""
    peak = hw.vector_peak("fp32")
    terms = _terms(peak, cores, "core") if peak else None
    if not terms or len(terms) < 2:
        return f"{threads}"
    parts = []
    for take, _, text in _taken(terms, threads):
        kind = _COUNT.match(text)
        label = kind.group(2).split("-")[0] if kind and "-" in kind.group(2) else ""
        parts.append(f"{take} {label}".strip())
    return " + ".join(parts)


def _peak_on(peak: ComputePeak, threads: int, cores: int) -> ComputePeak:
    formula = peak.provenance.formula
    note = formula.split(";", 1)[1].strip() if ";" in formula else ""
    for unit in ("core", "cluster"):
        terms = _terms(peak, cores if unit == "core" else None, unit)
        if terms is None:
            continue
        kept = _taken(terms, threads)
        text = " + ".join(_count_in(t, take) for take, _, t in kept)
        said = f"{threads} of the {cores} cores" if unit == "core" else \
            f"the units {_threads(threads)} can reach, one thread to a unit"
        return _with(peak, sum(take * rate for take, rate, _ in kept), text, said, note)
    from explorer.core.units import format_si, rate_unit

    rate = format_si(peak.flops_per_s, rate_unit(peak.precision))
    return _with(peak, peak.flops_per_s * threads / cores, f"{rate} × {threads} ÷ {cores} cores",
                 "in proportion to the cores used", note)


def _with(peak: ComputePeak, flops: float, formula: str, said: str, note: str) -> ComputePeak:
    text = f"{formula}; {said}" + (f"; {note}" if note else "")
    provenance: Provenance = replace(peak.provenance, derived=True, formula=text)
    return replace(peak, flops_per_s=flops, provenance=provenance)


def _taken(terms: list[Term], threads: int) -> list[Term]:
    """The terms the threads take, the fastest first, each as (how many taken, rate, text)."""
    left, kept = threads, []
    for count, rate, text in sorted(terms, key=lambda t: -t[1]):
        take = min(count, left)
        left -= take
        if take:
            kept.append((take, rate, text))
    return kept


def _count_in(text: str, take: int) -> str:
    """A term's text with ``take`` for its count ("1 P-core", "6 cores")."""
    def counted(match: re.Match[str]) -> str:
        word = match.group(2)
        return f"{take} {word[:-1] if take == 1 and word.endswith('s') else word}"

    return _COUNT.sub(counted, text, count=1).strip()


def _terms(peak: ComputePeak, cores: int | None, unit: str) -> list[Term] | None:
    """(how many, rate of one, the term's text) for each term of ``peak``'s formula when
    every term starts with a count of ``unit`` (cores: adding up to the CPU's ``cores``) and
    the formula gives the peak; else None."""
    formula = peak.provenance.formula
    if not formula:
        return None
    texts = formula.split(";")[0].split("+")
    try:
        terms = formula_terms(formula)
    except ValueError:
        return None
    out = []
    for text, term in zip(texts, terms, strict=True):
        count, word, _ = term[0]
        if unit not in word.lower() or count < 1 or count != int(count):
            return None
        out.append((int(count), evaluate_formula(text) / count, text))
    if cores is not None and sum(c for c, _, _ in out) != cores:
        return None
    if not math.isclose(evaluate_formula(formula), peak.flops_per_s, rel_tol=0.01):
        return None
    return out
