"""Kernel suites. Each module lists ``Case``s (and ``Skip``s) for a backend and a preset.

Presets: ``smoke`` (seconds; for tests), ``quick`` (a subset of every suite, about a
minute on a 2-core CPU), ``full``.
"""

from __future__ import annotations

from explorer.kernels.cases import PRESETS, Case, Skip
from explorer.kernels.suites import (
    attention,
    decode_batch,
    gemm,
    intensity,
    memory_ops,
    parallelism,
    stream,
)

SUITES = {
    module.SUITE: module
    for module in (stream, intensity, gemm, decode_batch, attention, parallelism, memory_ops)
}


class UnknownSuiteError(ValueError):
    pass


def plan(backend, names: list[str] | tuple[str, ...], preset: str) -> list[Case | Skip]:
    """Cases of the suites ``names`` (``quick``/``full``/``smoke`` mean every suite at that
    preset) in suite order."""
    names = list(names) or ["quick"]
    presets = [n for n in names if n in PRESETS]
    if presets:
        preset = presets[-1]
        names = [n for n in names if n not in PRESETS] or list(SUITES)
    unknown = [n for n in names if n not in SUITES]
    if unknown:
        raise UnknownSuiteError(f"unknown suite {unknown[0]!r}: choose from "
                                f"{', '.join([*PRESETS, *SUITES])}")
    out: list[Case | Skip] = []
    for name in SUITES:
        if name in names:
            out.extend(SUITES[name].cases(backend, preset))
    return out
