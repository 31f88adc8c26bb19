"""The energy roofline picture: the circuit curve with its balance and the device's time
ridge, the workload's ops on the curve, a measured run's fitted roof and kernels, labels on
the plot (never overlapping), and the picture from the command line and the window."""

import json

import pytest

from explorer.chart.elements import ElementKind, Page
from explorer.chart.energy_chart import energy_chart, energy_view
from explorer.chart.palette import THEMES
from explorer.chart.snapshot import Snapshot
from explorer.core.model.session import Session
from explorer.core.model.workload import WorkloadParams
from explorer.core.units import format_si
from explorer.core.words.energy_words import energy_sentences
from explorer.document import Document
from explorer.kernels.results import Point, Results
from tests.cli.test_cli import run
from tests.core.test_energy import TRUE, metered_points, sweep
from tests.test_chart import PAGES, problems


def doc_of(catalog, models, **params) -> Document:
    return Document(catalog, models, Session(model="llama-3-8b", hardware=("h100-sxm",),
                                             params=WorkloadParams(**params)))


def metered_run(path) -> None:
    """An intensity sweep whose powers come from known constants (``tests.core.test_energy``)."""
    Results({"backend": "cupy"}, "cuda-event", "quick", ("intensity",), metered_points()).save(path)


@pytest.mark.parametrize("params", [dict(dtype="bf16"), dict(dtype="bf16", phase="prefill", seq=2048),
                                    dict(dtype="fp32", batch=64)])
@pytest.mark.parametrize("size", ["1024x768", "1366x768", "presenting", "slide 16:9", "slide 4:3"])
def test_the_circuit_curve_its_balance_and_the_ridge_are_drawn_and_labelled(catalog, models, params, size):
    view = energy_view(Snapshot.of(doc_of(catalog, models, **params)))
    chart = energy_chart(view, PAGES[size], "light")
    roof = view.roofs[0]
    (curve,) = [ln for ln in chart.lines if ln.kind == ElementKind.ROOF and len(ln.points) > 2]
    low, high = chart.x_range
    for x, y in curve.points[::20]:  # the curve is the roof's efficiency, point by point
        intensity = low * (high / low) ** ((x - chart.plot.left) / chart.plot.width)
        assert y == pytest.approx(chart.y_px(float(roof.flops_per_joule(intensity))), abs=0.01)
    (diamond,) = [m for m in chart.markers if m.kind == ElementKind.RIDGE and m.name == "energy balance"]
    assert diamond.center[0] == pytest.approx(chart.x_px(roof.balance))
    ridge = [ln for ln in chart.lines if ln.tooltip.startswith("H100 SXM time ridge")]
    assert ridge and ridge[0].points[0][0] == pytest.approx(chart.x_px(view.ridge[1]))
    texts = {t.text for t in chart.texts}
    balance = {"bf16": "217", "fp32": "70.7"}[params["dtype"]]  # 162.5 pJ over 0.75 or 2.3 pJ
    assert {f"energy balance {balance} FLOP/byte", f"balance {balance}"} & texts  # (the short where crowded)
    assert "H100 SXM time ridge 295 FLOP/byte" in texts or params["dtype"] == "fp32"
    assert not chart.overflow and not problems(chart)
    (star,) = [m for m in chart.markers if m.kind == ElementKind.STEP]
    step = view.step
    assert star.center == pytest.approx((chart.x_px(step.intensity), chart.y_px(step.flops_per_joule)))


def test_a_measured_run_with_power_gets_its_fitted_roof_and_its_kernels(catalog, models, tmp_path):
    path = tmp_path / "run.json"
    metered_run(path)
    doc = doc_of(catalog, models, dtype="bf16")
    doc.add_results(str(path))
    view = energy_view(Snapshot.of(doc))
    circuit, fitted = view.roofs
    assert not circuit.measured
    assert fitted.measured and fitted.precision == "fp32" and fitted.label == "run.json: fitted, fp32"
    assert fitted.constants.flop_j == pytest.approx(TRUE.flop_j, rel=1e-6)
    assert fitted.constants.byte_j == pytest.approx(TRUE.byte_j, rel=1e-6)
    assert fitted.constants.constant_w == pytest.approx(TRUE.constant_w, rel=1e-6)
    assert len(view.measured) == 22 and all(label == fitted.label for label, _ in view.measured)
    for (_, p), s in zip(view.measured, sweep(TRUE), strict=True):  # its FLOPs over its measured joules
        assert p.joules == pytest.approx(s.joules) and p.flops_per_joule == pytest.approx(s.flops / s.joules)
        assert p.intensity == pytest.approx(s.flops / s.bytes)
    chart = energy_chart(view, Page.slide(1600, 900), "dark")
    curves = [ln for ln in chart.lines if ln.kind == ElementKind.ROOF and len(ln.points) > 2]
    assert [bool(ln.stroke.dash) for ln in curves] == [False, True]  # the measured roof dashed
    assert curves[1].stroke.colour == THEMES["dark"].measured
    squares = [m for m in chart.markers if m.kind == ElementKind.MEASURED]
    assert len(squares) == 22 and not problems(chart)
    assert fitted.timed  # its time roof from its own kernels' best rates (the run has no stream suite)
    for _, p in view.measured:  # slower than their roof, each spends more on constant power: under it
        assert p.flops_per_joule <= float(fitted.flops_per_joule(p.intensity)) * (1 + 1e-9)
    words = " ".join(energy_sentences(view))
    assert "run.json: fitted, fp32: ε_flop 0.6 ± " in words and "π₀ 90 ± " in words
    best = max(s.flops / s.joules for s in sweep(TRUE))
    assert f"its 22 kernels with a measured power reach up to {format_si(best, 'FLOP/J')}" in words


def test_two_runs_are_told_apart_by_their_dashes(catalog, models, tmp_path):
    doc = doc_of(catalog, models, dtype="bf16")
    for name in ("a.json", "b.json"):
        metered_run(tmp_path / name)
        doc.add_results(str(tmp_path / name))
    view = energy_view(Snapshot.of(doc))
    chart = energy_chart(view, Page.slide(1600, 900), "light")
    curves = [ln for ln in chart.lines if ln.kind == ElementKind.ROOF and len(ln.points) > 2]
    assert len(curves) == 3 and len({ln.stroke.dash for ln in curves}) == 3


def test_a_run_without_power_says_so_and_draws_no_roof(catalog, models, tmp_path):
    path = tmp_path / "plain.json"
    Results({"backend": "numpy"}, "perf_counter_ns", "quick", ("stream",),
            (Point("stream", "triad", "fp32", {"n": 1}, {}, 2, 24, 1e-3, 1e-3, 1e-3),)).save(path)
    doc = doc_of(catalog, models, dtype="bf16")
    doc.add_results(str(path))
    view = energy_view(Snapshot.of(doc))
    assert len(view.roofs) == 1 and not view.measured
    assert view.notes == ("plain.json: no power was measured with its main-memory kernels",)


def test_export_draws_the_energy_view_and_describes_it_as_json_not_csv(tmp_path):
    svg = tmp_path / "energy.svg"
    code, _, err = run("export", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--view", "energy",
                       "--out", str(svg))
    assert code == 0, err
    text = svg.read_text()
    assert "Energy efficiency (FLOP/J)" in text and "energy balance 217 FLOP/byte" in text
    code, _, err = run("export", "--model", "llama-3-8b", "--view", "energy", "--out",
                       str(tmp_path / "e.csv"))
    assert code == 2 and "the energy view has no rows of points and roofs" in err
    code, _, err = run("export", "--model", "llama-3-8b", "--view", "energy", "--out",
                       str(tmp_path / "e.json"))  # the picture's description
    assert code == 0, err
    texts = [t["text"] for t in json.loads((tmp_path / "e.json").read_text())["texts"]]
    assert "Energy efficiency (FLOP/J)" in texts and "energy balance 217 FLOP/byte" in texts
    code, _, err = run("export", "--scene", "decode-batching", "--view", "energy", "--out",
                       str(tmp_path / "e.pptx"))
    assert code == 2 and "the energy view draws a workload, not a scene" in err
