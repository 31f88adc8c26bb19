"""All-reduce algorithms by message size: NCCL's cost model (ring, tree, NVLS with their
protocols), the engines' one-shot and two-shot, and which one each setting picks."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from explorer.core.analysis.analysis import analyze
from explorer.core.model import collectives
from explorer.core.model.workload import WorkloadParams
from explorer.core.units import format_time

KIB, MIB = 1 << 10, 1 << 20


def nvlink(catalog, ident):
    return catalog[ident].link("node")


def test_a_small_decode_all_reduce_costs_ncclS_ring_ll_latency(catalog):
    link = nvlink(catalog, "h100-sxm")
    message = 16 * KIB  # one token of an 8,192-wide model, bf16
    choice = collectives.choose(link, 8, message, "nccl", training=False)
    assert choice.label == "ring/LL"
    # 6.6 µs base + 14 steps × 0.6 µs + 2·7/8 of the message at LL's capped 87.7 GB/s
    assert choice.seconds(link) == pytest.approx(6.6e-6 + 14 * 0.6e-6 + 1.75 * message / 87.7e9)


def test_the_engines_one_shot_is_two_barriers_and_the_others_buffers(catalog):
    link = nvlink(catalog, "h100-sxm")
    one = collectives.choose(link, 8, 16 * KIB, "auto", training=False)
    assert one.label == "oneshot"
    assert one.seconds(link) == pytest.approx(2 * 0.6e-6 + 7 * 16 * KIB / 450e9)
    assert collectives.choose(link, 8, MIB, "auto", training=False).label == "twoshot"  # ≥ 256 KiB on 8
    assert collectives.choose(link, 4, 300 * KIB, "auto", training=False).label == "oneshot"  # < 512 KiB on 4
    assert collectives.choose(link, 2, 8 * MIB, "auto", training=False).label == "oneshot"  # always on 2
    beyond = collectives.choose(link, 8, 32 * MIB, "auto", training=False)
    assert beyond.label == "nvls/Simple"  # past 8 MiB NCCL runs, and on an H100 board the switch adds
    assert collectives.choose(link, 8, 16 * KIB, "auto", training=True).label == "ring/LL"  # training: NCCL


def test_large_messages_use_nvls_where_the_switch_adds_and_a_simple_ring_elsewhere(catalog):
    message = 256 * MIB
    h100, a100 = nvlink(catalog, "h100-sxm"), nvlink(catalog, "a100-80gb-sxm")
    nvls = collectives.choose(h100, 8, message, "nccl", training=True)
    assert nvls.label == "nvls/Simple" and nvls.seconds(h100) == pytest.approx(23e-6 + 1.2 * message / 450e9)
    ring = collectives.choose(a100, 8, message, "nccl", training=True)
    assert ring.label == "ring/Simple"
    assert ring.seconds(a100) == pytest.approx(8.4e-6 + 14 * 3.4e-6 + 1.75 * message / 300e9)
    assert collectives.choose(a100, 8, message, "nvls", training=True) == ring  # no NVLS: NCCL's pick


def test_the_analysis_times_an_all_reduce_by_its_algorithm(models, catalog):
    m, h100 = models["llama-3-70b"], catalog["h100-sxm"]
    step = WorkloadParams(phase="decode", batch=1, tp=8)
    times = {}
    for asked in ("nccl", "oneshot", "ring"):
        a = analyze(m, replace(step, allreduce=asked), h100)
        i = next(i for i, o in enumerate(a.ops) if o.name == "attn_all_reduce")
        times[asked] = float(a.time_s[i])
    message = 8192 * 2
    assert times["oneshot"] == pytest.approx(2 * 0.6e-6 + 7 * message / 450e9)
    assert times["nccl"] == times["ring"] == pytest.approx(15e-6 + 1.75 * message / 87.7e9)
    readme = " ".join((Path(__file__).parents[2] / "docs" / "accounting.md").read_text().split())
    assert (f"takes {format_time(times['ring'])} on NCCL's LL ring and {format_time(times['oneshot'])} "
            "one-shot") in readme  # docs/accounting.md's figures are these
    auto = analyze(m, step, h100)
    assert auto.totals.time_s < analyze(m, replace(step, allreduce="nccl"), h100).totals.time_s


def test_the_tensor_parallel_scene_says_which_all_reduce_each_step_assumes(models, catalog):
    # step 3 runs NCCL for a one-token all-reduce over 8 H100s: its ring with LL, as it says
    link = nvlink(catalog, "h100-sxm")
    assert collectives.choose(link, 8, 8192 * 2, "nccl", training=False).label == "ring/LL"
    assert collectives.choose(link, 8, 8192 * 2, "auto", training=False).label == "oneshot"
