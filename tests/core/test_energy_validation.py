"""The energy lower bound and the power model against published measurements of serving's
GPU energy (resources/validation/published-energy.yaml: ML.ENERGY v2 and v3, and
chuyishang/inference-energy; 26 rows, six devices).

Two checks, because the estimate is a power times a time. The power model alone, at each
row's measured time per token (its J/token over its measured power): within 0.8–1.25 of the
measured J/token for 22 of 26 rows in sample, 21 held out by device, 17 held out by source
(ML.ENERGY v2, measured over the whole benchmark, is the one the others predict worst). It
does not depend on the expected time. The estimate as the app gives it, at the expected time:
16 of 26 in sample, 16 held out by device, 17 held out by source; its misses follow the
time's (``time_ratio``: Llama 3 70B over four H100s at 1.33–1.61 the measured time per
token, ML.ENERGY v2 at 0.34–0.61). The expected time is refitted elsewhere, so the
estimate's floors sit below today's figures."""

import pytest

from explorer.core.analysis.energy import IDLE_SHARE
from explorer.core.analysis.energy_validation import (
    BAND,
    Costed,
    by_device,
    by_source,
    cost,
    fit_idle_share,
    held_out,
    markdown_table,
    read_energy_runs,
    within,
)

GOAL = 0.8  # the share within BAND held out that issue 53 asks for
POWER_HELD_BY_SOURCE_AT_LEAST = 0.65  # 17 of 26: short of the goal (ML.ENERGY v2 held out: 1 of 7)
ESTIMATE_AT_LEAST = 0.55  # in sample and held out, at the expected time (16–17 of 26 today)


@pytest.fixture(scope="module")
def costed(models, catalog):
    return [cost(run, models, catalog) for run in read_energy_runs()]


def test_the_set_has_sources_devices_and_what_each_counted():
    runs = read_energy_runs()
    assert len(runs) >= 5 and len({r.hardware for r in runs}) >= 6
    assert {r.source_group for r in runs} >= {"mlenergy-v2", "mlenergy-v3", "inference-energy"}
    assert all(r.source.startswith("https://") and r.quote and r.derivation and r.counted and r.engine
               for r in runs)


def test_each_row_s_power_and_time_agree_with_its_energy():
    """power_w × the time per token is the J/token; where the quote gives the power (v3), the
    row's is the quote's."""
    for r in read_energy_runs():
        assert r.power_w * r.seconds_per_token == pytest.approx(r.joules_per_token)
        if "avg_power_watts" in r.quote:
            quoted = float(r.quote.split('"avg_power_watts": ')[1].split(",")[0])
            assert r.power_w == pytest.approx(quoted, rel=1e-4)


def test_the_lower_bound_is_below_every_measured_joules_per_token(costed):
    over = [(c.run.id, c.lower_bound, c.run.joules_per_token) for c in costed
            if c.lower_bound > c.run.joules_per_token]
    assert not over
    # docs/commands.md: "below every measured row, by 4.4 times or more"
    assert max(c.lower_bound / c.run.joules_per_token for c in costed) < 1 / 4.4


def test_the_power_model_at_the_measured_time_meets_the_goal_held_out_by_device(costed):
    share = fit_idle_share(costed)
    dev = held_out(costed, by_device, Costed.power_ratio)
    src = held_out(costed, by_source, Costed.power_ratio)
    print("\n" + markdown_table(costed))
    print(f"power model within {BAND[0]:g}–{BAND[1]:g}: "
          f"{within([c.power_ratio(share) for c in costed]):.0%} in sample, "
          f"{within(list(dev.values())):.0%} held out by device, {within(list(src.values())):.0%} by source")
    assert within([c.power_ratio(share) for c in costed]) >= GOAL
    assert within(list(dev.values())) >= GOAL
    assert within(list(src.values())) >= POWER_HELD_BY_SOURCE_AT_LEAST


def test_the_estimate_at_the_expected_time_lies_near_the_measured_joules_per_token(costed):
    dev, src = held_out(costed, by_device), held_out(costed, by_source)
    print(f"\nestimate within {BAND[0]:g}–{BAND[1]:g}: {within([c.ratio() for c in costed]):.0%} in sample, "
          f"{within(list(dev.values())):.0%} held out by device, {within(list(src.values())):.0%} by source")
    assert within([c.ratio() for c in costed]) >= ESTIMATE_AT_LEAST
    assert within(list(dev.values())) >= ESTIMATE_AT_LEAST
    assert within(list(src.values())) >= ESTIMATE_AT_LEAST


def test_llama_3_70b_over_four_h100s_draws_what_the_power_model_says(costed):
    """The estimate's known miss (1.26–1.29 of the measured J/token today) is the time's: at
    the measured time per token the power model is within the band on all four rows (1.12–1.18),
    while the expected time per token is 1.33–1.61 the measured one."""
    rows = [c for c in costed if c.run.model == "llama-3-70b" and c.run.hardware == "h100-sxm"]
    assert len(rows) == 4
    assert all(BAND[0] <= c.power_ratio() <= BAND[1] for c in rows)


def test_the_idle_share_is_the_fit_to_these_rows_and_stable_without_any_device(costed):
    assert fit_idle_share(costed) == pytest.approx(IDLE_SHARE, abs=0.006)
    devices = {c.run.hardware for c in costed}
    shares = [fit_idle_share([c for c in costed if c.run.hardware != d]) for d in devices]
    assert min(shares) >= 0.15 and max(shares) <= 0.27  # 0.17–0.265 today


def test_tdp_times_the_expected_time_is_no_bound_of_the_estimate(costed):
    """At an idle share of 1 the estimate's power would be the whole TDP: the estimate is below it."""
    assert all(c.estimate() < c.estimate(1.0) for c in costed)
