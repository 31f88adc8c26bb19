"""Drag math without the chart: decades to what-if scales, intensities to batches."""

import math

import pytest

from explorer.core.analysis.drags import batch_at, clamp_scale, drag_start, dragged_roof
from explorer.core.analysis.sweep import batch_sweep
from explorer.core.model.session import WHAT_IF_RANGE, WhatIf
from explorer.core.model.workload import WorkloadParams


def test_a_decade_up_is_ten_times_and_scales_stay_in_range():
    start = WhatIf()
    assert dragged_roof(start, "bandwidth", "HBM3", 1.0).bandwidth_scale == pytest.approx(10.0)
    assert dragged_roof(start, "compute", "bf16 matrix", -0.5).peak_scale("bf16 matrix") == \
        pytest.approx(10 ** -0.5)
    assert dragged_roof(WhatIf(bandwidth_scale=2.0), "bandwidth", "HBM3", 0.0).bandwidth_scale == 2.0
    assert dragged_roof(start, "bandwidth", "HBM3", 9.0).bandwidth_scale == WHAT_IF_RANGE[1]
    assert clamp_scale(1e-9) == WHAT_IF_RANGE[0]


def test_a_little_s_law_cap_becomes_the_scale_the_roof_is_drawn_at(catalog):
    a100 = catalog["a100-80gb-sxm"]
    capped = WhatIf(in_flight_bytes=16384)
    start = drag_start(capped, "bandwidth", capped.apply(a100), a100)
    assert start.in_flight_bytes is None
    assert start.bandwidth_scale == pytest.approx(16384 / 406e-9 / 2039e9)
    assert drag_start(capped, "compute", a100, a100) is capped  # a compute drag keeps the cap


def test_the_star_lands_on_the_batch_of_that_intensity(catalog, models):
    sweep = batch_sweep(models["llama-3-8b"], WorkloadParams(context=128), catalog["h100-sxm"])
    for batch in (1, 16, 256):
        i = list(sweep.batch).index(batch)
        assert batch_at(sweep, math.log10(sweep.intensity[i]), 1) == batch
    assert batch_at(sweep, 9.0, 1) == sweep.max_batch and batch_at(sweep, -9.0, 7) == 1
