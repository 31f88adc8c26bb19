"""Log axes whose tick labels read as numbers with SI prefixes (1 k, 10 T) instead of powers."""

from __future__ import annotations

import pyqtgraph as pg

from explorer.core.units import format_si
from explorer.ui.chart import coords


class SiLogAxis(pg.AxisItem):
    """An axis for log mode: ticks at decades labelled ``0.1``, ``1``, ``10 k``, ``1 P``…"""

    def __init__(self, orientation: str) -> None:
        super().__init__(orientation)
        # The label carries the unit; SI prefixes on ticks replace pyqtgraph's auto-scaling.
        self.enableAutoSIPrefix(False)

    def logTickValues(self, minVal, maxVal, size, stdTicks):
        """Decades only: the nine minor lines per decade cost most of a repaint (each is a
        grid line across the plot) and crowd a projected chart."""
        return [(spacing, values) for spacing, values in stdTicks if spacing >= 1.0] or \
            super().logTickValues(minVal, maxVal, size, stdTicks)

    def logTickStrings(self, values, scale, spacing):
        return [tick_label(float(coords.to_data(v) * scale)) for v in values]


def tick_label(value: float) -> str:
    """``tick_label(1e12) == "1 T"``; values below 1 are written plainly (``0.01``)."""
    if value < 1:
        return f"{value:g}"
    return format_si(value, "", digits=3).strip()
