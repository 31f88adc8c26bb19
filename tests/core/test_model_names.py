"""Where the Hugging Face cache is, and what a config.json found on the disk is called: the
same name and id wherever the file is opened from, one id per file."""

import json
from pathlib import Path

import pytest

from explorer.core.model.hf_cache import hub_folder, scan
from explorer.core.model.hf_config import read_config_file, spec_from_config
from explorer.core.model.hf_names import folder_name, hub_name, repository_of
from explorer.core.model.local_models import find_model, local_models
from explorer.paths import resource_path
from tests.core.test_hf_config import LLAMA_3_8B, MISTRAL_7B, QWEN3_8B

HOME = str(Path("~").expanduser())
HASH = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize(("environ", "folder"), [
    ({"HF_HUB_CACHE": "/a", "HUGGINGFACE_HUB_CACHE": "/b", "HF_HOME": "/c", "XDG_CACHE_HOME": "/d"}, "/a"),
    ({"HUGGINGFACE_HUB_CACHE": "/b", "HF_HOME": "/c", "XDG_CACHE_HOME": "/d"}, "/b"),
    ({"HF_HOME": "/c", "XDG_CACHE_HOME": "/d"}, "/c/hub"),
    ({"XDG_CACHE_HOME": "/d"}, "/d/huggingface/hub"),  # was ignored: ~/.cache was read instead
    ({}, f"{HOME}/.cache/huggingface/hub"),
    ({"HF_HUB_CACHE": "", "HF_HOME": "", "XDG_CACHE_HOME": ""}, f"{HOME}/.cache/huggingface/hub"),
    ({"HF_HOME": "~/hf"}, f"{HOME}/hf/hub"),  # expanded as huggingface_hub expands it
    ({"HF_HUB_CACHE": "$DATA/hub", "DATA": "/data"}, "/data/hub"),
])
def test_the_cache_is_where_huggingface_hub_puts_it(environ, folder):
    assert hub_folder(environ) == Path(folder)


def test_a_cache_path_names_its_repository_and_a_folder_skips_hashes_and_checkpoints():
    assert repository_of(f"/h/models--Qwen--Qwen3-8B/snapshots/{HASH}/config.json") == "Qwen/Qwen3-8B"
    assert repository_of("/h/Qwen3-8B/config.json") == ""
    assert folder_name(f"/data/Qwen3-8B/{HASH}") == "Qwen3-8B"
    assert folder_name("/runs/my-run/checkpoint-500") == "my-run"
    assert folder_name("/runs/snapshots/" + HASH) == "runs"
    assert hub_name("meta-llama/Llama-2-7b-hf") == "meta-llama/Llama-2-7b-hf"  # a Hub id as it is
    assert hub_name("out/checkpoint-500") == "out"
    cached = f"/root/.cache/huggingface/hub/models--Qwen--Qwen3-8B/snapshots/{HASH}"
    assert hub_name(cached) == "Qwen/Qwen3-8B"
    assert hub_name("checkpoint-500") == ""


def _write(path: Path, config: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config))
    return path


def test_a_fine_tune_is_named_by_itself_wherever_it_is_opened_from(tmp_path):
    """Its config names the base model it was trained from; in the cache it is its own
    repository: the listing and ``--model-config`` on the same file say the same."""
    file = _write(tmp_path / "models--someone--llama-ft" / "snapshots" / HASH / "config.json",
                  {**LLAMA_3_8B, "_name_or_path": "meta-llama/Meta-Llama-3-8B"})
    opened = read_config_file(file)
    [listed] = [e for e in local_models(cache=scan(tmp_path)) if e.kind == "cache"]
    assert (opened.name, opened.id) == ("llama-ft", "hf-someone-llama-ft")
    assert listed.spec is not None and (listed.spec.name, listed.id) == (opened.name, opened.id)
    # the session holds the content: reopened from it, still the fine-tune
    again = spec_from_config(json.loads(opened.config), "the session's model config")
    assert (again.name, again.id) == ("llama-ft", "hf-someone-llama-ft")


@pytest.mark.parametrize(("where", "given", "name", "ident"), [
    (f"Qwen3-8B/{HASH}/config.json", None, "Qwen3-8B", "hf-qwen3-8b"),  # a snapshot copied out
    ("my-run/checkpoint-500/config.json", None, "my-run", "hf-my-run"),  # a Trainer's save
    ("elsewhere/config.json", "out/checkpoint-500", "out", "hf-out"),
    ("elsewhere/config.json", f"/root/.cache/huggingface/hub/models--Qwen--Qwen3-8B/snapshots/{HASH}",
     "Qwen3-8B", "hf-qwen3-8b"),  # saved after loading from the cache: named by its repository
    ("elsewhere/config.json", "Qwen/Qwen3-8B", "Qwen3-8B", "hf-qwen-qwen3-8b"),
])
def test_a_folder_that_says_nothing_of_the_model_does_not_name_it(tmp_path, where, given, name, ident):
    config = QWEN3_8B if given is None else {**QWEN3_8B, "_name_or_path": given}
    spec = read_config_file(_write(tmp_path / where, config))
    assert (spec.name, spec.id) == (name, ident)
    again = spec_from_config(json.loads(spec.config), "the session's model config")
    assert (again.name, again.id) == (name, ident)


def test_two_files_with_one_name_get_an_id_each_and_each_id_finds_its_file(tmp_path, monkeypatch):
    """``models--mixtral-8x7b`` (no organisation) would be the shipped mixtral-8x7b.json's
    hf-mixtral-8x7b; ``A/x`` and ``a/x`` would both be hf-a-x."""
    snapshot = "snapshots/r1/config.json"
    _write(tmp_path / "models--mixtral-8x7b" / snapshot, {**MISTRAL_7B, "_name_or_path": ""})
    _write(tmp_path / "models--A--x" / snapshot, LLAMA_3_8B)
    _write(tmp_path / "models--a--x" / snapshot, QWEN3_8B)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    listed = local_models(taken=("mixtral-8x7b",))
    ids = [e.id for e in listed]
    shipped = len(list(resource_path("models", "configs").glob("*.json")))  # (8 today)
    assert len(ids) == len(set(ids)) == shipped + 3  # the shipped configs and the three here
    by_path = {str(e.path): e.id or "" for e in listed}
    shipped = [e for e in listed if e.kind == "shipped" and e.path.name == "mixtral-8x7b.json"]
    assert shipped[0].id == "hf-mixtral-8x7b"  # the shipped one keeps its id
    mistral = by_path[str(tmp_path / "models--mixtral-8x7b" / snapshot)]
    assert mistral.startswith("hf-mixtral-8x7b-") and len(mistral) == len("hf-mixtral-8x7b-") + 6
    upper = by_path[str(tmp_path / "models--A--x" / snapshot)]
    lower = by_path[str(tmp_path / "models--a--x" / snapshot)]
    assert upper == "hf-a-x" and lower.startswith("hf-a-x-")
    assert local_models(taken=("mixtral-8x7b",)) == listed  # the same ids on every read
    assert find_model(mistral).parameter_count() == 7_241_732_096  # each id is its own file
    assert find_model("hf-mixtral-8x7b").parameter_count() == 46_702_792_704
    assert find_model(upper).parameter_count() == 8_030_261_248
    assert find_model(lower).parameter_count() == 8_190_735_360


def test_an_unknown_id_names_the_close_ones(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(KeyError, match="unknown model 'hf-mixtral-8x7': did you mean hf-mixtral-8x7b"):
        find_model("hf-mixtral-8x7")
