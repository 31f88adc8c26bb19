"""``analyze`` with parallel degrees and the train phase: the JSON lists the communication
ops by role, one device's totals, and a training run's time, device-hours and energy."""

import json

import pytest

from explorer.core.model import training

from .test_cli import run


def test_tp8_decode_lists_two_all_reduces_per_layer():
    code, out, _ = run("analyze", "--hardware", "h100-sxm", "--model", "llama-3-70b", "--tp", "8",
                       "--context", "4096", "--allreduce", "nccl", "--json")
    assert code == 0
    report = json.loads(out)
    assert report["workload"]["devices"] == 8 and report["totals"]["per_device"]
    comm = report["communication"]
    assert [(c["name"], c["role"], c["count"], c["link"]) for c in comm] == [
        ("attn_all_reduce", "all_reduce", 80, "NVLink 4"), ("mlp_all_reduce", "all_reduce", 80, "NVLink 4")]
    assert comm[0]["bytes_sent"] == 2 * 7 * 8192 * 2 // 8
    assert comm[0]["latency_s"] == pytest.approx(6.6e-6 + 14 * 0.6e-6) and comm[0]["algorithm"] == "ring/LL"
    roles = {op["role"] for op in report["ops"]}
    assert "all_reduce" in roles
    bounds = {op["bound"] for op in report["ops"] if op["role"] == "all_reduce"}
    assert bounds == {"communication"}
    assert {x["name"] for x in report["hardware"]["links"]} == {"NVLink 4", "InfiniBand NDR", "PCIe 5.0 x16"}


def test_the_json_reports_the_bytes_and_steps_of_the_algorithm_that_runs():
    # decode at TP 8, batch 1: a 16 KiB message, below vLLM's 256 KiB: one-shot, every
    # device sending its buffer to the 7 others in one step ((n − 1) × 16,384 bytes); a ring
    # would send 2·7/8 of it in 14 steps
    code, out, _ = run("analyze", "--hardware", "h100-sxm", "--model", "llama-3-70b", "--tp", "8",
                       "--context", "4096", "--allreduce", "oneshot", "--json")
    assert code == 0
    comm = json.loads(out)["communication"][0]
    assert comm["algorithm"] == "oneshot"
    assert (comm["bytes_sent"], comm["steps"]) == (7 * 8192 * 2, 1)


def test_a_training_run_in_days_device_hours_and_energy():
    code, out, _ = run("analyze", "--hardware", "h100-sxm", "--model", "llama-2-7b", "--phase", "train",
                       "--seq", "4096", "--batch", "64", "--dp", "8", "--recompute", "full",
                       "--tokens", "2e12", "--mfu", "0.5", "--json")
    assert code == 0
    report = json.loads(out)
    t = report["training"]
    assert t["tokens_per_step"] == 64 * 4096 and t["steps"] == pytest.approx(2e12 / (64 * 4096))
    assert t["at_mfu"]["mfu"] == 0.5
    assert t["at_mfu"]["step_s"] == pytest.approx(t["model_flops_per_step"] / (8 * 989.4e12 * 0.5))
    assert t["at_mfu"]["device_hours"] == pytest.approx(t["at_mfu"]["seconds"] * 8 / 3600)
    assert t["at_mfu"]["energy_j_at_tdp"] == pytest.approx(t["at_mfu"]["seconds"] * 8 * 700)
    # forward + backward of every device ≈ 6 N D per step (plus attention)
    assert t["model_flops_per_step"] == pytest.approx(6 * 6.74e9 * 64 * 4096, rel=0.1)
    assert [c["name"] for c in report["communication"]] == ["grad_all_reduce"]
    assert t["mfu_default_sources"] == list(training.MFU_SOURCES)


def test_text_output_names_the_split_and_the_run():
    code, out, _ = run("analyze", "--hardware", "h100-sxm", "--model", "llama-3-70b", "--phase", "train",
                       "--seq", "4096", "--batch", "64", "--tp", "8", "--pp", "4", "--dp", "2",
                       "--recompute", "full",
                       "--tokens", "1.4e12")
    assert code == 0
    assert "64 devices: tensor parallel 8, pipeline 4, data parallel 2; the ops below are one device's" in out
    assert "at 40% model-FLOPs utilisation (stated default 40%)" in out
    assert "gradients and optimizer state" in out


@pytest.mark.parametrize(("args", "message"), [
    (["--tokens", "1e12"], "add --phase train"),
    (["--tp", "3"], "64 attention heads"),
])
def test_mistakes_are_named(args, message):
    code, _, err = run("analyze", "--hardware", "h100-sxm", "--model", "llama-3-70b", *args)
    assert code != 0 and message in err


def test_a_degree_below_one_is_a_usage_error():
    assert run("analyze", "--hardware", "h100-sxm", "--model", "llama-3-70b", "--tp", "0")[0] == 2
