"""What a press on the chart starts (a drag of the star, a roof or the view) and the
change a drag's newest move asks for, applied once the moves already queued are read."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from PySide6 import QtCore

from explorer.chart.elements import Chart
from explorer.core.model.session import WhatIf
from explorer.state import RoofRef

Ranges = tuple[tuple[float, float], tuple[float, float]]  # (x low, x high), (y low, y high)


class DragKind(Enum):
    """What a press on the chart drags: the step's star (the batch), a roof, or the view."""

    STAR = "star"
    ROOF = "roof"
    PAN = "pan"


@dataclass(frozen=True)
class BatchChange:
    """A star drag's pending change: the batch it reached."""

    batch: int


@dataclass(frozen=True)
class RoofChange:
    """A roof drag's pending change: the device's new what-if."""

    device: str
    what_if: WhatIf


@dataclass
class Drag:
    """A drag in progress on the chart: what is dragged, from where, and the state it started from."""

    kind: DragKind
    start: QtCore.QPointF
    ref: RoofRef | None = None
    base: WhatIf | None = None  # the what-if a roof drag starts from
    ranges: Ranges | None = None  # the ranges a pan starts from
    chart: Chart | None = None  # the chart as it was when the drag began (its scale)

    # What each kind of drag is made with (the press that starts it gives it).
    @property
    def began_on(self) -> Chart:
        assert self.chart is not None  # (every drag)
        return self.chart

    @property
    def roof(self) -> RoofRef:
        assert self.ref is not None  # (a roof's drag)
        return self.ref

    @property
    def start_what_if(self) -> WhatIf:
        assert self.base is not None  # (a roof's drag)
        return self.base

    @property
    def start_ranges(self) -> Ranges:
        assert self.ranges is not None  # (a pan)
        return self.ranges
