"""The Serving dialog: the plan of the workload shown, its picture, its sentences and a row a
batch, all from ``core.analysis.serving.plan`` with the fields' values; a workload that cannot
be served says why and nothing breaks."""

import pytest
from PySide6 import QtGui

from explorer.chart.elements import Page
from explorer.chart.slides import ExportOptions
from explorer.core.analysis.serving import plan
from explorer.core.words.serving_plan import plan_sentences
from explorer.ui.serving_dialog import ServingDialog


@pytest.fixture
def dialog(state, qtbot):
    state.set_model("llama-3-8b")
    state.set_devices(("h100-sxm",))
    d = ServingDialog(state)
    qtbot.addWidget(d)
    return d


def test_the_dialog_shows_the_plan_of_the_workload_with_its_targets(dialog, state):
    expected = plan(state.model, state.params, state.primary, 1024, 1024, 0.5, 0.05, None, 16)
    assert dialog.targets() == (pytest.approx(0.5), pytest.approx(0.05), None)
    assert dialog.planned == expected
    assert dialog.summary.text() == " ".join(plan_sentences(expected, state.model.name, state.primary))
    assert dialog.table.rowCount() == len(expected.points)
    row = next(i for i, p in enumerate(expected.points) if p.batch == expected.chosen.batch)
    assert dialog.table.item(row, 0).font().bold() and dialog.table.item(row, 0).text() == \
        f"{expected.chosen.batch:,}"
    assert expected.chosen.limited_by in dialog.table.item(row, 0).toolTip()
    # the figure at TDP and the power model's estimate, side by side (serving_energy)
    heads = [dialog.table.horizontalHeaderItem(c).text() for c in (6, 7)]
    assert heads == ["J/token at TDP", "J/token (estimate)"]
    first = expected.points[0]
    assert dialog.table.item(0, 6).text() == f"{first.joules_per_token:.3g} J"
    assert dialog.table.item(0, 7).text() == f"{first.joules_per_token_estimate:.3g} J"
    assert first.joules_per_token_estimate is not None and first.joules_per_token is not None
    assert first.joules_per_token_estimate < first.joules_per_token


def test_a_tighter_target_and_a_price_plan_again(dialog, state):
    dialog.tpot.setValue(10.0)
    dialog.price.setValue(2.5)
    expected = plan(state.model, state.params, state.primary, 1024, 1024, 0.5, 0.01, 2.5, 16)
    assert dialog.planned == expected
    assert expected.chosen is None or expected.chosen.tpot_s <= 0.01
    assert f"${expected.points[0].cost_per_million_tokens:.3f}" == dialog.table.item(0, 5).text()
    dialog.tpot.setValue(0.0)  # no target
    assert dialog.tpot.text() == "no target" and dialog.targets()[1] is None


def test_a_model_that_does_not_fit_says_why_and_the_dialog_stays(state, qtbot):
    state.set_model("deepseek-v3")
    state.set_devices(("h100-sxm",))
    d = ServingDialog(state)
    qtbot.addWidget(d)
    assert d.planned is None and d.summary.text().startswith("Cannot plan serving: DeepSeek-V3 does not fit")
    assert not d.export_button.isEnabled() and d.table.rowCount() == 0
    assert not d.export()
    d.view.grab()  # paints an empty view without failing


def test_the_picture_paints_and_exports_as_serve_draws_it(dialog, tmp_path):
    dialog.resize(1000, 720)
    image = dialog.view.grab().toImage()
    colours = {image.pixelColor(x, y).name() for x in range(0, image.width(), 17)
               for y in range(0, image.height(), 17)}
    assert len(colours) > 3  # more than a blank page
    svg, png = tmp_path / "serving.svg", tmp_path / "serving.png"
    assert dialog.export(str(svg)) and dialog.export(str(png))
    assert "Serving Llama 3 8B on 1 × NVIDIA H100" in svg.read_text()
    picture = QtGui.QImage(str(png))
    width = ExportOptions().png_width  # a 1600×900 slide at the app's export width
    assert (picture.width(), picture.height()) == (width, width * 9 // 16)


def test_a_prefix_hit_plans_again_with_the_cached_pages(dialog, state):
    dialog.hit.setValue(75)
    expected = plan(state.model, state.params, state.primary, 1024, 1024, 0.5, 0.05, None, 16,
                    prefix_hit=0.75)
    assert dialog.planned == expected and "768 of each prompt's 1,024 tokens" in dialog.summary.text()


def test_a_prefill_chunk_plans_continuous_batching(dialog, state):
    assert dialog.chunk.text() == "prefills apart"
    dialog.chunk.setValue(2048)
    expected = plan(state.model, state.params, state.primary, 1024, 1024, 0.5, 0.05, None, 16,
                    prefill_chunk=2048)
    assert dialog.planned == expected and "chunked prefill" in dialog.summary.text()


def test_the_export_button_asks_for_a_file_and_writes_it(dialog, tmp_path, monkeypatch):
    from PySide6 import QtWidgets

    path = tmp_path / "from-the-button.svg"
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(path), ""))
    dialog.export_button.click()
    assert path.exists() and "Serving Llama 3 8B" in path.read_text()


def test_the_fields_come_back_as_they_were_left(state, settings, qtbot):
    first = ServingDialog(state, settings=settings)
    qtbot.addWidget(first)
    first.prompt.setValue(4096)
    first.chunk.setValue(2048)
    again = ServingDialog(state, settings=settings)
    qtbot.addWidget(again)
    assert (again.prompt.value(), again.chunk.value(), again.tpot.value()) == (4096, 2048, 50.0)
    settings.setValue("serving/prompt", "lots")  # a value the field cannot take is ignored
    assert ServingDialog(state, settings=settings).prompt.value() == 1024


def test_a_window_s_prefill_with_a_prefix_can_still_be_served(state, qtbot):
    state.set_model("llama-3-8b")
    state.set_params(phase="prefill", prefix=256)
    d = ServingDialog(state)
    qtbot.addWidget(d)
    assert d.planned is not None and d.summary.text().startswith("Llama 3 8B on 1 ×")


def test_kv_offload_plans_beyond_the_device_s_wall(dialog, state):
    dialog.offload.setValue(64)
    expected = plan(state.model, state.params, state.primary, 1024, 1024, 0.5, 0.05, None, 16,
                    kv_offload_bytes=64 * 2**30)
    assert dialog.planned == expected and expected.offloaded_sequences > 0
    assert dialog.table.rowCount() == len(expected.points) and "KV offload" in dialog.summary.text()


def test_an_arrival_rate_plans_the_smallest_batch_that_keeps_up(dialog, state):
    assert dialog.load.text() == "most tokens/s"
    dialog.load.setValue(5)
    expected = plan(state.model, state.params, state.primary, 1024, 1024, 0.5, 0.05, None, 16,
                    arrival_rate=5.0)
    assert dialog.planned == expected and expected.chosen.limited_by.startswith("the load")
    assert "arrival rate of 5 requests/s" in dialog.summary.text()


def test_compare_draws_the_best_other_layouts_of_the_same_devices(state, qtbot):
    from explorer.core.analysis.serving_layouts import search

    state.set_model("llama-3-70b")
    state.set_devices(("h100-sxm",))
    state.set_params(tp=8)
    d = ServingDialog(state)
    qtbot.addWidget(d)
    assert d.view.others == ()
    d.compare.setChecked(True)
    ranked = [s for s in search(state.model, state.params, state.primary, 8, 1024, 1024, ttft_target_s=0.5,
                                tpot_target_s=0.05) if s.plan is not None and s.split != (8, 1, 1, 1)]
    assert [name for name, _ in d.view.others] == [s.name for s in ranked[:3]] and d.view.name == "TP 8"
    words = " ".join(t.text for t in d.view.chart(Page.slide(1600, 900)).texts)
    assert all(s.name in words for s in ranked[:3])
    d.compare.setChecked(False)
    assert d.view.others == ()


def test_a_load_no_batch_keeps_up_with_leaves_an_empty_picture_and_says_why(dialog):
    dialog.load.setValue(20)
    assert dialog.planned.points == () and "the queue would grow without end" in dialog.summary.text()
    assert "No batch meets the targets" not in dialog.summary.text()  # the load's note says why
    assert not dialog.export_button.isEnabled() and dialog.table.rowCount() == 0
    dialog.view.grab()  # paints without failing
    assert not dialog.compare.isEnabled()  # under a load every split gives the load's tokens/s


def test_a_draft_model_plans_speculative_decoding(state, qtbot, settings):
    from explorer.core.analysis.speculation import Speculation

    state.set_model("llama-3-70b")
    state.set_devices(("h100-sxm",))
    state.set_params(tp=4)
    d = ServingDialog(state, settings=settings)
    qtbot.addWidget(d)
    d.tpot.setValue(0)  # no target
    d.draft.setCurrentIndex(d.draft.findData("llama-3-8b"))
    d.alpha.setValue(0.8)
    draft = Speculation(state.models["llama-3-8b"], 4, 0.8)
    expected = plan(state.model, state.params, state.primary, 1024, 1024, 0.5, None, None, 16,
                    speculation=draft)
    assert d.planned == expected and "speculative decoding with Llama 3 8B" in d.summary.text()
    d.chunk.setValue(2048)  # not modelled together: said, nothing lost
    assert d.planned is None and "speculative decoding with chunked prefill" in d.summary.text()
    again = ServingDialog(state, settings=settings)
    qtbot.addWidget(again)
    assert again.draft.currentData() == "llama-3-8b" and again.alpha.value() == 0.8
