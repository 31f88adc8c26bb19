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


def test_a_model_that_does_not_fit_still_has_a_track_to_drag_along(catalog, models):
    """Llama 3 70B in bf16 (141 GB of weights) on one 80 GB H100: no batch fits, the track
    runs to UNFIT_REACH all marked as not fitting, and the star moves along it."""
    from explorer.core.analysis.sweep import UNFIT_REACH

    sweep = batch_sweep(models["llama-3-70b"], WorkloadParams(), catalog["h100-sxm"])
    assert sweep.max_batch == 0 and not sweep.fits.any()
    assert sweep.batch[0] == 1 and sweep.batch[-1] == UNFIT_REACH
    i = list(sweep.batch).index(64)
    assert batch_at(sweep, math.log10(sweep.intensity[i]), 1) == 64
    assert batch_at(sweep, 9.0, 1) == UNFIT_REACH


def test_a_track_that_fits_ends_where_memory_does(catalog, models):
    sweep = batch_sweep(models["llama-3-8b"], WorkloadParams(context=8192), catalog["h100-sxm"])
    assert 0 < sweep.max_batch < 512 and sweep.fits.all() and sweep.batch[-1] == sweep.max_batch


def test_the_readme_names_where_an_unfit_track_ends():
    from pathlib import Path

    from explorer.core.analysis.sweep import UNFIT_REACH

    page = Path(__file__).resolve().parents[2] / "docs" / "user-guide.md"
    readme = " ".join(page.read_text(encoding="utf-8").split())
    assert f"it runs to batch {UNFIT_REACH} dashed" in readme
