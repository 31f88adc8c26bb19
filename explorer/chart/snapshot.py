"""What a chart shows, read from the document once: the session (workload, precisions,
selection, whether measured roofs are drawn), each shown device with its what-ifs and its
datasheet, the analysis and batch sweep on the primary device, the measurement files
shown, the points of a run in progress, the step's expected time, and a compared model's
whole step.

Every function that describes the chart takes this one typed value, never the live
document: a chart is a function of a snapshot, so what it draws cannot change half-way
through a frame and a test can build one without a window."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from explorer.core.analysis.analysis import Analysis
from explorer.core.analysis.expected import Expected
from explorer.core.analysis.sweep import BatchSweep
from explorer.core.hardware.catalog import Catalog
from explorer.core.hardware.cores import restrict_cores
from explorer.core.hardware.hardware import Hardware
from explorer.core.model.models import ModelSpec
from explorer.core.model.profile import Profile
from explorer.core.model.session import Session
from explorer.kernels.results import Point, Results

if TYPE_CHECKING:  # costed when a model is compared, not at start-up
    from explorer.core.analysis.compared import Compared


class Source(Protocol):
    """What a snapshot is read from (a ``Document``)."""

    # Read-only (properties on a ``Document``): a protocol's plain attributes must be settable.
    @property
    def session(self) -> Session: ...
    @property
    def catalog(self) -> Catalog: ...

    @property
    def model(self) -> ModelSpec: ...
    @property
    def live_points(self) -> list[Point]: ...
    @property
    def profiles(self) -> tuple[Profile, ...]: ...

    def device(self, ident: str) -> Hardware: ...
    def analysis(self) -> Analysis: ...
    def expected(self) -> Expected | None: ...
    def compared(self) -> Compared | None: ...
    def sweep(self) -> BatchSweep: ...
    def results(self) -> list[tuple[str, Results]]: ...


@dataclass(frozen=True)
class Device:
    """A shown device: as drawn (what-ifs applied) and as its datasheet gives it (a CPU: for
    the cores of the workload's threads; a what-if is a change from this)."""

    hardware: Hardware
    datasheet: Hardware


@dataclass(frozen=True)
class Snapshot:
    """Everything a chart is drawn from, computed once from a session."""

    session: Session
    devices: tuple[Device, ...]  # in the session's order; the first is the primary
    analysis: Analysis  # on the primary device
    sweep: BatchSweep  # the batch track on the primary device
    results: tuple[tuple[str, Results], ...]  # (path, results) of each file shown
    live_points: tuple[Point, ...]  # of a run in progress
    expected: Expected | None = None  # the step's expected time (None: the bound alone)
    profiles: tuple[Profile, ...] = ()  # profiles of real runs shown beside the prediction
    compared: Compared | None = None  # another model's whole step, same workload and device

    @classmethod
    def of(cls, doc: Source) -> Snapshot:
        session = doc.session
        analysis = doc.analysis()
        threads = session.params.threads
        return cls(session, tuple(Device(doc.device(i), restrict_cores(doc.catalog[i], threads))
                                  for i in session.hardware),
                   analysis, doc.sweep(), tuple(doc.results()), tuple(doc.live_points), doc.expected(),
                   tuple(doc.profiles), doc.compared())
