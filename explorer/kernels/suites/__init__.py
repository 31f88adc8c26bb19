"""Kernel suites. Each module lists ``Case``s (and ``Skip``s) for a backend and a preset.

Presets: ``smoke`` (seconds; for tests), ``quick`` (a subset of every suite, about a
minute on a 2-core CPU), ``full``.
"""

from __future__ import annotations

from dataclasses import replace

from explorer.kernels.cases import PRESETS, Case, Preset, Skip
from explorer.kernels.suites import (
    attention,
    cache,
    decode_batch,
    gemm,
    intensity,
    memory_ops,
    parallelism,
    shapes,
    stream,
)

SUITES = {
    module.SUITE: module
    for module in (stream, cache, intensity, gemm, decode_batch, attention, parallelism, memory_ops, shapes)
}


class UnknownSuiteError(ValueError):
    pass


def resolve(names: list[str] | tuple[str, ...], preset: str) -> tuple[list[str], Preset]:
    """Suite names and preset from a selection such as ``["quick"]`` (every suite, quick
    sizes), ``["gemm", "stream"]`` (those suites at ``preset``) or ``["full", "gemm"]``."""
    names = list(names) or ["quick"]
    presets = [n for n in names if n in PRESETS]
    if presets:
        preset = presets[-1]
        names = [n for n in names if n not in PRESETS] or list(SUITES)
    unknown = [n for n in names if n not in SUITES]
    if unknown:
        raise UnknownSuiteError(f"unknown suite {unknown[0]!r}: choose from "
                                f"{', '.join([*PRESETS, *SUITES])}")
    return names, Preset(preset)


def plan(backend, names: list[str] | tuple[str, ...], preset: str) -> list[Case | Skip]:
    """Cases of the selected suites, in suite order (see ``resolve``)."""
    names, preset = resolve(names, preset)
    out: list[Case | Skip] = []
    for name in SUITES:
        if name in names:
            out.extend(SUITES[name].cases(backend, preset))
    if preset == Preset.SMOKE:  # its working sets stay in the caches: no byte is main memory's
        out = [replace(c, dram_traffic=False) if isinstance(c, Case) else c for c in out]
    return out
