"""Each scene step names the picture its point needs (``view:``), the scenes' JSON says so,
and export draws that picture: the serving chart, the energy roofline, the memory bar, or
each op at its expected time, told apart by the chart description's own elements."""

import io
import json

import pytest

from explorer.commands import main as cli
from explorer.core.analysis.expected import expected_for
from explorer.core.units import format_bytes
from explorer.core.words.scenes import View, open_scenes
from explorer.document import Document

NAMED = {  # scene → the view of each of its steps
    "serving-batching": ["serving"] * 4,
    "moving-data": ["energy"] * 4,
    "kv-cache-limit": ["memory"] * 4,
    "real-kernels": ["roofline", "expected", "roofline", "roofline"],
    "compute-optimal-training": ["roofline", "scaling", "roofline"],
}


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    return cli.run(cli.parse_args(list(argv)), out, err), out.getvalue(), err.getvalue()


@pytest.mark.parametrize("scene, views", NAMED.items())
def test_the_scenes_json_names_each_step_s_view(scene, views):
    code, out, err = run("scenes", "show", scene, "--json")
    assert code == 0, err
    assert [s["state"]["view"] for s in json.loads(out)["steps"]] == views


def test_a_step_without_a_view_shows_the_roofline(catalog, models):
    scenes = open_scenes(catalog, models)
    assert scenes["decode-batching"].view_at(0) == View.ROOFLINE


def exported(tmp_path, scene, step) -> dict:
    path = tmp_path / f"{scene}-{step}.json"
    code, _, err = run("export", "--scene", scene, "--step", str(step), "--out", str(path))
    assert code == 0, err
    return json.loads(path.read_text())


def kinds(chart: dict, part: str) -> set[str]:
    return {e["kind"] for e in chart[part]}


@pytest.mark.parametrize("step", [1, 2, 3, 4])
def test_the_serving_scene_s_slides_are_the_serving_chart(tmp_path, step, catalog, models):
    chart = exported(tmp_path, "serving-batching", step)
    assert "serving" in kinds(chart, "lines") and "roof" not in kinds(chart, "lines")
    assert any(t["text"].startswith("Tokens/s a user") for t in chart["texts"])
    # the step's own batch is ringed: 1, 32, 128, 248 users
    batch = open_scenes(catalog, models)["serving-batching"].session_at(step - 1).params.batch
    ring = [m for m in chart["markers"] if m["kind"] == "selection"]
    (served,) = [m for m in chart["markers"] if m["kind"] == "serving" and m["name"] == f"batch {batch}"]
    assert len(ring) == 1 and ring[0]["center_px"] == served["center_px"]
    assert ring[0]["name"] == f"this step: batch {batch}"
    assert any(t["text"] == f"this step: batch {batch:,}" for t in chart["texts"] if t["kind"] == "key")


@pytest.mark.parametrize("step", [1, 2, 3, 4])
def test_the_moving_data_scene_s_slides_are_the_energy_roofline(tmp_path, step):
    chart = exported(tmp_path, "moving-data", step)
    assert any(t["text"] == "Energy efficiency (FLOP/J)" for t in chart["texts"])
    assert not any(t["text"] == "Performance (FLOP/s)" for t in chart["texts"])


@pytest.mark.parametrize("step, fits", [(1, True), (2, False), (3, True), (4, True)])
def test_the_kv_cache_scene_s_slides_are_the_memory_bar(tmp_path, step, fits, catalog, models):
    chart = exported(tmp_path, "kv-cache-limit", step)
    assert "memory" in kinds(chart, "lines") and "roof" not in kinds(chart, "lines")
    doc = Document(catalog, models)
    doc.replace_session(open_scenes(catalog, models)["kv-cache-limit"].session_at(step - 1), "test")
    t = doc.analysis().totals
    assert t.fits_in_memory is fits
    notes = [x["text"] for x in chart["texts"] if x["kind"] == "note"]
    budget = format_bytes(t.memory_budget_bytes)
    assert notes == [f"{format_bytes(t.memory_required_bytes)} of the {budget} budget: fits" if fits else
                     f"Does not fit: {format_bytes(t.memory_required_bytes)}, over the {budget} budget"]
    # each part's bar is as long as its bytes, on one scale
    parts = {x["tooltip"].split(":")[0]: x["points_px"] for x in chart["lines"]
             if x["kind"] == "memory" and x["tooltip"].split(":")[0] in ("weights", "KV cache")}
    lengths = {name: p[1][0] - p[0][0] for name, p in parts.items()}
    ratio = lengths["weights"] / lengths["KV cache"]
    assert ratio == pytest.approx(t.weight_bytes / t.kv_cache_bytes, rel=1e-9)
    red = [x for x in chart["lines"] if x["kind"] == "memory" and x["tooltip"].startswith("over the budget")]
    assert len(red) == (0 if fits else 1)  # "the memory bar turns red" where it does not fit


def test_real_kernels_step_2_shows_each_op_at_its_expected_time(tmp_path, catalog, models):
    first, second = exported(tmp_path, "real-kernels", 1), exported(tmp_path, "real-kernels", 2)
    doc = Document(catalog, models)
    doc.replace_session(open_scenes(catalog, models)["real-kernels"].session_at(1), "test")
    a = doc.analysis()
    e = expected_for(a)
    assert e is not None
    expected = {o.name: a.flops[i] / e.op_time_s[i] for i, o in enumerate(a.ops) if a.flops[i] > 0}
    bound = {o.name: a.flops[i] / a.time_s[i] for i, o in enumerate(a.ops) if a.flops[i] > 0}
    ops = {chart_id: {m["name"]: m["flops_per_s"] for m in chart["markers"] if m["kind"] == "op"}
           for chart_id, chart in (("first", first), ("second", second))}
    assert set(ops["first"]) == set(ops["second"]) == set(expected)
    for name in expected:
        assert ops["first"][name] == pytest.approx(bound[name], rel=1e-6)
        assert ops["second"][name] == pytest.approx(expected[name], rel=1e-6)
        assert ops["second"][name] < 0.9 * ops["first"][name]  # every op below its bound
    # a norm (a few KiB of work, one launch) falls furthest: its launch costs more than its work
    assert min(expected, key=lambda n: expected[n] / bound[n]) in {o.name for o in a.ops if o.role == "norm"}


def test_a_scene_file_names_known_views_only(tmp_path, catalog, models):
    from explorer.core.files.datafile import DataFileError
    from tests.core.test_scenes import load_one_scene

    scene = load_one_scene(tmp_path, catalog, models, "{caption: 'One token.', view: memory}")["s"]
    assert scene.view_at(0) == View.MEMORY
    with pytest.raises(DataFileError, match=r"steps\[0\]\.view.*roofline, serving, energy, memory, expected"):
        load_one_scene(tmp_path, catalog, models, "{caption: x, view: pie}")
    with pytest.raises(DataFileError, match=r"steps\[0\]\.view.*shows the scaling laws"):
        load_one_scene(tmp_path, catalog, models, "{caption: x, view: energy, scaling_laws: 5.76e+23}")
