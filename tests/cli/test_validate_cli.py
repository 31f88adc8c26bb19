"""`roofline-explorer validate`: the published runs with held-out figures, and a user's own
runs (`--runs FILE`) costed with the bundled terms, none of which was fitted to them."""

import io
import json

from explorer.commands import main as cli

# Two runs a reviewer might bring: a decode step on an H100 (vLLM's own benchmark gives TPOT
# at concurrency 1) and a training step, in the published-runs format (schema 1).
RUNS = """\
schema: 1
runs:
- id: mine-decode
  kind: decode
  model: llama-3-8b
  hardware: h100-sxm
  workload: {batch: 1, dtype: bf16, engine: vllm}
  context: 1024
  measured_s: 0.0075
  source: https://example.org/my-benchmark
  where: my table
  quote: "| 1 | 7.5 ms |"
  derivation: TPOT at concurrency 1
  engine: vLLM 0.11, bf16
- id: mine-train
  kind: train
  model: llama-3-8b
  hardware: a100-80gb-sxm
  workload: {batch: 64, dtype: bf16, dp: 8}
  prompt: 4096
  measured_s: 9.0
  source: https://example.org/my-training
  where: my log
  quote: "step 100 | 9.0 s"
  derivation: step time as logged
  engine: my trainer
"""


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(cli.parse_args(list(argv)), out, err)
    return code, out.getvalue(), err.getvalue()


def test_a_users_runs_are_costed_with_the_bundled_terms_and_called_held_out(tmp_path):
    path = tmp_path / "runs.yaml"
    path.write_text(RUNS, encoding="utf-8")
    code, out, err = run("validate", "--runs", str(path), "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert [r["id"] for r in doc["runs"]] == ["mine-decode", "mine-train"]
    assert doc["fitted_to_these"] is False and doc["held_out"] is False
    for r in doc["runs"]:
        assert r["bound_s"] <= r["kernels_s"] <= r["expected_s"]
        assert r["expected_low_s"] < r["expected_s"] < r["expected_high_s"]
        assert r["held_out_expected_s"] is None  # no leave-one-out: nothing here was fitted to
    code, out, err = run("validate", "--runs", str(path))
    assert code == 0 and "These runs were not fitted to: every expected time is held out." in out
    assert "mine-decode" in out and "in band" in out


def test_the_bundled_runs_report_held_out_figures_per_run():
    code, out, _ = run("validate", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["held_out"] is True and len(doc["runs"]) >= 80
    assert all(r["held_out_expected_s"] is not None for r in doc["runs"])
    assert doc["summary"].startswith("Held out (each source's runs predicted with terms fitted without")


def test_a_broken_runs_file_is_named_and_nothing_else_is_printed(tmp_path):
    path = tmp_path / "runs.yaml"
    path.write_text(RUNS.replace("measured_s: 9.0", "measured_s: -9"), encoding="utf-8")
    code, out, err = run("validate", "--runs", str(path))
    assert code == 1 and out == ""
    assert "runs.yaml" in err and "mine-train" in err and "measured_s" in err
    path.write_text(RUNS.replace("hardware: h100-sxm", "hardware: h900"), encoding="utf-8")
    code, out, err = run("validate", "--runs", str(path))
    assert code == 1 and "runs.yaml" in err and "no device 'h900' in the catalogue" in err
    code, out, err = run("validate", "--runs", str(tmp_path / "missing.yaml"))
    assert code == 1 and "missing.yaml" in err
