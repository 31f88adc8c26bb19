"""The energy lower bound and the power model's estimate against published measurements of
serving's GPU energy (resources/validation/published-energy.yaml: ML.ENERGY v2 and v3)."""

import pytest

from explorer.core.analysis.energy import FLOOR_SHARE
from explorer.core.analysis.energy_validation import (
    BAND,
    cost,
    fit_floor_share,
    held_out,
    markdown_table,
    read_energy_runs,
    within,
)

# In sample 14 of 20 rows (70 %) lie within BAND; held out by device 14 of 20, by source 11
# of 20. The goal is 80 %: the estimate is high on Llama 3 70B over four H100s, where the
# app's time per token is long and the GPUs draw less than the model says. These floors keep
# a change from making it worse unnoticed.
IN_BAND_AT_LEAST = 0.7
HELD_BY_DEVICE_AT_LEAST = 0.7
HELD_BY_SOURCE_AT_LEAST = 0.55


@pytest.fixture(scope="module")
def costed(models, catalog):
    return [cost(run, models, catalog) for run in read_energy_runs()]


def test_the_set_has_sources_devices_and_what_each_counted():
    runs = read_energy_runs()
    assert len(runs) >= 5 and len({r.hardware for r in runs}) >= 2
    assert {r.source_group for r in runs} == {"mlenergy-v2", "mlenergy-v3"}
    assert all(r.source.startswith("https://") and r.quote and r.derivation and r.counted and r.engine
               for r in runs)


def test_the_lower_bound_is_below_every_measured_joules_per_token(costed):
    over = [(c.run.id, c.lower_bound, c.run.joules_per_token) for c in costed
            if c.lower_bound > c.run.joules_per_token]
    assert not over


def test_the_estimate_lies_near_the_measured_joules_per_token(costed):
    by_device = held_out(costed, lambda c: c.run.hardware)
    by_source = held_out(costed, lambda c: c.run.source_group)
    print("\n" + markdown_table(costed, by_device))
    print(f"within {BAND[0]:g}–{BAND[1]:g}: {within([c.ratio() for c in costed]):.0%} in sample, "
          f"{within(list(by_device.values())):.0%} held out by device, "
          f"{within(list(by_source.values())):.0%} held out by source")
    assert within([c.ratio() for c in costed]) >= IN_BAND_AT_LEAST
    assert within(list(by_device.values())) >= HELD_BY_DEVICE_AT_LEAST
    assert within(list(by_source.values())) >= HELD_BY_SOURCE_AT_LEAST


def test_the_floor_share_is_the_fit_to_these_rows(costed):
    assert fit_floor_share(costed) == pytest.approx(FLOOR_SHARE, abs=0.006)


def test_tdp_times_the_expected_time_is_no_bound_of_the_estimate(costed):
    """At TDP the estimate's power would be the whole TDP: the estimate is below it."""
    assert all(c.estimate() < c.estimate(1.0) for c in costed)
