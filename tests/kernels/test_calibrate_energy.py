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
    code, text, err = _cli("analyze", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--dtype", "bf16",
                           "--efficiency", "calibrated", "--json")
    assert code == 0, err
    report = json.loads(text)
    fitted, totals = report["energy"]["fitted"], report["totals"]
    seconds = totals["expected_time_s"]
    joules = totals["flops"] * 0.6e-12 + totals["bytes"] * 40e-12 + 90.0 * seconds  # one device
    assert fitted["energy_j"] == pytest.approx(joules, rel=1e-4)
    assert fitted["joules_per_token"] == pytest.approx(joules, rel=1e-4)  # batch 1: a token a step
    assert fitted["power_w"] == pytest.approx(joules / seconds, rel=1e-4)
    assert fitted["constants"]["precision"] == "fp32"
    assert "ε_flop measured for fp32; the step runs bf16" in fitted["source"]
    assert report["energy"]["upper_bound"] is True  # the TDP bound stays beside it
    code, text, _ = _cli("analyze", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--efficiency",
                         "calibrated")
    assert "energy at this machine's fitted constants" in text
    from explorer.core.analysis.analysis import analyze
    from explorer.core.analysis.expected import expected_for
    from explorer.core.analysis.report import fitted_energy, step_summary
    from explorer.core.hardware.catalog import load_catalog
    from explorer.core.model.presets import load_models
    from explorer.core.model.workload import WorkloadParams
    from explorer.core.units import format_si

    a = analyze(load_models()["llama-3-8b"], WorkloadParams(efficiency="calibrated"),
                load_catalog()["h100-sxm"])
    e = expected_for(a)
    mine = fitted_energy(a, e)
    assert step_summary(a, e).endswith(f"; {format_si(mine.joules_per_item, 'J')} a token, "
                                       f"{format_si(mine.power_w, 'W')} at this machine's fitted energy "
                                       "constants")


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
    circuit, mine = energy_view(Snapshot.of(doc)).roofs
    assert not circuit.measured and mine.measured and mine.label.endswith(": fitted, fp32")
    assert mine.constants.constant_w == pytest.approx(90.0, rel=1e-5) and mine.timed
    h100 = catalog["h100-sxm"]
    assert mine.bandwidth == pytest.approx(h100.bandwidth_bytes_per_s * doc.expected().efficiency.bandwidth)


def test_a_calibration_without_power_keeps_none_and_says_why(tmp_path):
    saved_run(tmp_path / "run.json", metered=False)
    code, out, err = _cli("calibrate", "--results", str(tmp_path / "run.json"), "--out",
                          str(tmp_path / "p.yaml"))
    assert code == 0, err
    assert read_efficiencies(tmp_path / "p.yaml")[0].energy is None
    assert "energy: not kept (no power was measured (see the run's notes))" in out


def test_the_sweep_joins_the_calibration_where_power_can_be_read(monkeypatch, numpy_backend):
    monkeypatch.setattr(energy, "meter_for", lambda backend: energy.Unmeasurable("a virtual machine"))
    assert calibrate.suites_for(numpy_backend) == ["shapes", "stream"]
    monkeypatch.setattr(energy, "meter_for", lambda backend: object())
    assert calibrate.suites_for(numpy_backend) == ["shapes", "stream", "intensity"]


@pytest.mark.parametrize(("energy_yaml", "field", "words"), [
    ("{precision: fp32, flop_j: -1.0e-12, byte_j: 4.0e-11, constant_w: 90, source: s}", "energy.flop_j",
     "above 0"),
    ("{precision: fp32, flop_j: 1e-12, byte_j: 4.0e-11, constant_w: 90, source: s}", "energy.flop_j",
     "with a point and a signed exponent"),
    ("{precision: fp3, flop_j: 1.0e-12, byte_j: 4.0e-11, constant_w: 90, source: s}", "energy.precision",
     "fp3"),
    ("{precision: fp32, flop_j: 1.0e-12, byte_j: 4.0e-11, constant_w: 90, errors: [1], source: s}",
     "energy.errors", "three standard errors"),
])
def test_a_broken_energy_block_is_refused_by_field(tmp_path, energy_yaml, field, words):
    from explorer.core.hardware.efficiency import to_text

    profile = calibrate.fit(_results(_profile(TRUE)), calibrate.Roofs(1e15, 2e12, "h100-sxm", True,
                            "gpu", "x"), "cupy", "2026-12-01T00:00:00+00:00")
    text = to_text(profile).rstrip() + f"\n  energy: {energy_yaml}\n"
    with pytest.raises(DataFileError, match=words) as info:
        read_efficiencies(tmp_path / "p.yaml", text)
    assert info.value.field == field
