"""A split a model or a device cannot take is refused with its reason, and nothing changes."""

from __future__ import annotations

import pytest

from explorer.core.files.datafile import DataFileError
from explorer.core.model.session import Session
from explorer.core.model.workload import WorkloadParams
from explorer.document import Document


@pytest.fixture
def doc(catalog, models):
    return Document(catalog, models, Session(hardware=("h100-sxm",), model="llama-3-70b",
                                             params=WorkloadParams(context=4096, tp=8)))


def test_a_split_the_model_cannot_take_changes_nothing(doc):
    messages = []
    doc.subscribe("message", messages.append)
    before = doc.session
    doc.set_params(tp=3)
    assert doc.session == before
    assert "not done" in messages[-1] and "64 attention heads" in messages[-1]
    doc.set_model("gpt2")  # 12 heads cannot be split 8 ways
    assert doc.session == before and "12 attention heads" in messages[-1]


def test_a_device_without_links_is_not_added_to_a_split_step(doc):
    messages = []
    doc.subscribe("message", messages.append)
    doc.toggle_device("epyc-9654", True)
    assert doc.session.hardware == ("h100-sxm",)
    assert "lists no link to other devices" in messages[-1]
    doc.toggle_device("b200", True)  # has NVLink: fine
    assert doc.session.hardware == ("h100-sxm", "b200")


def test_a_session_file_with_an_impossible_split_is_refused(doc, tmp_path, catalog, models):
    path = tmp_path / "bad.yaml"
    Session(hardware=("epyc-9654",), model="llama-3-70b",
            params=WorkloadParams(context=4096, tp=8)).save(path)
    before = doc.session
    with pytest.raises(DataFileError, match="lists no link"):
        doc.open_session(path)
    assert doc.session == before


def test_a_split_training_session_survives_saving(tmp_path, catalog, models):
    from explorer.core.model.session import load_session

    params = WorkloadParams(phase="train", batch=64, seq=4096, tp=8, pp=4, dp=2, recompute="full")
    session = Session(hardware=("h100-sxm",), model="llama-3-70b", params=params)
    path = tmp_path / "train.yaml"
    session.save(path)
    assert load_session(path, catalog, models).params == session.params
    text = path.read_text()
    assert "tp: 8" in text and "recompute: full" in text and "ep:" not in text  # defaults stay out
