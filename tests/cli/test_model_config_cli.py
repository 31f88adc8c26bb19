"""``--model-config PATH``: every command that takes ``--model`` reads a Hugging Face
config.json instead; sessions and workload files carry the file's content."""

import json

import pytest

from explorer.core.model.hf_config import CONFIG_MODEL, read_config_file
from explorer.core.model.session import Session, load_session, load_workload, save_workload
from explorer.core.model.workload import WorkloadParams
from tests.core.test_hf_config import MIXTRAL_8X7B, QWEN25_7B

from .test_cli import run


def test_analyze_reads_a_config(mixtral):
    code, out, _ = run("analyze", "--hardware", "h100-sxm", "--model-config", str(mixtral), "--batch", "8")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "Mixtral-8x7B-v0.1 on NVIDIA H100 SXM5 80 GB"
    assert lines[1] == "46.7 B parameters, 12.9 B active per token (2 of 8 experts; all resident in memory)"
    assert any(line.startswith("expert_up") for line in lines)


def test_analyze_json_names_total_and_active_parameters(mixtral):
    code, out, _ = run("analyze", "--hardware", "h100-sxm", "--model-config", str(mixtral), "--json",
                       "--routing", "all")
    workload = json.loads(out)["workload"]
    spec = read_config_file(mixtral)
    assert code == 0 and workload["routing"] == "all"
    assert workload["parameters"] == spec.parameter_count() and \
        workload["active_parameters"] == spec.parameter_count(active=True)


def test_model_and_model_config_exclude_each_other(mixtral):
    code, _, _ = run("analyze", "--hardware", "h100-sxm", "--model", "gpt2", "--model-config", str(mixtral))
    assert code == 2


def test_a_broken_config_is_an_error_naming_file_and_field(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**QWEN25_7B, "hidden_size": "big"}))
    code, out, err = run("analyze", "--hardware", "h100-sxm", "--model-config", str(path))
    assert code == 1 and not out
    assert f"{path}: field 'hidden_size': must be a whole number" in err


def test_explain_lab_and_export_take_a_config(mixtral, tmp_path):
    code, out, _ = run("explain", "--hardware", "h100-sxm", "--model-config", str(mixtral))
    assert code == 0 and "Mixtral-8x7B-v0.1" in out
    code, out, _ = run("lab", "--model-config", str(mixtral), "--json")
    assert code == 0 and json.loads(out)["model"] == "hf-mixtral-8x7b-v0-1"
    svg = tmp_path / "chart.svg"
    code, _, _ = run("export", "--hardware", "h100-sxm", "--model-config", str(mixtral), "--out", str(svg))
    assert code == 0 and "Mixtral-8x7B-v0.1" in svg.read_text()


def test_sessions_and_workload_files_carry_the_config(mixtral, tmp_path, catalog, models):
    spec = read_config_file(mixtral)
    session = Session(hardware=("h100-sxm",), model=CONFIG_MODEL, model_config=spec.config,
                      params=WorkloadParams(batch=4, routing="all"))
    session.save(tmp_path / "s.yaml")
    assert str(mixtral) not in (tmp_path / "s.yaml").read_text()  # its content, not its path
    mixtral.unlink()  # another machine: the config.json is not there
    loaded = load_session(tmp_path / "s.yaml", set(catalog), set(models))
    assert loaded == session and loaded.model_spec.parameter_count() == spec.parameter_count()
    save_workload(tmp_path / "w.yaml", session)
    workload = load_workload(tmp_path / "w.yaml", set(models))
    assert workload.model == CONFIG_MODEL and workload.config == spec.config
    assert workload.params.routing == "all"


def test_a_session_with_a_broken_config_names_the_field(tmp_path, catalog, models):
    from explorer.core.files.datafile import DataFileError

    session_file = tmp_path / "s.yaml"
    Session(model=CONFIG_MODEL, model_config=json.dumps(MIXTRAL_8X7B, sort_keys=True)).save(session_file)
    text = session_file.read_text()
    session_file.write_text(text.replace("num_experts_per_tok: 2", "num_experts_per_tok: 9"))
    with pytest.raises(DataFileError) as caught:
        load_session(session_file, set(catalog), set(models))
    assert caught.value.field == "workload.model_config.num_experts_per_tok"
    assert "9 experts per token but only 8 experts" in str(caught.value)
