"""A small log–log chart of Little's law: bandwidth against bytes in flight, rising as
in-flight / latency until it meets the memory's peak; measured parallelism points on top."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg

from explorer.chart import palette
from explorer.core.hardware.littles_law import bytes_in_flight_needed, effective_bandwidth
from explorer.core.units import format_bytes, format_si
from explorer.ui.chart.axes import SiLogAxis, fixed_plot

X_RANGE = (2.0**10, 2.0**24)  # 1 KiB … 16 MiB


class LittlesLawPlot(pg.PlotWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent=parent, background="w",
                         axisItems={"bottom": SiLogAxis("bottom"), "left": SiLogAxis("left")})
        self.setLogMode(x=True, y=True)
        plot = self.getPlotItem()
        fixed_plot(plot, "bytes in flight (B)", "bandwidth (B/s)")
        self.setMinimumHeight(170)
        self.curve = plot.plot(pen=pg.mkPen(palette.ROOF_BANDWIDTH, width=2.5))
        self.marker = pg.ScatterPlotItem(size=12, pen=pg.mkPen("k"), brush=pg.mkBrush(palette.SELECTED))
        self.marker.setZValue(5)
        plot.addItem(self.marker)
        self.measured = pg.ScatterPlotItem(size=9, symbol="h", pen=pg.mkPen("k"),
                                           brush=pg.mkBrush(palette.MEASURED), hoverable=True,
                                           tip=lambda x, y, data: data)
        self.measured.setZValue(4)
        plot.addItem(self.measured)
        self.knee = pg.InfiniteLine(angle=90, pen=pg.mkPen("#888888", style=pg.QtCore.Qt.PenStyle.DashLine))
        plot.addItem(self.knee)

    def show_law(self, peak: float, latency_s: float, in_flight: float,
                 measured: Sequence[tuple[float, float, str]] = ()) -> None:
        """``measured``: (bytes in flight, bandwidth, tooltip) of parallelism points."""
        x = np.geomspace(*X_RANGE, 200)
        y = effective_bandwidth(peak, latency_s, x)
        self.curve.setData(x, y)
        self.curve.setToolTip(f"min({format_si(peak, 'B/s')}, bytes in flight / "
                              f"{format_si(latency_s, 's')})")
        here = float(effective_bandwidth(peak, latency_s, in_flight))
        self.marker.setData([np.log10(in_flight)], [np.log10(here)])
        self.marker.setToolTip(f"{format_bytes(in_flight)} in flight: {format_si(here, 'B/s')}")
        needed = bytes_in_flight_needed(peak, latency_s)
        self.knee.setValue(np.log10(needed))
        self.knee.setToolTip(f"peak × latency = {format_bytes(needed)}")
        if measured:
            self.measured.setData(x=np.log10([m[0] for m in measured]), y=np.log10([m[1] for m in measured]),
                                  data=[m[2] for m in measured])
        else:
            self.measured.clear()
        low = min([float(y[0])] + [m[1] for m in measured])
        self.getPlotItem().getViewBox().setRange(
            xRange=np.log10(X_RANGE), yRange=(np.log10(low) - 0.2, np.log10(peak) + 0.3), padding=0)
