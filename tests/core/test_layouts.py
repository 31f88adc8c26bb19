"""The layout search: every split of N devices, costed by the same analysis as the chart,
ranked by a goal, each with why it ranks where it does."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

import pytest

from explorer.commands import main as cli
from explorer.core.analysis.analysis import analyze
from explorer.core.analysis.expected import expected_for
from explorer.core.analysis.layouts import (
    context_degrees,
    dispatches,
    layouts,
    ranked,
    schedules,
    splits,
    why,
)
from explorer.core.model.workload import WorkloadParams
from explorer.core.units import format_time


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(cli.parse_args(list(argv)), out, err)
    return code, out.getvalue(), err.getvalue()


def test_every_split_of_the_devices_is_tried(models):
    assert len(splits(models["llama-3-70b"], 8)) == 10  # ordered (tp, pp, dp) with product 2³: C(5, 2)
    moe = splits(models["mixtral-8x7b"], 8)
    assert (1, 1, 1, 8) in moe and (1, 1, 2, 4) in moe
    assert (2, 1, 1, 4) in moe  # tensor and expert parallel together
    assert splits(models["resnet-50"], 4) == [(1, 1, 4, 1)]  # a CNN only splits its batch


def test_llama_3_70b_decode_on_8_h100_is_fastest_on_tp_8_and_says_why(models, catalog):
    m, h100 = models["llama-3-70b"], catalog["h100-sxm"]
    step = WorkloadParams(phase="decode", batch=8, context=1024)
    order = ranked(layouts(m, h100, 8, step), "latency")
    best = order[0]
    assert best.name == "TP 8" and best.fits
    a = analyze(m, replace(step, tp=8), h100)
    assert best.time_s == expected_for(a).time_s and best.bound_s == a.totals.time_s  # the chart's analysis
    assert best.tokens_per_s_per_device == pytest.approx(8 / best.time_s / 8)
    assert best.tokens_per_s_per_user == pytest.approx(1 / best.time_s)
    assert all(c.time_s >= best.time_s for c in order if c.fits)
    dp8 = next(c for c in order if c.name == "DP 8")
    assert not dp8.fits and order[-1] is dp8  # 70 B in bf16 on one device: 132 GiB
    assert why(dp8, best, "latency").startswith("does not fit: needs 132 GiB")
    second = order[1]
    assert why(second, best, "latency").startswith(f"{second.time_s / best.time_s:.2f}× the best's step")
    readme = " ".join((Path(__file__).parents[2] / "docs" / "commands.md").read_text().split())
    claim = (f"TP 8 first ({format_time(best.time_s)} a token expected), {second.name} "
             f"{second.time_s / best.time_s:.2f}× slower, DP 8 does not fit")
    assert claim in readme  # docs/commands.md's figures are these


def test_splits_that_cannot_run_keep_their_reason(models, catalog):
    found = layouts(models["llama-3-70b"], catalog["h100-sxm"], 16, WorkloadParams(phase="decode", batch=3))
    refused = [c for c in found if c.error]
    assert refused and all("more than one H100 SXM node of 8" in c.error for c in refused)  # TP 16
    assert {dict(c.choice)["tp"] for c in refused} == {16}
    uneven = next(c for c in found if c.name == "TP 8 × DP 2")  # 3 sequences over 2 replicas: 2 and 1
    assert uneven.params.local_batch == 2 and not uneven.error
    assert ranked(found, "throughput")[-1].error
    with pytest.raises(ValueError, match="goal must be one of latency, throughput, fit"):
        ranked(found, "speed")


def test_training_layouts_try_sequence_parallel_zero_and_recomputation(models, catalog):
    found = layouts(models["llama-3-8b"], catalog["h100-sxm"], 4,
                    WorkloadParams(phase="train", batch=8, seq=2048))
    tp4 = [c for c in found if dict(c.choice)["tp"] == 4]
    assert {(dict(c.choice)["sp"], dict(c.choice)["recompute"]) for c in tp4} == {
        (False, "none"), (True, "none"), (False, "full"), (True, "full")}
    best = ranked(found, "fit")[0]
    assert best.memory_bytes == min(c.memory_bytes for c in found if not c.error)


def test_layouts_cli_lists_every_candidate_as_json(models):
    code, out, err = run("layouts", "--model", "llama-3-70b", "--hardware", "h100-sxm", "--devices", "8",
                         "--phase", "decode", "--batch", "8", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["goal"] == "latency" and len(doc["candidates"]) == 10
    first = doc["candidates"][0]
    assert {"tp", "pp", "dp", "ep", "fits", "time_s", "tokens_per_s_per_device"} <= set(first)
    assert (first["tp"], first["pp"], first["dp"], first["ep"]) == (8, 1, 1, 1)
    code, out, _ = run("layouts", "--model", "llama-3-70b", "--hardware", "h100-sxm", "--devices", "8",
                       "--phase", "decode", "--batch", "8", "--top", "3")
    assert code == 0 and "10 layouts ranked by latency" in out and "… 7 more" in out


def test_a_search_reports_its_progress_and_stops_when_asked(models, catalog):
    seen = []

    def progress(done, total):
        seen.append((done, total))
        return done < 3  # the user stops it after three

    found = layouts(models["llama-3-70b"], catalog["h100-sxm"], 8, WorkloadParams(batch=8), progress)
    assert len(found) == 3 and seen == [(1, 10), (2, 10), (3, 10)]


def test_training_layouts_choose_the_micro_batch_and_rank_data_parallel_first_for_llama_3_8b(models, catalog):
    m, h100 = models["llama-3-8b"], catalog["h100-sxm"]
    step = WorkloadParams(phase="train", batch=64, seq=4096)
    order = ranked(layouts(m, h100, 8, step), "latency")
    best = order[0]
    # DP 8 with ZeRO-1 and one-sequence micro-batches (8 accumulation steps) fits and is fastest:
    # no pipeline bubble, the gradients synchronised once a step
    assert dict(best.choice) == {"tp": 1, "pp": 1, "dp": 8, "ep": 1, "sp": False, "zero": 1,
                                 "recompute": "none", "micro_batch": 1, "cp": 1, "pp_trim": 0, "vpp": 1,
                                 "dispatch": "flat"}
    assert best.fits and best.params.accumulation_steps == 8 and best.name == "DP 8, ZeRO-1, micro-batch 1 ×8"
    # its whole local batch at once (8 sequences' activations) does not fit
    whole = analyze(m, replace(best.params, micro_batch=0), h100).totals
    assert not whole.fits_in_memory and best.memory_bytes < whole.memory_required_bytes
    # the pipelines keep one-sequence micro-batches: the smallest bubble
    assert all(dict(c.choice)["micro_batch"] == 1 for c in order if not c.error and c.params.pp > 1)
    # with ZeRO's 16-bit gradients DP 8 is first too, two-sequence micro-batches fitting (the
    # largest that does: the same work a step); one-sequence ones need the 58 GiB
    zero = ranked(layouts(m, h100, 8, replace(step, grad_dtype="16-bit")), "latency")[0]
    assert zero.name == "DP 8, ZeRO-1, micro-batch 2 ×4" and zero.fits
    one = analyze(m, replace(zero.params, micro_batch=1), h100).totals
    assert one.memory_required_bytes == pytest.approx(58 * 2**30, rel=0.01)


# --- context parallel, the uneven pipeline and two-hop dispatch ------------------------------

def test_the_search_tries_cp_for_long_sequences_trim_with_pp_and_two_hop_across_nodes(models, catalog):
    m, h100 = models["llama-3.1-405b"], catalog["h100-sxm"]
    short, long = (WorkloadParams(phase="train", batch=b, seq=s) for b, s in ((2048, 8192), (128, 131072)))
    assert context_degrees(m, short, 128) == [1]  # 8,192 tokens: no CP (Llama 3's 8K stage)
    assert context_degrees(m, long, 128) == [1, 16]  # 131,072 / 16 = 8,192 tokens a device
    assert context_degrees(m, long, 8) == [1, 8]  # CP takes its devices from DP
    assert context_degrees(m, replace(long, phase="decode"), 128) == [1]
    assert context_degrees(models["deepseek-v3"], long, 128) == [1]  # latent attention: no CP
    assert schedules(m, short, 1) == [(0, 1)]
    assert schedules(m, short, 16) == [(0, 1), (1, 1), (1, 8)]  # 126 + 2 layers: 16 × 8 chunks of one
    assert schedules(m, replace(short, phase="prefill"), 16) == [(0, 1)]
    ds = models["deepseek-v3"]
    assert dispatches(ds, h100, 1, 32, "flat") == ["flat", "two-hop"]  # 32 GPUs: 4 nodes of 8
    assert dispatches(ds, h100, 1, 8, "flat") == ["flat"]  # within a node
    # the candidates: 84 splits, each CP (the 8K step: none) × schedule × SP × ZeRO × recompute
    assert len(splits(m, 16384)) == 84


def test_the_search_finds_meta_s_405b_layouts_at_16_384_gpus(models, catalog):
    # Llama 3 405B, Table 4 of arXiv 2407.21783: TP 8, PP 16, DP 128 at 8,192 tokens, and TP 8,
    # CP 16, PP 16 at 131,072 (16M tokens a step both), with Meta's 16-bit sharded gradients
    m, h100 = models["llama-3.1-405b"], catalog["h100-sxm"]
    for batch, seq, cp, dp in ((2048, 8192, 1, 128), (128, 131072, 16, 8)):
        step = WorkloadParams(phase="train", batch=batch, seq=seq, grad_dtype="16-bit")
        best = ranked(layouts(m, h100, 16384, step), "latency")[0]
        assert best.fits and dict(best.choice) == {
            "tp": 8, "pp": 16, "dp": dp, "ep": 1, "sp": True, "zero": 1, "recompute": "none",
            "micro_batch": 1, "cp": cp, "pp_trim": 1, "vpp": 8, "dispatch": "flat"}
        assert best.params.split.devices == 16384
    assert best.name == "TP 8 × CP 16 × PP 16 × DP 8, SP, ZeRO-1, trim 1, VPP 8, micro-batch 1 ×16"
