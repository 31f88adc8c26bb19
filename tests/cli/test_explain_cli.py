"""``explain``, ``scenes`` and ``lab``: the app's words headless, with the claims behind them."""

import json

import pytest

from tests.cli.test_cli import run


def test_explain_prints_the_panel_with_its_claims():
    code, out, err = run("explain", "--hardware", "a100-80gb-sxm,xeon-platinum-8480", "--model",
                         "llama-3-8b", "--context", "128", "--op", "gate_proj")
    assert code == 0, err
    assert "Selected: gate_proj" in out and "From a batch of 161 on it would be compute-bound" in out
    assert "From batch 213 on the step is compute-bound" in out
    assert "CPU and GPU" in out and "6.6× faster" in out
    assert "- crossing “213”: crossing_batch=213 [ok]" in out
    assert "FAILS" not in out


def test_explain_json_has_the_numbers_behind_each_sentence():
    code, out, _ = run("explain", "--hardware", "t4", "--model", "llama-3-8b", "--dtype", "fp16",
                       "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["hardware"] == ["t4"] and doc["params"]["memory_fraction"] == 0.9
    titles = [e["title"] for e in doc["explanations"]]
    assert titles[0] == "What limits the step" and "Memory" in titles
    lower = next(e for e in doc["explanations"] if e["title"] == "Lower precision")
    assert "has no fp8 arithmetic" in lower["text"] and lower["problems"] == []
    assert lower["claims"][0]["kind"] == "faster" and lower["claims"][0]["factor"] > 1
    memory = next(e for e in doc["explanations"] if e["title"] == "Memory")
    assert memory["claims"][0] == {"kind": "fits", "phrase": "does not fit", "fits": False,
                                   "required_bytes": memory["numbers"]["required_bytes"],
                                   "budget_bytes": 0.9 * 15360 * 2**20}


@pytest.mark.parametrize("argv, message", [
    (("explain", "--hardware", "h100", "--model", "gpt2"), "unknown hardware 'h100'"),
    (("explain", "--hardware", "t4", "--model", "llama"), "unknown model 'llama'"),
    (("explain", "--hardware", "t4,t4", "--model", "gpt2"), "one to four different device ids"),
    (("explain", "--hardware", "t4", "--model", "gpt2", "--op", "nope"), "no op 'nope'"),
    (("scenes", "show", "cpu-vs-gpu", "--step", "9"), "has steps 1 to 4, not 9"),
    (("scenes", "show", "no-such"), "unknown scene 'no-such'"),
    (("lab", "--to", "h100-sxm"), "no measured memory latency"),
    (("lab", "--from", "t4"), "from a CPU to a GPU"),
    (("lab", "--model", "resnet-50"), "not a language model"),
    (("lab", "--stage", "7"), "stages run from 0 to 6"),
    (("lab", "--in-flight", "lots"), "expected a size"),
])
def test_bad_ids_and_options_exit_2_with_a_message(argv, message):
    code, _, err = run(*argv)
    assert code == 2 and message in err and "Traceback" not in err


def test_explain_rejects_a_bad_share():
    code, _, _ = run("explain", "--hardware", "t4", "--model", "gpt2", "--memory-fraction", "2")
    assert code == 2


def test_scenes_list_and_show():
    code, out, _ = run("scenes", "list", "--json")
    ids = [s["id"] for s in json.loads(out)]
    assert code == 0 and len(ids) == 15 and {"decode-batching", "moving-data", "measured-model"} <= set(ids)
    code, out, _ = run("scenes", "show", "decode-batching", "--step", "4", "--json")
    step = json.loads(out)["steps"][0]
    assert code == 0 and step["step"] == 4 and step["state"]["workload"]["batch"] == 512
    assert "up to 1,800 sequences would fit" in step["text"] and step["problems"] == []
    kinds = {c["kind"] for c in step["claims"]}
    assert {"max_batch", "bound"} <= kinds


def test_scenes_check_passes_the_shipped_scenes():
    code, out, err = run("scenes", "check")
    assert code == 0 and "checked 61 step(s) in 15 file(s): all claims hold" in out and err == ""


def test_scenes_check_names_the_file_step_and_claim_that_fails(tmp_path):
    good = tmp_path / "good.yaml"
    good.write_text("""schema: 1
scenes:
- id: mine
  title: Mine
  start: {hardware: [h100-sxm], workload: {model: llama-3-8b, batch: 1}}
  steps:
  - caption: "One token: {step/time}, {step/bound}."
  - caption: "A batch of 8 takes {step/time}, {step/vs-previous}."
    batch: 8
""")
    code, out, err = run("scenes", "check", str(good))
    assert code == 0 and "all claims hold" in out
    bad = tmp_path / "bad.yaml"
    bad.write_text(good.read_text().replace(
        '"One token: {step/time}, {step/bound}."',
        '"One token, already compute-bound."\n    check: {bound: compute}')
                   .replace("{step/vs-previous}", "twice as fast"))
    code, out, err = run("scenes", "check", str(bad))
    assert code == 2 and "2 problem(s)" in out
    assert f"{bad}: scene 'mine', step 1: bound: the step is memory-bound, not compute-bound" in err
    assert f"{bad}: scene 'mine', step 2: 'twice as' states a speed comparison that no claim backs" in err

    broken = tmp_path / "broken.yaml"
    broken.write_text(good.read_text().replace("{step/time}", "{step/speed}", 1))
    code, _, err = run("scenes", "check", str(broken))
    assert code == 2 and "broken.yaml" in err and "steps[0].caption" in err and "unknown field 'speed'" in err


def test_lab_prints_every_stage_with_its_parts():
    code, out, err = run("lab")
    assert code == 0, err
    assert out.count("Stage ") == 7
    assert "compute from a100-80gb-sxm (vector units), memory from xeon-platinum-8480" in out
    assert "what-if 16 KiB in flight" in out
    last = out[out.index("Stage 6: Batching"):]
    assert "compute from a100-80gb-sxm, memory from a100-80gb-sxm\n" in last
    assert "derived: nothing" in last and "the GPU is 6.6× faster" in last and "FAILS" not in out


def test_lab_json_time_per_stage():
    code, out, _ = run("lab", "--stage", "6", "--context", "128", "--json")
    stage = json.loads(out)["stages"][0]
    assert code == 0 and stage["stage"] == 6 and stage["device"]["parts"]["what_if"] == ""
    assert stage["device"]["memory"]["bandwidth_bytes_per_s"] == 2039e9
    assert "from batch 213 on" in stage["text"] and stage["time_s"] > 0


def test_scenes_check_names_an_op_the_model_lacks_as_a_failed_claim(tmp_path):
    scene = tmp_path / "ops.yaml"
    scene.write_text("""schema: 1
scenes:
- id: ops
  title: Ops
  start: {hardware: [h100-sxm], workload: {model: llama-3-8b, batch: 1}}
  steps:
  - caption: "Decode reads the weights."
    check: {memory_bound: [down_proj, no_such_op], compute_bound: [role:nothing]}
""")
    code, out, err = run("scenes", "check", str(scene))
    assert code == 2 and "2 problem(s)" in out and "Traceback" not in err
    assert f"{scene}: scene 'ops', step 1: bound: Llama 3 8B has no op 'no_such_op' (" in err
    assert f"{scene}: scene 'ops', step 1: bound: Llama 3 8B has no ops for 'role:nothing'" in err
