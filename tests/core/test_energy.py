"""The energy model of Choi et al. (IPDPS 2013) and its fit: constants recovered from
synthetic measurements made with known ones."""

import numpy as np
import pytest

from explorer.core.analysis.energy import EnergyConstants, FitError, Sample, fit

# Orders of a GPU's (pJ per FLOP and per HBM byte, watts at rest): the test's own choice.
TRUE = EnergyConstants(flop_j=0.6e-12, byte_j=40e-12, constant_w=90.0)


def sweep(constants: EnergyConstants, noise: float = 0.0, seed: int = 1) -> list[Sample]:
    """An intensity sweep (0.25 to 256 FLOP/byte, twice) of kernels moving 1 GB, each at a
    share of 40–100 % of a roofline of 500 TFLOP/s and 3 TB/s (as measured kernels are),
    its joules from the model with relative noise."""
    rng = np.random.default_rng(seed)
    out = []
    for intensity in np.tile(2.0 ** np.arange(-2, 9), 2):
        moved = 1e9
        flops = intensity * moved
        seconds = max(flops / 500e12, moved / 3e12) / rng.uniform(0.4, 1.0)
        joules = constants.joules(flops, moved, seconds) * (1 + noise * rng.standard_normal())
        out.append(Sample(flops, moved, seconds, joules))
    return out


def metered_points(constants: EnergyConstants = TRUE):
    """``sweep``'s kernels as a run's measured points (the intensity suite, fp32), each with
    the power its joules over its time give."""
    from explorer.kernels.results import Point

    return tuple(Point("intensity", f"k{i}", "fp32", {"n": 1}, {}, int(s.flops), int(s.bytes), s.seconds,
                       s.seconds, s.seconds, power_w=s.joules / s.seconds)
                 for i, s in enumerate(sweep(constants)))


def test_exact_measurements_give_the_constants_back():
    got = fit(sweep(TRUE))
    assert got.flop_j == pytest.approx(TRUE.flop_j, rel=1e-9)
    assert got.byte_j == pytest.approx(TRUE.byte_j, rel=1e-9)
    assert got.constant_w == pytest.approx(TRUE.constant_w, rel=1e-9)


def test_noisy_measurements_give_them_within_five_percent_with_honest_errors():
    got = fit(sweep(TRUE, noise=0.005, seed=7))
    for value, truth, error in zip((got.flop_j, got.byte_j, got.constant_w),
                                   (TRUE.flop_j, TRUE.byte_j, TRUE.constant_w), got.errors, strict=True):
        assert value == pytest.approx(truth, rel=0.05)
        assert error > 0 and abs(value - truth) < 4 * error  # the stated error covers the miss


def test_the_energy_balance_is_bytes_over_flops():
    assert TRUE.balance == pytest.approx(40 / 0.6)  # ≈ 67 FLOP/byte: above it arithmetic dominates


def test_kernels_all_on_the_roof_leave_the_constant_power_loose_and_say_so():
    """On the roof, time follows bytes below the ridge and FLOPs above it: the fit's stated
    error on the constant power grows accordingly."""
    rng = np.random.default_rng(3)
    on_roof = [Sample(i * 1e9, 1e9, max(i * 1e9 / 500e12, 1e9 / 3e12), 0.0) for i in 2.0 ** np.arange(-2, 9)]
    on_roof = [Sample(s.flops, s.bytes, s.seconds, TRUE.joules(s.flops, s.bytes, s.seconds)
                      * (1 + 0.005 * rng.standard_normal())) for s in on_roof]
    loose, pinned = fit(on_roof), fit(sweep(TRUE, noise=0.005, seed=3))
    assert loose.errors[2] / loose.constant_w > 3 * pinned.errors[2] / pinned.constant_w


def test_kernels_that_do_not_vary_cannot_be_fitted():
    same = [Sample(1e9 * k, 1e9 * k, 1e-3 * k, 1.0 * k) for k in (1, 2, 3, 4)]
    with pytest.raises(FitError, match="do not vary enough"):
        fit(same)
    with pytest.raises(FitError, match="at least four"):
        fit(sweep(TRUE)[:3])
