"""A second model's whole step beside the session's: the same workload on the same device,
so a slide shows both (a mixture of experts beside the dense model it decodes like, a
small model beside a large one). Only its totals are drawn; a workload the model cannot
run (a tensor-parallel degree its heads do not divide) says why instead."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from explorer.core.analysis.analysis import Analysis, analyze
from explorer.core.hardware.hardware import Hardware
from explorer.core.model.models import ModelSpec
from explorer.core.model.workload import WorkloadError, WorkloadParams


@dataclass(frozen=True)
class Compared:
    """The compared model's name and its analysis, or why it has none."""

    id: str
    name: str
    analysis: Analysis | None
    why: str = ""  # when ``analysis`` is None


def compare(models: Mapping[str, ModelSpec], ident: str, params: WorkloadParams, hardware: Hardware,
            costed: Callable[[ModelSpec, WorkloadParams, Hardware], Analysis] = analyze) -> Compared:
    """``models[ident]`` costed with ``params`` on ``hardware`` (by ``costed``: a document
    passes its shared cache of analyses)."""
    if ident not in models:
        return Compared(ident, ident, None, f"no model {ident!r} is loaded")
    model = models[ident]
    try:
        return Compared(ident, model.name, costed(model, params, hardware))
    except (WorkloadError, ValueError) as error:
        return Compared(ident, model.name, None, str(error))
