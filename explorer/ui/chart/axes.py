"""Log axes whose tick labels read as numbers with SI prefixes (1 k, 10 T) instead of powers."""

from __future__ import annotations

import math

import pyqtgraph as pg

from explorer.chart.axes_frame import tick_label
from explorer.ui.chart import coords

MIN_TICK_PIXELS = 48  # room for one label such as "100 G"


class SiLogAxis(pg.AxisItem):
    """An axis for log mode: ticks at decades labelled ``0.1``, ``1``, ``10 k``, ``1 P``…"""

    def __init__(self, orientation: str) -> None:
        super().__init__(orientation)
        # The label carries the unit; SI prefixes on ticks replace pyqtgraph's auto-scaling.
        self.enableAutoSIPrefix(False)

    def logTickValues(self, minVal, maxVal, size, stdTicks):
        """Decades only (every second or third when space is short): the nine minor lines
        per decade cost most of a repaint (each is a grid line across the plot) and their
        labels run into each other. Zoomed in to less than a decade: pyqtgraph's own."""
        low, high = math.ceil(minVal), math.floor(maxVal)
        if high <= low:
            return super().logTickValues(minVal, maxVal, size, stdTicks)
        step = max(1, math.ceil((high - low + 1) * MIN_TICK_PIXELS / max(size, 1.0)))
        return [(float(step), [float(v) for v in range(low, high + 1, step)])]

    def logTickStrings(self, values, scale, spacing):
        return [tick_label(float(coords.to_data(v) * scale)) for v in values]


def fixed_plot(item: pg.PlotItem, x_label: str, y_label: str) -> None:
    """A small explanatory plot: no menu, no panning or zooming, a faint grid, labelled axes."""
    item.setMenuEnabled(False)
    item.setMouseEnabled(x=False, y=False)
    item.hideButtons()
    item.showGrid(x=True, y=True, alpha=0.15)
    item.setLabel("bottom", x_label)
    item.setLabel("left", y_label)
