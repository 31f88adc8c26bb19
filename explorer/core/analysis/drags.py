"""What a drag on the chart means, without the chart: a roof dragged by some decades is a
what-if scale, the whole-step star dragged to an intensity is a batch.

The chart (``ui/chart/roofline_plot.py``) only turns mouse positions into log10 view
coordinates and calls these.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from explorer.core.analysis.roofline import COMPUTE
from explorer.core.analysis.sweep import BatchSweep
from explorer.core.hardware.hardware import Hardware
from explorer.core.model.session import WHAT_IF_RANGE, WhatIf


def clamp_scale(factor: float) -> float:
    """A what-if scale within what a session can hold (``WHAT_IF_RANGE``)."""
    low, high = WHAT_IF_RANGE
    return min(max(float(factor), low), high)


def drag_start(what_if: WhatIf, kind: str, shown: Hardware, datasheet: Hardware) -> WhatIf:
    """The what-if a roof drag starts from. A bandwidth roof under a Little's-law cap
    becomes a plain scale that starts where the roof is drawn (``shown``) relative to the
    catalogue entry (``datasheet``), so the roof does not jump when the drag begins."""
    if kind == COMPUTE or what_if.in_flight_bytes is None:
        return what_if
    scale = shown.bandwidth_bytes_per_s / datasheet.bandwidth_bytes_per_s
    return replace(what_if, bandwidth_scale=clamp_scale(scale), in_flight_bytes=None)


def dragged_roof(start: WhatIf, kind: str, label: str, offset_decades: float) -> WhatIf:
    """``start`` with the roof (a compute roof by its label, or the bandwidth) moved up by
    ``offset_decades`` (negative: down), clamped."""
    factor = 10.0 ** offset_decades
    if kind == COMPUTE:
        return start.with_peak_scale(label, clamp_scale(start.peak_scale(label) * factor))
    return replace(start, bandwidth_scale=clamp_scale(start.bandwidth_scale * factor))


def batch_at(sweep: BatchSweep, log10_intensity: float, current: int, multiple: int = 1) -> int:
    """The whole batch whose step intensity is nearest to ``log10_intensity``, interpolating
    log(batch) over the sweep's track; a multiple of ``multiple`` (the replicas a batch
    splits over) within ``multiple`` … the track's end: the largest batch that fits, or
    where nothing fits the end of the track drawn anyway (``current`` when the track has
    fewer than two points)."""
    if sweep.batch.size < 2:
        return current
    logs_i = np.log10(sweep.intensity)
    logs_b = np.log10(sweep.batch.astype(float))
    batch = 10 ** float(np.interp(log10_intensity, logs_i, logs_b))
    top = max(multiple, int(sweep.batch[-1]) // multiple * multiple)
    return int(min(max(multiple, round(batch / multiple) * multiple), top))
