"""The document: the only mutation API, notifications, history steps, gestures, selection.
No Qt: these run without a QApplication."""

import pytest

from explorer.core.files.registry import UnknownIdError
from explorer.core.model.session import Session, WhatIf
from explorer.core.model.workload import WorkloadError
from explorer.document import Document, OpRef, RoofRef


@pytest.fixture
def doc(catalog, models):
    return Document(catalog, models, Session())


def recorder(doc, *topics):
    """Every notification of ``topics``, in order, as (topic, args)."""
    seen = []
    for topic in topics:
        doc.subscribe(topic, lambda *args, topic=topic: seen.append((topic, args)))
    return seen


def test_setters_notify_and_undo(doc):
    seen = recorder(doc, "workload", "hardware", "history")
    doc.set_params(batch=8)
    assert doc.params.batch == 8 and len(doc.history.steps) == 1
    assert seen == [("workload", ()), ("history", ())]  # nothing about the devices
    doc.set_params(batch=8)  # no change: no step, no notification
    assert len(doc.history.steps) == 1 and len(seen) == 2
    doc.undo()
    assert doc.params.batch == 1 and doc.can_redo and not doc.can_undo
    assert doc.history.redo_text == "Set batch 8"
    doc.redo()
    assert doc.params.batch == 8


def test_a_new_change_drops_the_redo_steps_and_the_clean_mark_follows(doc):
    doc.set_params(batch=2)
    doc.set_clean()
    assert doc.is_clean
    doc.set_params(batch=4)
    assert not doc.is_clean
    doc.undo()
    assert doc.is_clean
    doc.undo()
    doc.set_params(batch=16)  # the saved state (batch 2) is out of reach now
    assert not doc.can_redo and len(doc.history.steps) == 1
    doc.undo()
    assert not doc.is_clean


def test_invalid_parameters_raise_and_change_nothing(doc):
    with pytest.raises(WorkloadError, match="batch must be at least 1"):
        doc.set_params(batch=0)
    assert doc.params.batch == 1 and doc.history.steps == []


def test_devices(doc):
    messages = recorder(doc, "message")
    doc.set_devices(["h100-sxm", "xeon-platinum-8480", "l4", "t4"])
    doc.toggle_device("b200", True)  # a fifth is refused with a reason
    assert "b200" not in doc.session.hardware and "at most 4" in messages[-1][1][0]
    doc.set_devices([])
    assert "at least one device" in messages[-1][1][0]
    doc.set_primary("t4")
    assert doc.session.hardware[0] == "t4" and doc.primary.id == "t4"
    assert doc.analysis().hardware.id == "t4"
    with pytest.raises(UnknownIdError):
        doc.set_devices(["h100"])


def test_the_undo_text_names_devices_as_the_chart_does(doc):
    doc.set_devices(["h100-sxm", "mi300x"])
    assert doc.history.undo_text == "Show H100 SXM, MI300X"  # not their ids


def test_a_gesture_is_one_step_and_can_be_cancelled(doc):
    doc.begin_gesture("Drag")
    for scale in (1.1, 1.3, 1.7):
        doc.set_what_if("h100-sxm", WhatIf(bandwidth_scale=scale))
        assert not doc.can_undo  # no undo in the middle of a drag
    assert doc.history.steps == []
    assert doc.primary.bandwidth_bytes_per_s == pytest.approx(1.7 * 3.35e12)
    doc.end_gesture()
    assert len(doc.history.steps) == 1 and doc.history.undo_text == "Drag"
    doc.undo()
    assert not doc.session.what_if("h100-sxm").active
    doc.begin_gesture("Drag")
    doc.set_params(batch=64)
    doc.cancel_gesture()
    assert doc.params.batch == 1 and len(doc.history.steps) == 1  # the redo step remains


def test_analysis_is_cached_and_follows_what_ifs(doc):
    first = doc.analysis()
    assert doc.analysis() is first
    doc.set_what_if("h100-sxm", WhatIf(bandwidth_scale=2.0))
    assert doc.analysis().totals.time_s == pytest.approx(first.totals.time_s / 2, rel=0.01)
    doc.reset_what_ifs()
    assert doc.analysis().totals.time_s == pytest.approx(first.totals.time_s)


def test_selection_is_typed_and_not_an_edit(doc):
    seen = recorder(doc, "selection")
    doc.select(OpRef("q_proj"))
    assert doc.session.selected_op == "q_proj" and doc.history.steps == []
    roof = RoofRef("h100-sxm", "compute", "bf16 matrix")
    doc.select(roof)
    assert doc.selection == roof and doc.session.selected_op is None  # a roof is not saved
    assert seen == [("selection", (OpRef("q_proj"),)), ("selection", (roof,))]
    doc.set_devices(["t4"])  # the roof's device is no longer shown
    assert doc.selection is None
    doc.select_op("q_proj")
    doc.set_model("gpt2")
    assert doc.selection is None  # the old op does not exist in the new model


def test_replacing_the_session_starts_a_fresh_history(doc):
    doc.set_params(batch=8)
    doc.replace_session(Session(model="gpt2"), "Opened")
    assert doc.session.model == "gpt2" and doc.history.steps == [] and doc.is_clean


def test_unsubscribing(doc):
    seen = []
    stop = doc.subscribe("workload", lambda: seen.append(1))
    doc.set_params(batch=2)
    stop()
    doc.set_params(batch=3)
    assert seen == [1]
    with pytest.raises(ValueError, match="unknown topic"):
        doc.subscribe("weather", print)


def test_opening_a_session_skips_its_broken_measurements(doc, tmp_path):
    broken = tmp_path / "run.json"
    broken.write_text("{")
    path = tmp_path / "s.yaml"
    Session(model="gpt2", results=(str(broken),)).save(path)
    doc.set_params(batch=4)
    (skipped,) = doc.open_session(path)
    assert skipped.what == "results file" and skipped.path == broken
    assert doc.session.model == "gpt2" and doc.session.results == () and doc.history.steps == []
    path.write_text("schema: 1\nhardware: [h100]\nworkload: {model: gpt2}\n")
    with pytest.raises(Exception, match="unknown id 'h100'"):
        doc.open_session(path)
    assert doc.session.model == "gpt2"  # unchanged


def test_a_new_catalogue_is_seen_at_once_by_devices_and_analyses(doc, catalog):
    """Devices and analyses are remembered per session and catalogue; replacing the
    catalogue (a custom device saved over a shown one) makes them new."""
    from explorer.core.hardware.catalog import Catalog

    before = doc.analysis()
    assert doc.device("h100-sxm") is doc.device("h100-sxm")
    faster = WhatIf(bandwidth_scale=2.0).apply(catalog["h100-sxm"])  # as if saved so by the user
    doc.set_catalog(Catalog([faster if ident == "h100-sxm" else catalog[ident] for ident in catalog]))
    doubled = 2 * catalog["h100-sxm"].bandwidth_bytes_per_s
    assert doc.device("h100-sxm").bandwidth_bytes_per_s == pytest.approx(doubled)
    assert doc.analysis().totals.time_s == pytest.approx(before.totals.time_s / 2, rel=0.01)
