"""A second model's whole step beside the workload's (``Session.compare``): saved with the
session, undoable, drawn where its own analysis puts it, listed in the chart's data, and,
where the model cannot run the workload, named in the key with the reason."""

from dataclasses import replace

import pytest

from explorer.chart.data import chart_data
from explorer.chart.elements import Page
from explorer.chart.model import build_chart
from explorer.core.analysis.analysis import analyze
from explorer.core.files.datafile import DataFileError
from explorer.core.model.session import Session, load_session
from explorer.core.model.workload import WorkloadParams
from explorer.document import Document

SLIDE = Page.slide(1600, 900)


def test_a_session_keeps_its_comparison_and_refuses_an_unknown_model(tmp_path, catalog, models):
    session = Session(hardware=("h200-sxm",), model="mixtral-8x7b", compare="llama-2-13b")
    path = tmp_path / "moe.roofline.yaml"
    session.save(path)
    assert load_session(path, set(catalog), set(models)).compare == "llama-2-13b"
    path.write_text(path.read_text().replace("llama-2-13b", "llama-9-13b"))
    with pytest.raises(DataFileError, match=r"compare.*unknown model 'llama-9-13b'"):
        load_session(path, set(catalog), set(models))


def test_the_compared_step_sits_where_its_own_analysis_puts_it(catalog, models):
    params = WorkloadParams(batch=64, context=1024)
    doc = Document(catalog, models, Session(hardware=("h200-sxm",), model="mixtral-8x7b", params=params,
                                            compare="llama-2-13b"))
    data = chart_data(build_chart(doc, SLIDE))
    [mark] = [m for m in data["markers"] if m["kind"] == "compared"]
    dense = analyze(models["llama-2-13b"], params, catalog["h200-sxm"]).totals
    assert mark["name"] == "Llama 2 13B"
    assert mark["intensity"] == pytest.approx(dense.intensity, rel=1e-6)
    assert mark["flops_per_s"] == pytest.approx(dense.flops / dense.time_s, rel=1e-6)
    assert "Llama 2 13B: whole step, bound" in [t["text"] for t in data["texts"] if t["kind"] == "key"]
    assert any(t["text"] == "Llama 2 13B" for t in data["texts"] if t["kind"] == "compared") \
        or any("Llama 2 13B" in t["text"] for t in data["texts"] if t["kind"] == "key-live")


def test_the_mixture_of_experts_slides_show_both_models(catalog, models):
    from explorer.core.words.scenes import load_default_scenes

    scene = load_default_scenes(catalog, models)["mixture-of-experts"]
    for step in range(len(scene.steps)):
        chart = build_chart(Document(catalog, models, scene.session_at(step)), SLIDE)
        assert [m.name for m in chart.markers if m.kind == "compared"] == ["Llama 2 13B"]
        assert [m.name for m in chart.markers if m.kind == "step"] == ["step"]


def test_setting_a_comparison_is_one_undoable_step(catalog, models):
    doc = Document(catalog, models, Session(model="mixtral-8x7b"))
    doc.set_compare("llama-2-13b")
    assert doc.session.compare == "llama-2-13b" and doc.compared().name == "Llama 2 13B"
    doc.undo()
    assert doc.session.compare == "" and doc.compared() is None


def test_a_model_that_cannot_run_the_workload_is_named_in_the_key_with_the_reason(catalog, models):
    # GPT-2's 12 heads do not split over 8 devices
    session = Session(hardware=("h100-sxm",), model="llama-3-70b", compare="gpt2",
                      params=WorkloadParams(tp=8))
    doc = Document(catalog, models, session)
    compared = doc.compared()
    assert compared.analysis is None and "12" in compared.why
    chart = build_chart(doc, SLIDE)
    assert not [m for m in chart.markers if m.kind == "compared"]
    assert "GPT-2 (124M): cannot run this workload" in [t.text for t in chart.texts if t.kind == "key"]
    assert replace(session, compare="").compare == ""


def test_a_compared_model_that_does_not_fit_says_so_in_the_key(catalog, models):
    doc = Document(catalog, models, Session(hardware=("l4",), model="llama-3-8b", compare="llama-3.1-405b"))
    chart = build_chart(doc, SLIDE)
    key = " ".join(t.text for t in chart.texts if t.kind == "key")  # an entry may wrap onto two lines
    assert "Llama 3.1 405B: whole step, bound (does not fit" in key
