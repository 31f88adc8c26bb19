"""``serve``: the operating points as a table or JSON with the fields the serving planner
promises, the chosen point and why, and clear errors for a bad target."""

import json

import pytest

from explorer.core.analysis.energy import IDLE_SHARE
from explorer.core.analysis.energy_validation import estimate_source
from tests.cli.test_cli import run

KEYS = {"batch", "tokens_per_s_per_device", "tokens_per_s_per_user", "ttft_s", "tpot_s", "tpot_low_s",
        "tpot_high_s", "kv_wall_sequences",
        "cost_per_million_tokens", "joules_per_token", "joules_per_token_estimate", "limited_by"}


def test_serve_json_lists_every_point_with_the_promised_fields():
    code, out, err = run("serve", "--hardware", "h100-sxm", "--model", "llama-3-8b", "--prompt", "512",
                         "--output", "512", "--tpot-target", "20ms", "--price-per-device-hour", "2.5",
                         "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["devices"] == 1 and data["times"] == "expected"
    assert all(set(p) == KEYS for p in data["points"])
    chosen = data["chosen"]
    assert chosen["tpot_s"] <= 0.020 and chosen["limited_by"].startswith("the TPOT target")
    bigger = [p for p in data["points"] if p["batch"] > chosen["batch"]]
    assert bigger[0]["tpot_s"] > 0.020  # the next batch misses the target, as it says
    per_hour = chosen["tokens_per_s_per_device"] * 3600  # prefills included in the rate
    assert chosen["cost_per_million_tokens"] == pytest.approx(2.5 / per_hour * 1e6)
    assert data["joules_per_token_source"] == "at TDP (TDP ÷ tokens/s), no bound"
    assert data["joules_per_token_estimate_source"] == estimate_source()  # the power model, its checks
    assert all(IDLE_SHARE * p["joules_per_token"] <= p["joules_per_token_estimate"] <= p["joules_per_token"]
               for p in data["points"])


def test_serve_prints_a_table_and_the_chosen_point_the_readme_quotes():
    code, out, err = run("serve", "--hardware", "h100-sxm", "--model", "llama-3-70b", "--tp", "4",
                         "--tpot-target", "40ms")
    assert code == 0, err
    assert "the KV cache holds at most 248 requests at full length (prompt + output)" in out
    # docs/commands.md: "batch 187, about 831 tokens/s a device at 39.92 ms a token (batch 188
    # takes 40.0 ms)"
    # a user: 1,024 tokens ÷ (1,024 × TPOT + 187 prefills of 89.4 ms) = 17.8 tokens/s
    assert "Chosen: batch 187, 831 tokens/s a device, 17.8 a user, 39.92 ms a token (" in out
    assert "the TPOT target: batch 188 takes 40.0 ms a token" in out
    head, _, one = out.splitlines()[:3]  # batch 1: the power model's estimate beside the figure at TDP
    assert head.endswith("J/token at TDP  J/token (estimate)")
    assert one.split()[-4:] == ["59.9", "J", "37", "J"]  # docs/commands.md quotes both rows
    chosen = next(line for line in out.splitlines() if line.split()[:1] == ["187"])
    assert chosen.split()[-4:] == ["0.842", "J", "0.616", "J"]


@pytest.mark.parametrize(("argv", "words"), [
    (["--tpot-target", "fast"], "--tpot-target"),
    (["--ttft-target", "-1 s"], "--ttft-target"),
    (["--price-per-device-hour", "cheap"], "--price-per-device-hour"),
])
def test_a_bad_target_is_a_usage_error(argv, words, capsys):
    code, _, _ = run("serve", "--hardware", "h100-sxm", "--model", "llama-3-8b", *argv)
    assert code == 2 and words in capsys.readouterr().err


def test_what_cannot_be_served_is_a_usage_error_that_says_why():
    code, _, err = run("serve", "--hardware", "l4", "--model", "llama-3.1-405b")
    assert code == 2 and "does not fit on NVIDIA L4" in err
    code, _, _ = run("serve", "--hardware", "h100-sxm", "--model", "llama-3-8b", "--zero", "1")
    assert code == 2  # a training-only option is not offered


def test_a_draft_needs_its_acceptance_rate():
    code, _, err = run("serve", "--hardware", "h100-sxm", "--model", "llama-3-70b", "--tp", "4",
                       "--draft", "llama-3-8b")
    assert code == 2 and "--draft needs --acceptance" in err
    code, out, err = run("serve", "--hardware", "h100-sxm", "--model", "llama-3-70b", "--tp", "4",
                         "--draft", "llama-3-8b", "--acceptance", "0.8", "--json")
    assert code == 0, err
    assert any("3.36 tokens a step" in note for note in json.loads(out)["notes"])


def test_serve_searches_every_split_of_the_devices_best_first(models, catalog):
    """Llama 3 70B on eight H100s: each split planned exactly as serve plans it alone, ranked
    by tokens/s a device at the chosen point; splits that cannot serve (the weights on one
    device) or meet no target come last, with why."""
    from dataclasses import replace

    from explorer.core.analysis.serving import plan
    from explorer.core.model.workload import WorkloadParams

    code, out, err = run("serve", "--hardware", "h100-sxm", "--model", "llama-3-70b", "--devices", "8",
                         "--tpot-target", "50ms", "--json")
    assert code == 0, err
    layouts = json.loads(out)["layouts"]
    assert {(s["tp"] * s["pp"] * s["dp"] * s["ep"]) for s in layouts} == {8} and len(layouts) == 10
    rates = [s["plan"]["chosen"]["tokens_per_s_per_device"] for s in layouts
             if s["plan"] and s["plan"]["chosen"]]
    assert rates == sorted(rates, reverse=True) and len(rates) >= 3
    [dp8] = [s for s in layouts if s["dp"] == 8]
    assert dp8 == layouts[-1] and dp8["plan"] is None and "does not fit" in dp8["error"]
    best = layouts[0]
    split = replace(WorkloadParams(), tp=best["tp"], pp=best["pp"], dp=best["dp"])
    alone = plan(models["llama-3-70b"], split, catalog["h100-sxm"], 1024, 1024, tpot_target_s=0.05)
    chosen = best["plan"]["chosen"]
    assert chosen["tokens_per_s_per_device"] == pytest.approx(alone.chosen.tokens_per_s_per_device)
    code, out, _ = run("serve", "--hardware", "h100-sxm", "--model", "llama-3-70b", "--devices", "8",
                       "--tpot-target", "50ms")
    assert f"Best: {best['name']}," in out and "no batch meets the targets" in out


def test_serve_devices_refuses_a_split_of_its_own():
    code, _, err = run("serve", "--hardware", "h100-sxm", "--model", "llama-3-70b", "--devices", "8",
                       "--tp", "2")
    assert code == 2 and "--devices searches the splits itself: leave out --tp" in err


def test_the_readme_names_the_best_split_it_quotes():
    from pathlib import Path

    code, out, _ = run("serve", "--hardware", "h100-sxm", "--model", "llama-3-70b", "--devices", "8",
                       "--tpot-target", "50ms", "--json")
    layouts = json.loads(out)["layouts"]
    page = Path(__file__).resolve().parents[2] / "docs" / "commands.md"
    readme = " ".join(page.read_text(encoding="utf-8").split())
    assert code == 0 and f"with a 50 ms TPOT target: {layouts[0]['name']} first" in readme
    assert layouts[-1]["dp"] == 8 and "eight replicas of one device do not fit" in readme


def test_serve_devices_says_why_nothing_serves():
    code, _, err = run("serve", "--hardware", "h100-sxm", "--model", "resnet-50", "--devices", "8")
    assert code == 2 and "does not generate tokens" in err  # refused once, as serve refuses it
    code, out, _ = run("serve", "--hardware", "h100-sxm", "--model", "llama-3-70b", "--devices", "1")
    assert code == 0 and "No split of 1 device can serve Llama 3 70B: see why in the last column." in out
    code, out, _ = run("serve", "--hardware", "h100-sxm", "--model", "llama-3-70b", "--devices", "8")
    assert "Splits with a pipeline (PP) are costed one batch at a time" in out


def test_serve_plans_continuous_batching_with_chunked_prefill():
    code, out, err = run("serve", "--hardware", "h100-sxm", "--model", "llama-3-8b", "--prompt", "4096",
                         "--output", "128", "--prefill-chunk", "512", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["chosen"]["batch"] == 16 and doc["points"][-1]["batch"] == 16
    assert doc["chosen"]["limited_by"].startswith("the prefill chunk")
    assert any("chunked prefill" in note for note in doc["notes"])
    code, _, _ = run("serve", "--hardware", "h100-sxm", "--model", "llama-3-8b", "--prefill-chunk", "0")
    assert code == 2  # a chunk of no tokens is refused by the option itself


def test_serve_offloads_kv_caches_to_host_memory():
    code, out, err = run("serve", "--hardware", "h100-sxm", "--model", "llama-3-70b", "--tp", "4",
                         "--kv-offload", "256", "--json")
    assert code == 0, err
    doc = json.loads(out)
    # 256 GiB a device over a cache of 2,048 tokens × 80 KiB (80 layers × K, V × 2 heads × 128 × 2 B)
    assert doc["kv_wall_sequences"] == 248
    assert doc["offloaded_sequences"] == 256 * 2**30 // (2048 * 81920) == 1638
    assert doc["points"][-1]["batch"] == 248 + doc["offloaded_sequences"]
    code, _, _ = run("serve", "--hardware", "h100-sxm", "--model", "llama-3-8b", "--kv-offload", "-1")
    assert code == 2


def test_serve_plans_a_load_and_refuses_it_with_a_search():
    code, out, err = run("serve", "--hardware", "h100-sxm", "--model", "llama-3-8b", "--tpot-target", "50ms",
                         "--arrival-rate", "5", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["chosen"]["limited_by"].startswith("the load: 5 requests/s spend least time in the system")
    assert doc["chosen"]["tokens_per_s_per_device"] == pytest.approx(5 * 1024)  # the load's
    code, _, err = run("serve", "--hardware", "h100-sxm", "--model", "llama-3-8b", "--devices", "8",
                       "--arrival-rate", "5")
    assert code == 2 and "--arrival-rate plans one layout's load" in err


def test_serve_gives_each_point_the_band_of_its_time_a_token():
    code, out, err = run("serve", "--hardware", "h100-sxm", "--model", "llama-3-70b", "--tp", "4", "--json")
    assert code == 0, err
    doc = json.loads(out)
    for p in doc["points"]:
        assert p["tpot_low_s"] < p["tpot_s"] < p["tpot_high_s"]
        assert p["tokens_per_s_per_user"] * p["batch"] == pytest.approx(p["tokens_per_s_per_device"] * 4)
    code, out, err = run("serve", "--hardware", "h100-sxm", "--model", "llama-3-70b", "--tp", "4", "--json",
                         "--efficiency", "bound")
    assert code == 0, err
    assert all(p["tpot_low_s"] is None and p["tpot_high_s"] is None for p in json.loads(out)["points"])
