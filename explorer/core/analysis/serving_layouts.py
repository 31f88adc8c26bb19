"""Serving on a number of devices: every way of splitting them (tensor × pipeline × data ×
expert parallel, ``layouts.splits``), each planned as ``serving.plan`` plans one, ranked by
the tokens/s a device gives at its chosen point (the one that meets the latency targets).

A split the model cannot take, or one whose weights do not fit, is kept with the reason;
one where no batch meets the targets ranks after every one that does."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from explorer.core.analysis.layouts import split_name, splits
from explorer.core.analysis.serving import Plan, plan
from explorer.core.analysis.serving_request import check_request
from explorer.core.hardware.hardware import Hardware
from explorer.core.model.models import ModelSpec
from explorer.core.model.workload import WorkloadError, WorkloadParams


@dataclass(frozen=True)
class Served:
    """One split of the devices and its plan (None: it cannot serve, ``error`` says why)."""

    split: tuple[int, int, int, int]  # tp, pp, dp, ep
    plan: Plan | None
    error: str = ""

    @property
    def name(self) -> str:
        return split_name(*self.split)

    @property
    def lower_bound(self) -> bool:
        """An inference pipeline, costed one batch at a time: its rate is a lower bound."""
        return self.split[1] > 1

    @property
    def rate(self) -> float:
        """Tokens/s a device at the chosen point (0: no point meets the targets)."""
        chosen = self.plan.chosen if self.plan is not None else None
        return chosen.tokens_per_s_per_device if chosen is not None else 0.0


def search(model: ModelSpec, params: WorkloadParams, hardware: Hardware, devices: int, prompt: int,
           output: int, progress: Callable[[int, int], object] | None = None, **options: Any) -> list[Served]:
    """Every split of ``devices`` planned with ``options`` (``serving.plan``'s keywords),
    best first. ``progress(done, total)`` before each split; a false answer stops the search
    (the splits planned so far are ranked)."""
    if devices < 1:
        raise WorkloadError(f"serving needs at least one device, got {devices}")
    check_request(model, prompt, output)  # a model that does not decode: no split can serve it
    out = []
    every = list(splits(model, devices))
    for done, (tp, pp, dp, ep) in enumerate(every):
        if progress is not None and not progress(done, len(every)):
            break
        try:
            served = plan(model, replace(params, tp=tp, pp=pp, dp=dp, ep=ep), hardware, prompt, output,
                          **options)
            out.append(Served((tp, pp, dp, ep), served))
        except WorkloadError as error:
            out.append(Served((tp, pp, dp, ep), None, str(error)))
    return sorted(out, key=lambda s: (s.plan is None, -s.rate, sum(s.split)))
