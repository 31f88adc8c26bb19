"""``roofline-explorer models``: presets, shipped configs and the models in a Hugging Face
cache folder (a fake one here), broken entries skipped with their reason, never fatal."""

import io
import json
import os

from explorer.commands import main as cli
from tests.core.test_hf_config import LLAMA_3_8B, MISTRAL_7B, QWEN3_8B


def _cache(root):
    def repo(name, files, main=None):
        folder = root / f"models--{name.replace('/', '--')}"
        for revision, text in files.items():
            snapshot = folder / "snapshots" / revision
            snapshot.mkdir(parents=True)
            if text is not None:
                (snapshot / "config.json").write_text(text)
        if main:
            (folder / "refs").mkdir()
            (folder / "refs" / "main").write_text(main)
        return folder

    repo("meta-llama/Meta-Llama-3-8B", {"old": json.dumps({**LLAMA_3_8B, "num_hidden_layers": 2}),
                                         "abc123": json.dumps(LLAMA_3_8B)}, main="abc123")
    repo("Qwen/Qwen3-8B", {"r1": json.dumps({**QWEN3_8B, "_name_or_path": "/mnt/ckpt/final"})})
    repo("someone/Qwen3-8B", {"r1": json.dumps({**QWEN3_8B, "_name_or_path": ""})})
    repo("someone/broken", {"r1": "{"})
    repo("someone/a-bert", {"r1": json.dumps({"architectures": ["BertModel"], "model_type": "bert"})})
    repo("someone/empty", {"r1": None})
    fifo = repo("someone/fifo", {"r1": None}) / "snapshots" / "r1" / "config.json"
    os.mkfifo(fifo)  # a special file is never opened: no hang
    piped = repo("someone/piped-ref", {"r1": json.dumps(MISTRAL_7B)})
    (piped / "refs").mkdir()
    os.mkfifo(piped / "refs" / "main")  # nor a pipe where refs/main should be: the newest snapshot
    (root / "datasets--x--y").mkdir()  # not a model


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    return cli.run(cli.parse_args(list(argv)), out, err), out.getvalue(), err.getvalue()


def test_the_cache_s_models_are_listed_with_presets_and_shipped_configs(tmp_path, monkeypatch):
    _cache(tmp_path)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    code, out, _ = run("models", "--json")
    assert code == 0
    listed = json.loads(out)
    kinds = {e["kind"] for e in listed}
    assert kinds == {"preset", "shipped", "cache"}
    cache = {e["name"]: e for e in listed if e["kind"] == "cache" and "someone--Qwen3-8B" not in e["where"]}
    ids = [e["id"] for e in listed if e["kind"] == "cache" and e["id"]]
    assert len(ids) == len(set(ids)) and "hf-someone-qwen3-8b" in ids  # the organisation keeps them apart
    llama = cache["Meta-Llama-3-8B"]  # refs/main's revision, named after its repository
    assert llama["parameters"] == 8_030_261_248 and llama["id"] == "hf-meta-llama-meta-llama-3-8b"
    assert llama["where"] == str(tmp_path / "models--meta-llama--Meta-Llama-3-8B" / "snapshots" / "abc123"
                                 / "config.json")  # the file itself, not its repository's name
    assert cache["Qwen3-8B"]["parameters"] == 8_190_735_360  # named by its repository, not "final"
    assert cache["piped-ref"]["parameters"] == 7_241_732_096
    problems = {e["where"].split("models--")[1].split("/")[0]: e["problem"] for e in cache.values()
                if e["problem"]}
    assert set(problems) == {"someone--broken", "someone--a-bert", "someone--empty", "someone--fifo"}
    assert "is not valid JSON" in problems["someone--broken"]
    assert "not a family this app reads" in problems["someone--a-bert"]
    assert problems["someone--empty"] == "someone/empty: no snapshot holds a config.json"
    assert problems["someone--fifo"] == (f"someone/fifo: {tmp_path}/models--someone--fifo/snapshots/r1/"
                                         "config.json: is a named pipe (FIFO), not a file: only regular "
                                         "files are read")


def test_the_table_lists_what_it_read_and_says_what_it_skipped(tmp_path, monkeypatch):
    _cache(tmp_path)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    code, out, err = run("models")
    assert code == 0 and "Meta-Llama-3-8B" in out and "8.03 B" in out and "25.6 M" in out  # ResNet-50
    assert err.count("skipped: ") == 4


def test_no_cache_is_no_error(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "absent"))
    code, out, _ = run("models", "--json")
    assert code == 0 and not [e for e in json.loads(out) if e["kind"] == "cache"]


def test_a_config_json_that_is_not_a_file_is_named_with_its_repository(tmp_path, monkeypatch):
    """A FIFO, a link to a blob that is gone (a download cut short) or a folder where the
    config.json should be: the repository is named and so is what its config.json is."""
    for name in ("fifo", "dangling", "folder"):
        (tmp_path / f"models--someone--{name}" / "snapshots" / "r1").mkdir(parents=True)
    config = "models--someone--{}/snapshots/r1/config.json".format
    os.mkfifo(tmp_path / config("fifo"))
    (tmp_path / config("dangling")).symlink_to("../../blobs/0123abcd")
    (tmp_path / config("folder")).mkdir()
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    code, _, err = run("models")
    assert code == 0
    skipped = sorted(line for line in err.splitlines() if line.startswith("skipped: "))
    assert skipped == [
        f"skipped: someone/dangling: {tmp_path / config('dangling')}: is a link to ../../blobs/0123abcd, "
        "which does not exist (a download cut short?)",
        f"skipped: someone/fifo: {tmp_path / config('fifo')}: is a named pipe (FIFO), not a file: only "
        "regular files are read",
        f"skipped: someone/folder: {tmp_path / config('folder')}: is a folder, not a file: only regular "
        "files are read"]


def test_every_listed_id_round_trips_through_analyze(tmp_path, monkeypatch):
    """Each id ``models --json`` lists is accepted by ``analyze --model`` and is the file
    listed beside it: the same analysis as ``--model-config`` on that path (its stored
    precision included). The cache holds real configs shipped with the app, one of them
    named as the shipped file is (``models--mixtral-8x7b``: its id takes a suffix)."""
    from pathlib import Path

    shipped = Path(__file__).parents[2] / "resources" / "models" / "configs"
    for repository, name in (("mistralai--Mistral-7B-v0.1", "mistral-7b"), ("Qwen--Qwen2.5-7B", "qwen2.5-7b"),
                             ("mixtral-8x7b", "mixtral-8x7b")):
        snapshot = tmp_path / f"models--{repository}" / "snapshots" / "0123abcd"
        snapshot.mkdir(parents=True)
        (snapshot / "config.json").write_text((shipped / f"{name}.json").read_text())
    stored_fp32 = tmp_path / "models--x--fp32" / "snapshots" / "r1" / "config.json"
    stored_fp32.parent.mkdir(parents=True)
    stored_fp32.write_text(json.dumps({**MISTRAL_7B, "torch_dtype": "float32"}))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    listed = [e for e in json.loads(run("models", "--json")[1]) if e["kind"] != "preset"]
    assert {e["kind"] for e in listed} == {"shipped", "cache"}
    assert len(listed) == len(list(shipped.glob("*.json"))) + 4  # (8 shipped today)
    assert len({e["id"] for e in listed}) == len(listed)
    ids = {e["where"]: e["id"] for e in listed}
    mistral = tmp_path / "models--mistralai--Mistral-7B-v0.1" / "snapshots" / "0123abcd" / "config.json"
    assert ids[str(mistral)] == "hf-mistralai-mistral-7b-v0-1"
    for entry in listed:
        code, out, err = run("analyze", "--model", entry["id"], "--hardware", "h100-sxm", "--json")
        assert code == 0, err
        by_id = json.loads(out)
        by_path = json.loads(run("analyze", "--model-config", entry["where"], "--hardware", "h100-sxm",
                                 "--json")[1])
        assert by_id["workload"]["model"] == entry["id"]
        assert by_id["workload"]["parameters"] == entry["parameters"]
        assert by_id["workload"]["weight_dtype"] == by_path["workload"]["weight_dtype"]
        assert by_id["totals"] == by_path["totals"]
        if entry["where"] == str(stored_fp32):  # as the file stores its weights, either way
            assert by_id["workload"]["weight_dtype"] == "fp32"


def test_an_id_no_file_has_is_refused_with_the_close_ones(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    code, _, err = run("analyze", "--model", "hf-mixtral-8x7", "--hardware", "h100-sxm")
    assert code != 0 and "unknown model 'hf-mixtral-8x7': did you mean hf-mixtral-8x7b" in err


def test_a_cache_too_big_to_read_whole_says_so(tmp_path, monkeypatch):
    from explorer.core.model import hf_cache

    for name in ("a", "b", "c"):
        snapshot = tmp_path / f"models--x--{name}" / "snapshots" / "r1"
        snapshot.mkdir(parents=True)
        (snapshot / "config.json").write_text(json.dumps(MISTRAL_7B))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setattr(hf_cache, "MAX_REPOSITORIES", 2)
    code, out, err = run("models")
    assert code == 0 and "hf-x-a" in out and "hf-x-b" in out and "hf-x-c" not in out
    assert (f"1 of the 3 repositories in {tmp_path} is not listed: only the first 2 in name order are "
            "read") in err
