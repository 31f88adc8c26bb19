"""The serving picture: one point a batch at its tokens/s a user and a device, the chosen
batch ringed, the TPOT target a line, every batch's label on the plot or in the key."""

import json

import pytest

from tests.cli.test_cli import run
from tests.test_chart import problems


def test_serve_draws_the_plan_as_data_and_as_svg(tmp_path):
    out = tmp_path / "serve.json"
    code, text, err = run("serve", "--hardware", "h100-sxm", "--model", "llama-3-70b", "--tp", "4",
                          "--tpot-target", "40ms", "--out", str(out), "--json")
    assert code == 0, err
    plan, picture = json.loads(text), json.loads(out.read_text())
    assert picture["x_axis"].startswith("tokens/s a user")
    assert picture["y_axis"].startswith("tokens/s a device")
    points = {m["name"]: m for m in picture["markers"] if m["kind"] == "serving"}
    for p in plan["points"]:
        if p["batch"] & (p["batch"] - 1) == 0:  # the powers of two are all drawn
            mark = points[f"batch {p['batch']}"]
            assert mark["tokens_per_s_per_user"] == pytest.approx(p["tokens_per_s_per_user"], rel=1e-6)
            assert mark["tokens_per_s_per_device"] == pytest.approx(p["tokens_per_s_per_device"], rel=1e-6)
    chosen = plan["chosen"]["batch"]  # the largest batch within the TPOT target
    assert plan["chosen"]["tpot_s"] <= 0.040 and f"batch {chosen + 1} takes" in plan["chosen"]["limited_by"]
    assert f"batch {chosen}" in points and f"batch {chosen + 1}" in points  # the chosen batch and the next
    assert [m["name"] for m in picture["markers"] if m["kind"] == "selection"] == [f"chosen: batch {chosen}"]
    assert any(line["tooltip"].startswith("the TPOT target, 40 ms") for line in picture["lines"])
    svg = tmp_path / "serve.svg"
    code, _, err = run("serve", "--hardware", "h100-sxm", "--model", "llama-3-70b", "--tp", "4",
                       "--out", str(svg))
    assert code == 0 and "<svg" in svg.read_text()


def test_the_serving_picture_keeps_its_labels_apart(models, catalog):
    from explorer.chart.elements import Page
    from explorer.chart.serving_chart import serving_chart
    from explorer.core.analysis.serving import plan
    from explorer.core.model.workload import WorkloadParams

    result = plan(models["llama-3-8b"], WorkloadParams(), catalog["h100-sxm"], 512, 512, tpot_target_s=0.02)
    for page in (Page.slide(1600, 900), Page.screen(640, 560)):
        chart = serving_chart(result, page, "dark", "Serving Llama 3 8B", 0.02)
        assert not problems(chart)


def test_a_picture_other_than_svg_or_json_is_refused():
    code, _, err = run("serve", "--hardware", "h100-sxm", "--model", "llama-3-8b", "--out", "x.png")
    assert code == 2 and "--out draws .svg or .json" in err


@pytest.mark.parametrize("options, words", [
    ({}, "1 to 226, the KV-cache wall"),
    ({"prompt": 4096, "output": 128, "prefill_chunk": 512},
     "1 to 16, what the prefill chunks refill (KV wall 109)"),
    ({"kv_offload_bytes": 64 * 2**30}, "beyond 226, caches in host memory"),
])
def test_the_key_says_where_the_batches_stop(models, catalog, options, words):
    from explorer.chart.elements import Page
    from explorer.chart.serving_chart import serving_chart
    from explorer.core.analysis.serving import plan
    from explorer.core.model.workload import WorkloadParams

    request = {"prompt": 1024, "output": 1024, **options}
    result = plan(models["llama-3-8b"], WorkloadParams(), catalog["h100-sxm"], **request)
    chart = serving_chart(result, Page.slide(1600, 900), "light", "Serving Llama 3 8B")
    assert words in " ".join(t.text for t in chart.texts) and not problems(chart)  # (the key wraps)


def test_the_key_names_the_chunks_when_they_stop_before_host_memory(models, catalog):
    from explorer.chart.elements import Page
    from explorer.chart.serving_chart import serving_chart
    from explorer.core.analysis.serving import plan
    from explorer.core.model.workload import WorkloadParams

    result = plan(models["llama-3-8b"], WorkloadParams(), catalog["h100-sxm"], 4096, 128, prefill_chunk=512,
                  kv_offload_bytes=64 * 2**30)
    words = " ".join(t.text for t in serving_chart(result, Page.slide(1600, 900), "light", "S").texts)
    assert "what the prefill chunks refill" in words and "host memory" not in words


def test_a_layout_search_draws_the_best_layout_and_three_more_beside_it(tmp_path):
    out = tmp_path / "layouts.json"
    code, text, err = run("serve", "--hardware", "h100-sxm", "--model", "llama-3-70b", "--devices", "8",
                          "--tpot-target", "50ms", "--out", str(out), "--json")
    assert code == 0, err
    layouts = [s for s in json.loads(text)["layouts"] if s["plan"] is not None]
    picture = json.loads(out.read_text())
    curves = [line["tooltip"] for line in picture["lines"] if line["tooltip"].split(":")[0] in
              {s["name"] for s in layouts[1:4]}]
    assert [c.split(":")[0] for c in curves] == [s["name"] for s in layouts[1:4]]
    best = layouts[1]["plan"]["chosen"]
    assert f"batch {best['batch']:,}, {best['tokens_per_s_per_device']:,.0f} tokens/s a device" in curves[0]


def test_other_layouts_keep_the_picture_legible(models, catalog):
    from explorer.chart.elements import Page
    from explorer.chart.serving_chart import serving_chart
    from explorer.core.analysis.serving_layouts import search
    from explorer.core.model.workload import WorkloadParams

    ranked = [s for s in search(models["llama-3-70b"], WorkloadParams(), catalog["h100-sxm"], 8, 1024, 1024,
                                tpot_target_s=0.05) if s.plan is not None]
    others = tuple((s.name, s.plan) for s in ranked[1:4])
    for page in (Page.slide(1600, 900), Page.screen(1024, 640)):
        chart = serving_chart(ranked[0].plan, page, "light", "S", 0.05, others=others, name=ranked[0].name)
        assert not problems(chart)
        words = " ".join(t.text for t in chart.texts)
        assert all(name in words for name, _ in others) and ranked[0].name in words


def test_a_load_no_batch_keeps_up_with_draws_nothing_and_says_why(tmp_path):
    out = tmp_path / "none.svg"
    code, _, err = run("serve", "--hardware", "h100-sxm", "--model", "llama-3-8b", "--arrival-rate", "20",
                       "--out", str(out))
    assert code == 2 and "nothing to draw" in err and "the queue would grow without end" in err
    assert not out.exists()
