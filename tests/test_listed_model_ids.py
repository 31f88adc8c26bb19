"""Every place that reads a model id takes the ids ``models --json`` lists, found as ``--model``
finds them (``hf_config.chosen_model``): a session's model and compared model, a workload
file's model, the document's ``set_model`` and ``set_compare``, ``serve --draft``. A session
naming an "hf-" id whose config.json is gone still opens, its other settings kept, with a
message naming the id and what to do."""

import json
from pathlib import Path

import pytest

from explorer import defaults
from explorer.core.analysis.analysis import analyze
from explorer.core.files.datafile import DataFileError
from explorer.core.model.hf_config import CONFIG_MODEL, read_config_file, stored_precision
from explorer.core.model.session import Session, WhatIf, load_session, load_workload
from explorer.core.model.workload import WorkloadParams
from explorer.document import Document, Topic
from tests.cli.test_cli import run
from tests.core.test_hf_config import MISTRAL_7B

SHIPPED = Path(__file__).parents[1] / "resources" / "models" / "configs"


@pytest.fixture(autouse=True)
def empty_cache(tmp_path, monkeypatch):
    """No Hugging Face cache of the machine's own: the shipped configs alone are listed."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))


def _shipped(name):
    return read_config_file(SHIPPED / f"{name}.json")


def test_set_model_with_a_listed_id_opens_its_config_and_the_session_round_trips(tmp_path, catalog, models):
    """The document API with ``hf-mixtral-8x7b``: the session holds the shipped file's content,
    and a saved session opens to the same model and the same numbers."""
    doc = Document(catalog, models, Session(hardware=("h100-sxm",), params=WorkloadParams(batch=16)))
    doc.set_model("hf-mixtral-8x7b")
    mixtral = _shipped("mixtral-8x7b")
    assert doc.session.model == CONFIG_MODEL and doc.session.model_config == mixtral.config
    path = tmp_path / "moe.roofline.yaml"
    doc.session.save(path)
    again = Document(catalog, models)
    again.open_session(path)
    assert again.session == doc.session
    expected = analyze(mixtral, stored_precision(WorkloadParams(batch=16), mixtral), catalog["h100-sxm"])
    assert again.analysis().totals == expected.totals
    assert again.model.parameter_count() == 46_702_792_704  # Mixtral 8x7B's published 46.7 B


def test_a_session_file_naming_listed_ids_reads_their_configs(tmp_path, catalog, models):
    """A session written by hand with ``model: hf-qwen2-5-7b`` and ``compare: hf-mixtral-8x7b``:
    the model is the shipped Qwen2.5 7B's config.json, the compared step Mixtral's own."""
    path = tmp_path / "hand.roofline.yaml"
    path.write_text("schema: 2\nhardware: [h200-sxm]\nworkload: {model: hf-qwen2-5-7b, batch: 8}\n"
                    "compare: hf-mixtral-8x7b\n")
    session = load_session(path, set(catalog), set(models))
    qwen, mixtral = _shipped("qwen2.5-7b"), _shipped("mixtral-8x7b")
    assert session.model == CONFIG_MODEL and session.model_config == qwen.config
    assert session.params.batch == 8 and session.compare == "hf-mixtral-8x7b"
    doc = Document(catalog, models, session)
    compared = doc.compared()
    assert compared is not None and compared.name == mixtral.name and compared.analysis is not None
    assert compared.analysis.totals == analyze(mixtral, session.params, catalog["h200-sxm"]).totals
    doc.set_compare("hf-qwen1-5-0-5b")
    small = doc.compared()
    assert small is not None and small.name == _shipped("qwen1.5-0.5b").name


def test_a_session_whose_listed_model_is_gone_opens_with_the_rest_kept(tmp_path, catalog, models):
    """``hf-my-finetune`` is no longer anywhere: the strict reader names it; the document opens
    the session with the default model, its devices, parameters, what-ifs and compared preset
    kept, and says which model is missing and what to do."""
    path = tmp_path / "gone.roofline.yaml"
    path.write_text("schema: 2\nhardware: [h100-sxm, a100-80gb-sxm]\n"
                    "workload: {model: hf-my-finetune, batch: 32, context: 8192}\n"
                    "what_if: {h100-sxm: {bandwidth_scale: 1.5}}\ncompare: hf-also-gone\n")
    with pytest.raises(DataFileError, match="the model 'hf-my-finetune' is no longer listed"):
        load_session(path, set(catalog), set(models))
    doc = Document(catalog, models)
    messages: list[str] = []
    doc.subscribe(Topic.MESSAGE, messages.append)
    doc.open_session(path)
    s = doc.session
    assert s.model == defaults.MODEL and s.hardware == ("h100-sxm", "a100-80gb-sxm")
    assert (s.params.batch, s.params.context) == (32, 8192) and s.what_if("h100-sxm") == WhatIf(1.5)
    assert s.compare == ""
    said = " | ".join(messages)
    assert "gone.roofline.yaml: the model 'hf-my-finetune' is no longer listed" in said
    assert f"showing {defaults.MODEL} instead" in said and "File › Open model config" in said
    assert "'hf-also-gone' is no longer listed" in said and "nothing is compared" in said


def test_a_workload_file_naming_a_listed_id(tmp_path, models):
    """``model: hf-mistral-7b``: the shipped config.json's content, the file's stored precision
    where the workload names none (as ``--model`` would); an id no file has is refused by name."""
    path = tmp_path / "w.workload.yaml"
    path.write_text("schema: 2\nworkload: {model: hf-mistral-7b, batch: 4}\n")
    workload = load_workload(path, set(models))
    mistral = _shipped("mistral-7b")
    assert workload.model == CONFIG_MODEL and workload.config == mistral.config and workload.params.batch == 4
    # a model in the cache whose file stores fp32: its weights at fp32 where the workload names
    # no precision, as --model reads it; naming one keeps the one named
    stored = tmp_path / "hub" / "models--x--fp32" / "snapshots" / "r1" / "config.json"
    stored.parent.mkdir(parents=True)
    stored.write_text(json.dumps({**MISTRAL_7B, "torch_dtype": "float32"}))
    for line, weights, dtype in (("{model: hf-x-fp32}", "fp32", "bf16"),
                                 ("{model: hf-x-fp32, dtype: fp16}", None, "fp16")):
        path.write_text(f"schema: 2\nworkload: {line}\n")
        params = load_workload(path, set(models)).params
        assert (params.weight_dtype, params.dtype) == (weights, dtype)
        code, out, _ = run("analyze", "--model", "hf-x-fp32", "--hardware", "h100-sxm", "--json",
                           "--dtype", dtype)
        assert code == 0 and json.loads(out)["workload"]["weight_dtype"] == (weights or dtype)
    path.write_text("schema: 2\nworkload: {model: hf-mistral-7, batch: 4}\n")
    with pytest.raises(DataFileError, match=r"field 'workload.model'.*'hf-mistral-7' is no longer listed"):
        load_workload(path, set(models))


def test_serve_takes_a_listed_draft():
    """``--draft hf-qwen1-5-0-5b`` (the shipped Qwen1.5 0.5B) drafts for Llama 3 70B: the note
    names it, 0.8 acceptance over 4 drafted tokens makes (1 − 0.8⁵)/(1 − 0.8) = 3.36 tokens a
    step, and a 0.5 B draft costs less a step than the 8 B preset: a lower time per token."""
    base = ("serve", "--hardware", "h100-sxm", "--model", "llama-3-70b", "--tp", "4", "--acceptance", "0.8",
            "--json")
    code, out, err = run(*base, "--draft", "hf-qwen1-5-0-5b")
    assert code == 0, err
    small = json.loads(out)
    name = _shipped("qwen1.5-0.5b").name
    assert any(f"speculative decoding with {name}" in n and "3.36 tokens a step" in n for n in small["notes"])
    large = json.loads(run(*base, "--draft", "llama-3-8b")[1])
    assert small["points"][0]["batch"] == large["points"][0]["batch"] == 1
    assert small["points"][0]["tpot_s"] < large["points"][0]["tpot_s"]
    code, _, err = run(*base, "--draft", "hf-qwen1-5-0-6b")
    assert code != 0 and "unknown model 'hf-qwen1-5-0-6b': did you mean hf-qwen1-5-0-5b" in err


def test_a_scene_can_start_from_a_listed_model(tmp_path, catalog, models):
    """A user's scene starting at ``model: hf-mixtral-8x7b``: its caption's numbers are the
    shipped Mixtral config's (46.7 B parameters, 12.9 B active a token)."""
    from explorer.core.words.scenes import load_scenes
    from explorer.core.words.why import load_topics

    (tmp_path / "s.yaml").write_text(
        "schema: 1\nscenes:\n- id: s\n  title: S\n"
        "  start: {hardware: [h100-sxm], workload: {model: hf-mixtral-8x7b}}\n"
        "  steps:\n  - {caption: '{step/parameters}, {step/active-parameters} active'}\n")
    scene = load_scenes(catalog, models, {t.id for t in load_topics(catalog)}, tmp_path)["s"]
    assert scene.caption_at(0, catalog, models) == "46.7 B, 12.9 B active"
    assert scene.state_at(0, catalog, models).model.config == _shipped("mixtral-8x7b").config
