"""Calibration: the fit finds the factors that made a set of product times, a profile
survives its file, `calibrate` writes one that `--efficiency calibrated` uses, and on this
machine a calibration predicts products it never saw."""

import io
import statistics

import pytest

from explorer.commands import main as cli
from explorer.core.analysis.expected import product_time
from explorer.core.hardware.efficiency import (
    FACTORS,
    Efficiency,
    Factor,
    calibrated,
    read_efficiencies,
    to_text,
)
from explorer.core.hardware.hardware import DeviceKind
from explorer.kernels import calibrate
from explorer.kernels.results import Point, Results
from explorer.kernels.suites.shapes import DEPTHS, HELD_OUT, HELD_OUT_DEPTHS, HELD_OUT_ROWS, ROWS

ROOFS = calibrate.Roofs(1000e12, 2e12, "test-gpu", False, DeviceKind.GPU, "a test bandwidth", "a test peak")
TRUE = {"gemm": 0.7, "gemm_depth": 512.0, "gemm_tile": 64.0, "gemm_bandwidth": 0.8, "gemm_overlap": 1.0}


def _profile(values: dict) -> Efficiency:
    full = {spec.name: 1.0 for spec in FACTORS} | {"kernel_us": 0.0, "step_ms": 0.0} | values
    return Efficiency("t", "t", (), DeviceKind.GPU, {n: Factor(v, "-", "-") for n, v in full.items()})


def _point(kernel: str, m: int, n: int, k: int, seconds: float) -> Point:
    moved = (m * k + k * n + m * n) * 2
    return Point("shapes", kernel, "bf16", {"m": m, "n": n, "k": k}, {}, 2 * m * n * k, moved,
                 seconds, seconds, seconds)


def _results(truth: Efficiency, launch_s: float = 5e-6, roofs: calibrate.Roofs = ROOFS) -> Results:
    points = [_point("launch", 8, 8, 8, launch_s),
              Point("stream", "triad", "fp32", {"n": 1 << 26}, {}, 0, 3 << 28, (3 << 28) / 1.8e12,
                    (3 << 28) / 1.8e12, (3 << 28) / 1.8e12)]
    shapes = [("rows", m, 8192, 8192) for m in ROWS] + [("depth", 8192, 8192, k) for k in DEPTHS]
    shapes += [("rows" + HELD_OUT, m, 8192, 8192) for m in HELD_OUT_ROWS]
    shapes += [("depth" + HELD_OUT, 8192, 8192, k) for k in HELD_OUT_DEPTHS]
    for kernel, m, n, k in shapes:
        seconds = product_time(truth, 2 * m * n * k, (m * k + k * n + m * n) * 2, m, k, roofs.peak_flops,
                               roofs.bandwidth) + launch_s
        points.append(_point(kernel, m, n, k, seconds))
    return Results({"backend": "cupy", "device_kind": "gpu"}, "test", "quick", calibrate.SUITES,
                   tuple(points))


def test_the_fit_finds_the_factors_that_made_the_times():
    truth = _profile(TRUE)
    profile = calibrate.fit(_results(truth), ROOFS, "cupy", "2026-12-01T00:00:00+00:00")
    # The tile shows in compute-bound products whose rows are not a multiple of it (520).
    assert profile.value("gemm_tile") == 64 and profile.value("gemm_overlap") == 1.0
    assert profile.value("gemm") == pytest.approx(0.7, abs=0.01)
    assert profile.value("gemm_bandwidth") == pytest.approx(0.8, abs=0.01)
    assert profile.value("gemm_depth") == pytest.approx(512, rel=0.3)
    assert profile.value("kernel_us") == pytest.approx(5.0)
    assert profile.value("bandwidth") == pytest.approx(0.9)  # 1.8 of 2 TB/s
    assert profile.fit_error < 0.02
    errors = [abs(ratio - 1) for _, ratio in calibrate.held_out_errors(_results(truth), profile, ROOFS)]
    assert len(errors) == len(HELD_OUT_ROWS) + len(HELD_OUT_DEPTHS) and max(errors) < 0.03


def test_an_uncatalogued_cpu_whose_products_beat_its_derived_peak_takes_the_fastest_as_roof():
    """A peak derived at the clock /proc/cpuinfo reports (a virtual machine: 2.60 GHz while
    the host boosts) can lie below the products the run measured: this 2-core VM ran fp32
    products at 200 GFLOP/s over a derived 166. Shares of such a "peak" pin gemm at 1 and the
    fit bends the rest (held-out errors of 20 % where 8 % is reached); the roof is instead the
    fastest fitted product's rate, named as such, and the fit finds the true shares again."""
    real = calibrate.Roofs(150e9, 2e12, "Test CPU", False, DeviceKind.CPU, "a test bandwidth", "a test peak")
    made = _results(_profile(TRUE | {"gemm_depth": 64.0}), roofs=real)
    machine = {"backend": "numpy", "device_kind": "cpu",
               "cpu": {"model": "Test CPU", "clock_source": "current",
                       "derived_peaks": [{"precision": "bf16", "flops_per_s": 60e9}]}}
    results = Results(machine, "test", "quick", made.suites, made.points)
    roofs = calibrate.roofs_for(results, {})
    fastest = max(p.flops / p.time_p20_s for p in calibrate._products(results, held_out=False))
    assert roofs.peak_flops == pytest.approx(fastest) and fastest > 60e9
    assert roofs.peak_source.startswith("the run's fastest product (") and "60 GFLOP/s" in roofs.peak_source
    assert "/proc/cpuinfo" in roofs.peak_source
    profile = calibrate.fit(results, roofs, "numpy")
    assert roofs.peak_source in profile.factors["gemm"].note
    assert profile.value("gemm") * roofs.peak_flops == pytest.approx(0.7 * 150e9, rel=0.02)
    errors = [abs(ratio - 1) for _, ratio in calibrate.held_out_errors(results, profile, roofs)]
    assert max(errors) < 0.03
    # Below the derived peak, the derived peak stands.
    peaks = [{"precision": "bf16", "flops_per_s": 200e9}]
    slow = {**machine, "cpu": {**machine["cpu"], "derived_peaks": peaks}}
    roofs = calibrate.roofs_for(Results(slow, "test", "quick", made.suites, made.points), {})
    assert roofs.peak_flops == 200e9 and roofs.peak_source == "this CPU's derived bf16 peak, 200 GFLOP/s"


def test_a_run_saved_before_the_clock_source_takes_back_products_flagged_against_its_peak():
    """A run saved before the clock's source was recorded judged its products against the
    derived peak: those it flagged only for beating it are real (this VM's were) and the fit
    takes them back, saying it cannot tell where the clock was read; where the clock was
    cpufreq's maximum, a product beyond the peak stays out."""
    from dataclasses import replace

    from explorer.kernels.reference import DERIVED

    real = calibrate.Roofs(150e9, 2e12, "Test CPU", False, DeviceKind.CPU, "a test bandwidth", "a test peak")
    made = _results(_profile(TRUE | {"gemm_depth": 64.0}), roofs=real)
    fast = {id(p) for p in made.points if p.suite == calibrate.SUITE and p.flops / p.time_p20_s > 60e9}
    flagged = tuple(replace(p, suspect="1.60× the bf16 peak (derived from the local CPU): not real")
                    if id(p) in fast else p for p in made.points)
    cpu = {"model": "Test CPU", "derived_peaks": [{"precision": "bf16", "flops_per_s": 60e9}]}
    old = Results({"backend": "numpy", "device_kind": "cpu", "cpu": cpu}, "test", "quick", made.suites,
                  flagged, reference=DERIVED)
    assert sum(p.suspect is not None for p in flagged) >= 3
    roofs = calibrate.roofs_for(old, {})
    assert roofs.peak_source.endswith("at a clock whose source the run did not record")
    profile = calibrate.fit(old, roofs, "numpy")
    assert profile.value("gemm") * roofs.peak_flops == pytest.approx(0.7 * 150e9, rel=0.02)
    at_maximum = replace(old, machine={**old.machine, "cpu": {**cpu, "clock_source": "maximum"}})
    kept = (len(calibrate._products(r, held_out=False)) for r in (at_maximum, old))
    assert next(kept) < next(kept)


def test_a_run_without_enough_products_is_refused():
    results = _results(_profile(TRUE))
    few = Results(results.machine, "test", "quick", results.suites, results.points[:4])
    with pytest.raises(calibrate.CalibrationError, match="too few trusted matrix products"):
        calibrate.fit(few, ROOFS, "cupy")


def test_a_profile_survives_its_file(tmp_path):
    profile = calibrate.fit(_results(_profile(TRUE)), ROOFS, "cupy", "2026-12-01T00:00:00+00:00")
    path = tmp_path / "efficiency" / "mine.yaml"
    path.parent.mkdir()
    path.write_text(to_text(profile), encoding="utf-8")
    (tmp_path / "efficiency" / "broken.yaml").write_text("schema: 1\nefficiencies: [{id: x}]\n")
    [back], skipped = calibrated(tmp_path / "efficiency")
    assert len(skipped) == 1 and "broken.yaml" in str(skipped[0].error)
    assert back.id == profile.id and back.machine == "test-gpu" and back.devices == () and back.kind is None
    assert back.measured.startswith("2026-12-01")
    assert back.fit_error == pytest.approx(profile.fit_error, abs=1e-4)
    for name, factor in profile.factors.items():
        assert back.value(name) == pytest.approx(factor.value, abs=1e-6) and back.factors[name].note
    assert read_efficiencies(path)[0].name == profile.name


def _cli(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(cli.parse_args(list(argv)), out, err)
    return code, out.getvalue(), err.getvalue()


def test_a_smoke_run_is_no_calibration(tmp_path, monkeypatch, numpy_backend):
    """Its working sets stay in the caches: a bandwidth share fitted to them would be a
    cache's, and calibrate says so instead of writing it (nor offers the smoke sizes)."""
    from explorer.kernels import calibrate
    from explorer.kernels.runner import drive, run

    monkeypatch.setenv("ROOFLINE_EXPLORER_DATA", str(tmp_path))
    saved = tmp_path / "smoke.json"
    drive(run(numpy_backend, list(calibrate.SUITES), "smoke", load=None)).save(saved)
    code, _, err = _cli("calibrate", "--results", str(saved))
    assert code == 1 and "a smoke run's working sets stay in the caches" in err and "--preset quick" in err
    assert not list((tmp_path / "efficiency").glob("calibrated-*.yaml"))
    with pytest.raises(SystemExit):
        cli.parse_args(["calibrate", "--preset", "smoke"])


def test_calibrate_writes_a_profile_analyze_uses(tmp_path, monkeypatch, numpy_backend):
    """From a saved run (``--results``): the products at the smoke sizes (seconds), the
    triad at the quick size (from main memory), saved as one run; foreign load is not read
    (the tests run beside each other: a point marked contended would not be trusted)."""
    from dataclasses import replace

    from explorer.kernels import calibrate
    from explorer.kernels.runner import drive, run

    monkeypatch.setenv("ROOFLINE_EXPLORER_DATA", str(tmp_path))
    # Products at smoke sizes on a shared machine are no quiet calibration: the held-out check
    # (tests of its own) is opened wide, so that this tests the way a profile goes and is used.
    monkeypatch.setattr(calibrate, "HELD_OUT_MEDIAN", 10.0)
    monkeypatch.setattr(calibrate, "HELD_OUT_EACH", 100.0)
    products = drive(run(numpy_backend, [calibrate.SUITE], "smoke", load=None))
    stream = drive(run(numpy_backend, ["stream"], "quick", load=None))
    saved = tmp_path / "run.json"
    replace(stream, suites=calibrate.SUITES, points=products.points + stream.points).save(saved)
    code, out, err = _cli("calibrate", "--results", str(saved))
    assert code == 0, err
    [path] = (tmp_path / "efficiency").glob("calibrated-*.yaml")
    [profile] = read_efficiencies(path)
    assert "numpy" in profile.measured and f"wrote {path}" in out
    assert "held-out products, predicted ÷ measured" in out
    if profile.machine:  # this machine's CPU is not catalogued: its shares apply to no device
        assert profile.devices == () and "is not in the catalogue" in out
        code, out, _ = _cli("analyze", "--model", "gpt2", "--hardware", "epyc-9654", "--efficiency",
                            "calibrated")
        assert "no calibration in the data folder covers AMD EPYC 9654" in out
    else:
        [device] = profile.devices
        code, out, _ = _cli("analyze", "--model", "gpt2", "--hardware", device, "--efficiency", "calibrated")
        assert code == 0 and "with calibrated efficiency" in out and profile.name in out


MEDIAN = 0.12  # the held-out median error the model is held to here (see the test)


@pytest.mark.slow
def test_a_calibration_predicts_products_it_never_saw(numpy_backend):
    """Calibrate on this CPU (the quick sizes: matrices beyond its caches), then predict the
    held-out shapes measured in the same run, among the others: the median error within
    ``MEDIAN``. On this 2-core VM it reads 4-5 % from run to run (the 24-row and 1024-deep
    products at 0.84-1.27 in one run or another). It read 12-20 % while the fit took shares of
    a peak derived at the clock the VM reports (166 GFLOP/s, under products measured at 200):
    gemm pinned at 1 bent the other factors. A CPU BLAS may take another code path for one
    shape from one run to the next (a 24-row product has run twice as slow in one run as in
    the next), so a single shape is only held to 2.5×."""
    def close(ratios) -> bool:
        median = statistics.median(abs(r - 1) for r in ratios)
        return median <= MEDIAN and all(0.4 <= r <= 2.5 for r in ratios)

    ratios = _held_out_ratios(numpy_backend)
    if not close(ratios):
        # On this shared 2-core VM one run in a few drifts (another tenant's load the trust
        # check does not see): a fresh run decides alone; a model that misses misses twice.
        ratios = _held_out_ratios(numpy_backend)
    assert len(ratios) == len(HELD_OUT_ROWS) + len(HELD_OUT_DEPTHS)
    assert statistics.median(abs(r - 1) for r in ratios) <= MEDIAN
    assert all(0.4 <= r <= 2.5 for r in ratios)


def _held_out_ratios(numpy_backend) -> list[float]:
    """Measure the quick suites, fit a calibration, and predict the held-out products:
    predicted ÷ measured for each (skips the test when the machine was busy)."""
    from explorer.core.hardware.catalog import load_catalog
    from explorer.kernels.runner import drive, run

    results = drive(run(numpy_backend, list(calibrate.SUITES), "quick"))
    doubtful = [p for p in results.points if not p.trusted]
    if doubtful:  # other programs were busy: a timing is not this machine's, and nothing is fitted
        pytest.skip(f"this machine was busy while it measured ({len(doubtful)} of {len(results.points)} "
                    f"points not trusted: {doubtful[0].doubt}); predicting held-out products needs a "
                    "quiet machine")
    roofs = calibrate.roofs_for(results, load_catalog())
    profile = calibrate.fit(results, roofs, "numpy")
    ratios = [ratio for _, ratio in calibrate.held_out_errors(results, profile, roofs)]
    print("held-out predicted ÷ measured:", [round(r, 2) for r in ratios], "fit error", profile.fit_error)
    return ratios


def test_calibrate_fits_a_saved_gpu_run_and_borrows_the_published_rest(tmp_path):
    """A run saved by bench on an H100 (here made from known factors): the device is the
    catalogue's, so the profile is linked to it and the factors calibration does not
    measure come from its published family, named as such."""
    results = _results(_profile(TRUE))
    machine = {"backend": "cupy", "device_kind": "gpu", "gpu": {"name": "NVIDIA H100 80GB HBM3"}}
    path = tmp_path / "run.json"
    Results(machine, "cuda-events", "quick", results.suites, results.points).save(path)
    out_path = tmp_path / "h100.yaml"
    code, out, err = _cli("calibrate", "--results", str(path), "--out", str(out_path))
    assert code == 0, err
    [profile] = read_efficiencies(out_path)
    assert profile.devices == ("h100-sxm",) and profile.name.startswith("h100-sxm, calibrated")
    assert profile.value("link") == 0.82 and "published for NVIDIA H100" in profile.factors["link"].note
    # The factors were made for a 1000 TFLOP/s, 2 TB/s device; against the H100's own roofs
    # the fit differs, but it is a fit of the same times: the held-out products follow.
    assert "held-out products" in out


def _slowed_run(tmp_path):
    """An H100 run whose held-out products took three times what the fitted shapes say."""
    results = _results(_profile(TRUE))
    slowed = [_point(p.kernel, p.size["m"], p.size["n"], p.size["k"], 3 * p.time_median_s)
              if p.kernel.endswith(HELD_OUT) else p for p in results.points]
    path = tmp_path / "run.json"
    machine = {"backend": "cupy", "device_kind": "gpu", "gpu": {"name": "NVIDIA H100 80GB HBM3"}}
    Results(machine, "cuda-events", "quick", results.suites, tuple(slowed)).save(path)
    return path


def test_a_calibration_that_misses_its_held_out_products_is_kept_aside_not_used(tmp_path, monkeypatch):
    """A fit is installed where --efficiency calibrated reads it only when it predicts the
    shapes it never saw: this one is written to efficiency/rejected/, named with its errors,
    and the command exits 1; analyze then says no calibration covers the H100."""
    monkeypatch.setenv("ROOFLINE_EXPLORER_DATA", str(tmp_path / "data"))
    code, out, err = _cli("calibrate", "--results", str(_slowed_run(tmp_path)))
    rejected = tmp_path / "data" / "efficiency" / "rejected" / "calibrated-h100-sxm.yaml"
    assert code == 1 and rejected.is_file()
    assert not (tmp_path / "data" / "efficiency" / rejected.name).exists()
    assert "the calibration is not used: it predicts the held-out products within 67% (median)" in err
    assert f"wrote {rejected}, where --efficiency calibrated does not read it" in out
    assert calibrated()[0] == ()
    _, out, _ = _cli("analyze", "--model", "gpt2", "--hardware", "h100-sxm", "--efficiency", "calibrated")
    assert "no calibration in the data folder covers NVIDIA H100" in out


def test_a_rejected_calibration_written_where_asked_still_exits_1(tmp_path):
    out_path = tmp_path / "x.yaml"
    code, _, err = _cli("calibrate", "--results", str(_slowed_run(tmp_path)), "--out", str(out_path))
    assert code == 1 and (tmp_path / "x.yaml").is_file() and "the calibration is not used" in err
