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
is worked out again from the cores used; any other peak (published, or counted in units
that are not cores, such as a cluster's matrix unit) scales with the share of cores used.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace

from explorer.core.hardware.hardware import ComputePeak, DeviceKind, Hardware, evaluate_formula, formula_terms

_COUNT = re.compile(r"^\s*([0-9]+)")


def restrict_cores(hw: Hardware, threads: int) -> Hardware:
    """``hw`` with the compute roofs of the ``threads`` cores a run uses (0, or at least
    every core: ``hw`` itself; only a CPU is restricted)."""
    cores = hw.specs.cores
    if hw.kind is not DeviceKind.CPU or threads <= 0 or threads >= cores:
        return hw
    return replace(hw, name=f"{hw.name}, {threads} threads", short_name=f"{hw.label}, {threads} threads",
                   specs=replace(hw.specs, cores=threads),
                   peaks=tuple(_peak_on(p, threads, cores) for p in hw.peaks))


def _peak_on(peak: ComputePeak, threads: int, cores: int) -> ComputePeak:
    by_term = _per_core_terms(peak, cores)
    if by_term is None:
        share = threads / cores
        formula = f"{peak.provenance.formula or _rate(peak)} × {threads} / {cores} cores"
        return replace(peak, flops_per_s=peak.flops_per_s * share,
                       provenance=replace(peak.provenance, derived=True, formula=formula))
    left, kept, total = threads, [], 0.0
    for count, per_core, text in sorted(by_term, key=lambda t: -t[1]):  # the fastest cores first
        take = min(count, left)
        left -= take
        if take:
            kept.append(_COUNT.sub(f"{take}", text, count=1).strip())
            total += take * per_core
    return replace(peak, flops_per_s=total, provenance=replace(
        peak.provenance, derived=True, formula=" + ".join(kept) + f"; {threads} of the {cores} cores"))


def _per_core_terms(peak: ComputePeak, cores: int) -> list[tuple[int, float, str]] | None:
    """(cores, rate a core, the term's text) for each term of ``peak``'s formula when every
    term starts with a count of cores, the counts add up to the CPU's and the formula gives
    the peak; else None."""
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
        count, unit, _ = term[0]
        if "core" not in unit.lower() or count < 1 or count != int(count):
            return None
        out.append((int(count), evaluate_formula(text) / count, text))
    if sum(c for c, _, _ in out) != cores or not math.isclose(evaluate_formula(formula), peak.flops_per_s,
                                                               rel_tol=0.01):
        return None
    return out


def _rate(peak: ComputePeak) -> str:
    from explorer.core.units import format_si, rate_unit

    return format_si(peak.flops_per_s, rate_unit(peak.precision))
