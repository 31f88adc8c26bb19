"""The scaling-laws slide: a scene step that names a training budget exports the fits'
isoFLOP curves, each optimum where the fit puts it, the workload's model on each curve and
the rule of thumb, with every label on the plot or in the key and none overlapping."""

import json

import pytest

from explorer.chart.data import chart_data
from explorer.chart.elements import Page
from explorer.chart.scaling_chart import scaling_chart
from explorer.core.analysis.scaling_laws import BESIROGLU, HOFFMANN, Placement, rule_of_thumb
from explorer.core.files.datafile import DataFileError
from explorer.core.units import format_parameters
from tests.cli.test_cli import run
from tests.test_chart import PAGES, problems

BUDGET = 5.76e23


@pytest.mark.parametrize("page", ["slide 16:9", "slide 4:3", "1024x768"])
def test_each_optimum_sits_where_its_fit_puts_it_and_every_label_has_room(models, page):
    model = models["llama-3-70b"]
    chart = scaling_chart(model, BUDGET, PAGES[page], "light", "Compute-optimal training", "a caption")
    assert not problems(chart)
    data = chart_data(chart)
    assert data["x_axis"].startswith("parameters") and data["y_axis"].startswith("predicted loss")
    points = {m["name"]: m for m in data["markers"] if m["kind"] == "curve"}
    words = [t["text"] for t in data["texts"]]
    everything = " ".join(words)  # a key row may wrap
    for fit in (BESIROGLU, HOFFMANN):
        n_opt, d_opt = fit.optimal(BUDGET)
        star = points[f"optimum, {fit.name}"]
        assert star["parameters"] == pytest.approx(n_opt, rel=1e-6)
        assert star["loss"] == pytest.approx(fit.loss(n_opt, d_opt), rel=1e-6)
        ring = points[f"{model.name}, {fit.name}"]
        assert ring["parameters"] == pytest.approx(model.parameter_count(), rel=1e-6)
        assert ring["loss"] == pytest.approx(Placement(fit, BUDGET, model.parameter_count()).loss, rel=1e-6)
        # on the plot (in full where it fits), or in the key
        assert format_parameters(n_opt) in everything
        if page.startswith("slide"):
            assert f"{format_parameters(n_opt)} on {format_parameters(d_opt)} tokens" in everything
    assert f"~20 tokens per parameter: {format_parameters(rule_of_thumb(BUDGET)[0])}" in everything
    assert "72.2 B" in everything  # Besiroglu et al.'s optimum, as the caption says


def test_the_compute_optimal_scene_exports_the_scaling_laws_on_its_second_step(tmp_path):
    for step, kinds in ((1, {"roof"}), (2, {"curve"})):
        out = tmp_path / f"step{step}.json"
        code, _, err = run("export", "--scene", "compute-optimal-training", "--step", str(step),
                           "--out", str(out))
        assert code == 0, err
        data = json.loads(out.read_text())
        drawn = {line["kind"] for line in data["lines"]} & {"roof", "curve"}
        assert drawn == kinds
        assert data["title"].startswith("Compute-optimal training")


def test_a_scene_s_budget_out_of_range_is_refused_by_name(catalog, models, tmp_path):
    from explorer.core.words.scenes import load_scene_file

    path = tmp_path / "scenes.yaml"
    path.write_text("schema: 1\nscenes:\n- id: s\n  title: t\n  start: {hardware: [h100-sxm], workload: "
                    "{model: llama-3-8b}}\n  steps:\n  - caption: c\n    scaling_laws: 1.0e+40\n")
    with pytest.raises(DataFileError, match=r"steps\[0\]\.scaling_laws.*from 1e\+18 to 1e\+28"):
        load_scene_file(path, catalog, models, ())


def test_a_narrow_page_keeps_the_scaling_slide_legible(models):
    chart = scaling_chart(models["llama-3-8b"], 1e21, Page.screen(640, 560), "dark", "t", "")
    assert not problems(chart)
    assert [m.name for m in chart.markers if m.kind == "curve" and m.symbol == "star"] == [
        f"optimum, {BESIROGLU.name}", f"optimum, {HOFFMANN.name}"]


@pytest.mark.parametrize("budget", [1e18, 1e22, 1e28])
def test_every_budget_draws_with_round_ticks_even_where_the_loss_spans_a_whole_unit(models, budget):
    """A 405 B model at 1e18 FLOPs sits far up its curve: the loss axis spans more than one
    unit and still takes round ticks (it raised StopIteration)."""
    chart = scaling_chart(models["llama-3.1-405b"], budget, PAGES["slide 16:9"], "light", "t", "")
    ticks = [float(t.text) for t in chart.texts if t.kind == "tick" and t.origin[0] < chart.plot.left]
    assert 2 <= len(ticks) <= 8 and not problems(chart)


def test_the_scaling_slide_as_csv_lists_its_points_and_curves(tmp_path):
    out = tmp_path / "s.csv"
    code, _, err = run("export", "--scene", "compute-optimal-training", "--step", "2", "--out", str(out))
    assert code == 0, err
    rows = out.read_text().splitlines()
    assert rows[0] == "element,name,parameters,loss,colour"
    optimum = next(r for r in rows if r.startswith(f"point,\"optimum, {BESIROGLU.name}\""))
    assert float(optimum.split(",")[-3]) == pytest.approx(BESIROGLU.optimal(BUDGET)[0], rel=1e-4)
    assert sum(r.startswith("curve,") for r in rows) > 100
