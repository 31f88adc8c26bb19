"""What the document works out from its session and catalogue: each shown device with its
what-ifs, the analysis, expected time and batch sweep on a device. Each is made once per
session and catalogue (a mixin of ``Document``: what it uses of the document, ``_session``,
``catalog``, ``model`` and the memo's two fields, is declared in ``DocumentHost``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING, TypeVar, cast

from explorer.core.analysis.analysis import Analysis, analyze
from explorer.core.analysis.expected import Expected, expected_for
from explorer.core.analysis.sweep import BatchSweep, batch_sweep
from explorer.core.hardware.hardware import Hardware
from explorer.core.model.models import ModelSpec
from explorer.core.model.workload import WorkloadParams
from explorer.document.host import DocumentHost
from explorer.document.topics import Topic

if TYPE_CHECKING:  # a compared model is costed when one is chosen, not at start-up
    from explorer.core.analysis.compared import Compared

T = TypeVar("T")


@lru_cache(maxsize=128)
def cached_analysis(model: ModelSpec, params: WorkloadParams, hardware: Hardware) -> Analysis:
    return analyze(model, params, hardware)


@lru_cache(maxsize=64)
def _sweep(model: ModelSpec, params: WorkloadParams, hardware: Hardware) -> BatchSweep:
    return batch_sweep(model, params, hardware)


class Derived(DocumentHost):
    def _memo(self, key: tuple[str, str], make: Callable[[], T]) -> T:
        """``make()`` once per session and catalogue: both are replaced, never changed in
        place, so their identity says when a result is stale (a drag asks for the same
        device and analysis dozens of times per frame; hashing them for the shared caches
        below costs more than the lookup saves)."""
        memo_of = self._memo_of
        if memo_of is None or memo_of[0] is not self._session or memo_of[1] is not self.catalog:
            self._memo_of, self._memo_values = (self._session, self.catalog), {}
        if key not in self._memo_values:
            self._memo_values[key] = make()
        return cast(T, self._memo_values[key])  # what ``make`` made for this key

    def device(self, ident: str) -> Hardware:
        """A shown device as the workload uses it (a CPU: the cores of its ``threads``), with
        its what-ifs applied (a dragged roof is the value dragged to)."""
        return self._memo(("device", ident), lambda: self._session.as_used(ident, self.catalog[ident]))

    def devices(self) -> list[Hardware]:
        return [self.device(ident) for ident in self._session.hardware]

    @property
    def primary(self) -> Hardware:
        return self.device(self._session.primary)

    def analysis(self, ident: str | None = None) -> Analysis:
        """The workload costed on ``ident`` (the primary device by default)."""
        ident = ident or self._session.primary
        return self._memo(("analysis", ident),
                          lambda: cached_analysis(self.model, self._session.params, self.device(ident)))

    def expected(self, ident: str | None = None) -> Expected | None:
        """The step's expected time on ``ident`` (the primary device by default), as the
        workload's ``efficiency`` asks (None: the bound alone, or no efficiency there)."""
        ident = ident or self._session.primary
        return self._memo(("expected", ident), lambda: expected_for(self.analysis(ident)))

    def model_named(self, ident: str) -> ModelSpec:
        """The model ``ident`` names: a preset, or a config.json ``models`` lists under an
        "hf-" id, found as ``--model`` finds it (``chosen_model``) once per document. An
        UnknownIdError (a KeyError) when none is."""
        if ident in self.models:
            return self.models[ident]
        if ident not in self._listed:
            from explorer.core.model.hf_config import chosen_model

            self._listed[ident] = chosen_model(self.models, ident)
        return self._listed[ident]

    def compared(self) -> Compared | None:
        """The session's ``compare`` model costed with this workload on the primary device
        (None: no model is compared); a listed ("hf-") model whose file is gone is named
        with the reason."""
        ident = self._session.compare
        if not ident:
            return None
        from explorer.core.analysis.compared import compare

        try:
            models: Mapping[str, ModelSpec] = {ident: self.model_named(ident)}
        except KeyError:
            models = {}
        return self._memo(("compared", ident), lambda: compare(models, ident, self._session.params,
                                                               self.primary, cached_analysis))

    def efficiency_changed(self) -> None:
        """A calibration was written: expected times are worked out again."""
        self._memo_of = None
        self._emit(Topic.WORKLOAD)

    def sweep(self, ident: str | None = None) -> BatchSweep:
        ident = ident or self._session.primary
        # The sweep sets the batch itself: one per model, other parameters and device, so a
        # drag along the batch track reuses it.
        params = self._session.params
        return self._memo(("sweep", ident), lambda: _sweep(
            self.model, replace(params, batch=params.split.batch_share), self.device(ident)))

