"""A calibration whose run measured power keeps the energy constants fitted to it: the
intensity sweep joins its suites where power can be read, the profile file keeps ε_flop,
ε_byte and π₀, and ``analyze`` and the energy roofline use them for the calibrated device."""

import json

import pytest

from explorer.core.files.datafile import DataFileError
from explorer.core.hardware.efficiency import read_efficiencies
from explorer.kernels import calibrate, energy
from explorer.kernels.results import Results
from tests.core.test_energy import TRUE as ENERGY
from tests.core.test_energy import metered_points
from tests.kernels.test_calibrate import TRUE, _cli, _profile, _results

H100 = {"backend": "cupy", "device_kind": "gpu", "gpu": {"name": "NVIDIA H100 80GB HBM3"}}


def saved_run(path, metered: bool = True) -> None:
    results = _results(_profile(TRUE))
    points = results.points + (metered_points() if metered else ())
    Results(H100, "cuda-events", "quick", (*results.suites, "intensity"), points).save(path)


def test_a_calibration_with_power_keeps_its_energy_constants(tmp_path, monkeypatch):
    monkeypatch.setenv("ROOFLINE_EXPLORER_DATA", str(tmp_path))
    saved_run(tmp_path / "run.json")
    code, out, err = _cli("calibrate", "--results", str(tmp_path / "run.json"))
    assert code == 0, err
    [path] = (tmp_path / "efficiency").glob("calibrated-*.yaml")
    [profile] = read_efficiencies(path)
    kept = profile.energy
    assert kept.precision == "fp32"
    assert kept.constants.flop_j == pytest.approx(ENERGY.flop_j, rel=1e-5)
    assert kept.constants.byte_j == pytest.approx(ENERGY.byte_j, rel=1e-5)
    assert kept.constants.constant_w == pytest.approx(ENERGY.constant_w, rel=1e-5)
    assert "fitted to 22 fp32 kernels of this run (intensity)" in kept.constants.source
    assert "energy (fp32): ε_flop 0.6 ± " in out and "π₀ 90 ± " in out
    code, text, err = _cli("analyze", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--dtype", "fp32",
                           "--efficiency", "calibrated", "--json")
    assert code == 0, err
    report = json.loads(text)
    fitted, totals = report["energy"]["fitted"], report["totals"]
    seconds = totals["expected_time_s"]
    joules = totals["flops"] * 0.6e-12 + totals["bytes"] * 40e-12 + 90.0 * seconds  # one device
    assert fitted["energy_j"] == pytest.approx(joules, rel=1e-4)
    assert fitted["joules_per_token"] == pytest.approx(joules, rel=1e-4)  # batch 1: a token a step
    assert fitted["power_w"] == pytest.approx(joules / seconds, rel=1e-4)
    assert fitted["constants"]["precision"] == "fp32" and report["energy"]["fitted_note"] is None
    assert report["energy"]["joules_estimate"] > report["energy"]["joules_lower_bound"] > 0  # beside it
    code, text, err = _cli("analyze", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--dtype", "bf16",
                           "--efficiency", "calibrated", "--json")
    energy_json = json.loads(text)["energy"]
    assert energy_json["fitted"] is None  # an fp32 FLOP's energy says nothing of a bf16 tensor-core FLOP's
    assert energy_json["fitted_note"].startswith(
        "the calibration's energy constants are for fp32 arithmetic, the step runs bf16")
    code, text, _ = _cli("analyze", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--dtype", "fp32",
                         "--efficiency", "calibrated")
    assert "energy at this machine's fitted constants" in text
    from explorer.core.analysis.analysis import analyze
    from explorer.core.analysis.energy_report import fitted_energy
    from explorer.core.analysis.expected import expected_for
    from explorer.core.analysis.report_words import step_summary
    from explorer.core.hardware.catalog import load_catalog
    from explorer.core.model.presets import load_models
    from explorer.core.model.workload import WorkloadParams
    from explorer.core.units import format_si

    a = analyze(load_models()["llama-3-8b"], WorkloadParams(efficiency="calibrated", dtype="fp32"),
                load_catalog()["h100-sxm"])
    e = expected_for(a)
    mine = fitted_energy(a, e)
    assert step_summary(a, e).endswith(f"; {format_si(mine.joules_per_item, 'J')} a token, "
                                       f"{format_si(mine.power_w, 'W')} at this machine's fitted energy "
                                       "constants")


def test_constants_that_would_pass_the_tdp_are_not_applied(tmp_path, monkeypatch):
    """π₀ of 900 W on a 700 W device: the step cannot have run so (a power cap would have
    stretched it); the TDP bound alone is given, and why."""
    from explorer.core.hardware.energy_constants import EnergyConstants

    monkeypatch.setenv("ROOFLINE_EXPLORER_DATA", str(tmp_path))
    results = _results(_profile(TRUE))
    hot = metered_points(EnergyConstants(0.6e-12, 40e-12, 900.0))
    Results(H100, "cuda-events", "quick", (*results.suites, "intensity"), results.points + hot).save(
        tmp_path / "run.json")
    assert _cli("calibrate", "--results", str(tmp_path / "run.json"))[0] == 0
    code, text, _ = _cli("analyze", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--dtype", "fp32",
                         "--efficiency", "calibrated", "--json")
    energy_json = json.loads(text)["energy"]
    assert code == 0 and energy_json["fitted"] is None and "above the 700 W TDP" in energy_json["fitted_note"]


def test_the_energy_roofline_draws_the_calibrated_device_s_roof(tmp_path, monkeypatch, catalog, models):
    from explorer.chart.energy_chart import energy_view
    from explorer.chart.snapshot import Snapshot
    from explorer.core.model.session import Session
    from explorer.core.model.workload import WorkloadParams
    from explorer.document import Document

    monkeypatch.setenv("ROOFLINE_EXPLORER_DATA", str(tmp_path))
    saved_run(tmp_path / "run.json")
    assert _cli("calibrate", "--results", str(tmp_path / "run.json"))[0] == 0
    doc = Document(catalog, models, Session(model="llama-3-8b", hardware=("h100-sxm",),
                                            params=WorkloadParams(efficiency="calibrated")))
    view = energy_view(Snapshot.of(doc))
    circuit, mine = view.roofs
    assert not circuit.measured and mine.measured and mine.label.endswith(": fitted, fp32")
    assert mine.constants.constant_w == pytest.approx(90.0, rel=1e-5) and mine.timed
    h100 = catalog["h100-sxm"]
    assert mine.bandwidth == pytest.approx(h100.bandwidth_bytes_per_s * doc.expected().efficiency.bandwidth)
    assert mine.peak_flops == h100.vector_peak("fp32").flops_per_s  # the sweep's FMA chains
    from explorer.core.words.energy_words import energy_sentences

    words = " ".join(energy_sentences(view))
    assert ": fitted, fp32: ε_flop 0.6 ± " in words
    assert "with a measured power reach" not in words  # no kernels of its own are drawn


def test_a_calibration_without_power_keeps_none_and_says_why(tmp_path):
    saved_run(tmp_path / "run.json", metered=False)
    code, out, err = _cli("calibrate", "--results", str(tmp_path / "run.json"), "--out",
                          str(tmp_path / "p.yaml"))
    assert code == 0, err
    assert read_efficiencies(tmp_path / "p.yaml")[0].energy is None
    assert "energy: not kept (no power was measured (see the run's notes))" in out


def test_the_sweep_joins_the_calibration_where_power_can_be_read():
    assert calibrate.suites_for(energy.Unmeasurable("a virtual machine")) == ["shapes", "stream"]
    assert calibrate.suites_for(object()) == ["shapes", "stream", "intensity"]


def _broken(tmp_path, energy_yaml: str):
    from explorer.core.hardware.efficiency import to_text

    roofs = calibrate.Roofs(1e15, 2e12, "h100-sxm", True, "gpu", "x", "y")
    profile = calibrate.fit(_results(_profile(TRUE)), roofs, "cupy", "2026-12-01T00:00:00+00:00")
    return read_efficiencies(tmp_path / "p.yaml", to_text(profile).rstrip() + f"\n  energy: {energy_yaml}\n")


GOOD = "precision: fp32, flop_j: 1.0e-12, byte_j: 4.0e-11, source: s"


@pytest.mark.parametrize(("energy_yaml", "field", "words"), [
    ("{precision: fp32, flop_j: -1.0e-12, byte_j: 4.0e-11, constant_w: 90, source: s}", "energy.flop_j",
     "above 0"),
    ("{precision: fp32, flop_j: 1e-12, byte_j: 4.0e-11, constant_w: 90, source: s}", "energy.flop_j",
     "with a point and a signed exponent"),
    ("{precision: fp3, flop_j: 1.0e-12, byte_j: 4.0e-11, constant_w: 90, source: s}", "energy.precision",
     "fp3"),
    (f"{{{GOOD}, constant_w: 90, errors: [1]}}", "energy.errors", "three standard errors"),
    (f"{{{GOOD}, constant_w: 90, errors: [.inf, 1.0e-12, 1.0]}}", "energy.errors", "a finite number"),
    (f"{{{GOOD}, constant_w: 90, errors: [1.0e-13, 1.0e-12, 1e1]}}", "energy.errors",
     "with a point and a signed exponent"),
    (f"{{{GOOD}, constant_w: .nan}}", "energy.constant_w", "a finite number"),
    ("[1.0e-12]", "energy", "expected the fitted constants"),
])
def test_a_broken_energy_block_is_refused_by_field(tmp_path, energy_yaml, field, words):
    with pytest.raises(DataFileError, match=words) as info:
        _broken(tmp_path, energy_yaml)
    assert info.value.field == field


def test_no_constant_power_is_kept_as_zero_and_a_null_block_as_none(tmp_path):
    [profile] = _broken(tmp_path, f"{{{GOOD}, constant_w: -0.0}}")
    assert str(profile.energy.constants.constant_w) == "0.0"
    assert _broken(tmp_path, "null")[0].energy is None
