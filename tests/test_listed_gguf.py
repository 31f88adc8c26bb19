"""GGUF files on this machine as listed models: ``models`` lists those of LM Studio's folders,
Ollama's store (named by its manifests) and the folders the user names, each with an id
``--model`` takes, its parameters and its weights' bytes from the file's own tensors; a
session holds one by reference (path, size, time) and says so when the file is gone.

The file is Ollama's tiny Llama (tests/data/third_party/ollama: 513,048 values in F16 and
F32 tensors, 1,026,144 bytes, the figures of its README), copied into fake stores."""

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
import yaml

from explorer import defaults
from explorer.commands.models import FOLDERS_VARIABLE as COMMAND_VARIABLE
from explorer.core.files.datafile import DataFileError
from explorer.core.model.gguf_models import FOLDERS_VARIABLE, read_gguf_model
from explorer.core.model.hf_config import CONFIG_MODEL
from explorer.core.model.session import Session, load_session, model_choice
from explorer.core.model.workload import WorkloadParams
from explorer.document import Document, Topic
from tests.cli.test_cli import run

TINY = Path(__file__).parent / "data" / "third_party" / "ollama" / "llama-2-tiny-random.gguf"
PARAMETERS, WEIGHT_BYTES = 513_048, 1_026_144


@pytest.fixture
def stores(tmp_path, monkeypatch):
    return make_stores(tmp_path, monkeypatch)


def make_stores(tmp_path, monkeypatch):
    """A home with an LM Studio model, an Ollama model (manifest and blob) and a folder of
    the user's with two GGUF files of the same name in two subfolders."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("OLLAMA_MODELS", raising=False)
    monkeypatch.delenv(FOLDERS_VARIABLE, raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    studio = home / ".cache" / "lm-studio" / "models" / "TheBloke" / "Tiny-GGUF"
    studio.mkdir(parents=True)
    shutil.copy(TINY, studio / "tiny.Q8_0.gguf")
    ollama = home / ".ollama" / "models"
    digest = hashlib.sha256(TINY.read_bytes()).hexdigest()
    (ollama / "blobs").mkdir(parents=True)
    shutil.copy(TINY, ollama / "blobs" / f"sha256-{digest}")
    manifest = ollama / "manifests" / "registry.ollama.ai" / "library" / "tinyllama" / "1.1b"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(json.dumps({"schemaVersion": 2, "layers": [
        {"mediaType": "application/vnd.ollama.image.model", "digest": f"sha256:{digest}"}]}))
    mine = tmp_path / "mine"
    for sub in ("a", "b"):
        (mine / sub).mkdir(parents=True)
        shutil.copy(TINY, mine / sub / "llama.gguf")
    (mine / "broken.gguf").write_bytes(b"GGUF not really")
    return {"home": home, "studio": studio, "ollama": ollama, "digest": digest, "mine": mine}


def _listed(*extra):
    code, out, err = run("models", "--json", *extra)
    assert code == 0, err
    return [e for e in json.loads(out) if e["kind"] == "gguf"]


def test_a_folder_named_once_says_where_model_looks(stores, monkeypatch):
    code, _, err = run("models", "--gguf-dir", str(stores["mine"]))
    assert code == 0 and (f"note: --model finds the GGUF files under {stores['mine']} when "
                          f"${FOLDERS_VARIABLE} names that folder") in err
    monkeypatch.setenv(FOLDERS_VARIABLE, str(stores["mine"]))
    code, _, err = run("models", "--gguf-dir", str(stores["mine"]))
    assert code == 0 and "note: --model finds" not in err


def test_models_lists_each_store_s_files_with_their_own_bytes(stores):
    assert COMMAND_VARIABLE == FOLDERS_VARIABLE
    listed = _listed("--gguf-dir", str(stores["mine"]))
    readable = [e for e in listed if not e["problem"]]
    assert [(e["store"], e["name"], e["id"]) for e in readable] == [
        ("folder", "a/llama", "gguf-llama"),
        ("folder", "b/llama", readable[1]["id"]),
        ("lm-studio", "TheBloke/Tiny-GGUF/tiny.Q8_0", "gguf-tiny-q8-0"),
        ("ollama", "tinyllama:1.1b", "gguf-tinyllama-1-1b")]
    # the second "llama" takes the path's suffix (local_models' rule): six hex digits of its SHA-1
    path_b = str(stores["mine"] / "b" / "llama.gguf")
    assert readable[1]["id"] == "gguf-llama-" + hashlib.sha1(path_b.encode()).hexdigest()[:6]
    assert readable[3]["where"] == str(stores["ollama"] / "blobs" / f"sha256-{stores['digest']}")
    for entry in readable:
        assert (entry["parameters"], entry["weight_bytes"]) == (PARAMETERS, WEIGHT_BYTES)
    broken = [e for e in listed if e["problem"]]
    assert [b["where"] for b in broken] == [str(stores["mine"] / "broken.gguf")]
    assert "not a GGUF file" in broken[0]["problem"] and broken[0]["id"] is None


def test_the_table_shows_the_file_s_weights(stores):
    code, out, _ = run("models")
    lines = out.splitlines()
    assert code == 0 and lines[0].split() == ["kind", "id", "name", "parameters", "active", "weights"]
    # 513,048 parameters; 1,026,144 bytes = 1,002.1 KiB, shown to three figures
    row = next(line for line in lines if "gguf-tinyllama-1-1b" in line)
    assert row.split() == ["gguf", "gguf-tinyllama-1-1b", "tinyllama:1.1b", "0.5", "M", "1,000", "KiB"]


def test_every_listed_gguf_id_round_trips_through_analyze(stores, monkeypatch):
    """The folders ``$ROOFLINE_EXPLORER_GGUF_DIRS`` names are listed without --gguf-dir, and
    --model finds their files: each id analyses its own file at its stored bytes."""
    monkeypatch.setenv(FOLDERS_VARIABLE, str(stores["mine"]))
    listed = [e for e in _listed() if not e["problem"]]
    assert len(listed) == 4
    for entry in listed:
        code, out, err = run("analyze", "--model", entry["id"], "--hardware", "h100-sxm", "--json")
        assert code == 0, err
        report = json.loads(out)
        assert report["workload"]["parameters"] == PARAMETERS
        assert report["totals"]["weight_bytes"] == WEIGHT_BYTES
        assert any("GGUF F16 file" in note for note in report["notes"])


def test_an_id_no_file_has_is_refused_with_close_matches(stores):
    code, _, err = run("analyze", "--model", "gguf-tinyllama", "--hardware", "h100-sxm")
    assert code != 0 and "unknown model 'gguf-tinyllama': did you mean gguf-tinyllama-1-1b" in err


def test_a_session_holds_a_gguf_model_by_reference(stores, tmp_path, catalog, models):
    """``set_model("gguf-tinyllama-1-1b")``: the session holds the blob's path, size and time
    (not its content); saved and opened again it is the same session, the same bytes."""
    blob = stores["ollama"] / "blobs" / f"sha256-{stores['digest']}"
    doc = Document(catalog, models, Session(hardware=("h100-sxm",), params=WorkloadParams(batch=4)))
    doc.set_model("gguf-tinyllama-1-1b")
    assert doc.session.model == CONFIG_MODEL
    assert json.loads(doc.session.model_config) == {
        "gguf_file": str(blob), "bytes": 1_750_560, "modified_ns": blob.stat().st_mtime_ns}
    assert doc.analysis().totals.weight_bytes == WEIGHT_BYTES
    path = tmp_path / "gguf.roofline.yaml"
    doc.session.save(path)
    saved = yaml.safe_load(path.read_text())["workload"]
    assert saved["model"] == "config" and saved["model_config"]["gguf_file"] == str(blob)
    again = Document(catalog, models)
    again.open_session(path)
    assert again.session == doc.session
    assert again.model.parameter_count() == PARAMETERS
    assert again.analysis().totals.weight_bytes == WEIGHT_BYTES


def test_a_session_whose_gguf_file_changed_or_is_gone(stores, tmp_path, catalog, models):
    """A file written again is read as it is now, and the opening says so; a file gone opens
    the session with the default model, its other settings kept, the path named (the strict
    reader refuses it by field)."""
    blob = stores["ollama"] / "blobs" / f"sha256-{stores['digest']}"
    session = Session(hardware=("h100-sxm", "a100-80gb-sxm"), params=WorkloadParams(batch=32),
                      **model_choice(read_gguf_model(blob)))
    path = tmp_path / "g.roofline.yaml"
    session.save(path)
    os.utime(blob, ns=(blob.stat().st_atime_ns, blob.stat().st_mtime_ns + 10**9))
    messages: list[str] = []
    doc = Document(catalog, models)
    doc.subscribe(Topic.MESSAGE, messages.append)
    doc.open_session(path)
    assert doc.session.model == CONFIG_MODEL and doc.model.parameter_count() == PARAMETERS
    assert f"the GGUF file {blob} changed since the session was saved (written again since)" in \
        " | ".join(messages)
    blob.unlink()
    with pytest.raises(DataFileError, match=r"model_config.gguf_file.*is no longer there"):
        load_session(path, set(catalog), set(models))
    messages.clear()
    doc.open_session(path)
    s = doc.session
    assert s.model == defaults.MODEL and s.hardware == ("h100-sxm", "a100-80gb-sxm") and s.params.batch == 32
    said = " | ".join(messages)
    assert f"the GGUF file {blob} is no longer there" in said and f"showing {defaults.MODEL} instead" in said


def test_a_session_naming_a_gguf_id(stores, tmp_path, catalog, models):
    """``model: gguf-tinyllama-1-1b`` written by hand: read as the file's reference; an id no
    file has now is named as a GGUF file's."""
    path = tmp_path / "hand.roofline.yaml"
    path.write_text("schema: 2\nhardware: [h100-sxm]\nworkload: {model: gguf-tinyllama-1-1b, batch: 2}\n")
    session = load_session(path, set(catalog), set(models))
    blob = stores["ollama"] / "blobs" / f"sha256-{stores['digest']}"
    assert session.model == CONFIG_MODEL and json.loads(session.model_config)["gguf_file"] == str(blob)
    assert session.model_spec.parameter_count() == PARAMETERS and session.params.batch == 2
    path.write_text("schema: 2\nhardware: [h100-sxm]\nworkload: {model: gguf-tinyllama-7b}\n")
    with pytest.raises(DataFileError, match="'gguf-tinyllama-7b' is no longer listed: no GGUF file found on "
                                            "this machine has that id"):
        load_session(path, set(catalog), set(models))
