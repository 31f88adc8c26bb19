"""Explanations quote numbers computed by core for the same state."""

import pytest

from explorer.core.analysis import analyze, batch_sweep
from explorer.core.explain import (
    batch_crossing,
    binding_roof,
    compare_devices,
    explain_op,
    explain_workload,
    fused_attention,
    lower_precision,
    memory_fit,
    op_crossing_batch,
)
from explorer.core.units import format_time
from explorer.core.workload import WorkloadParams


def test_binding_roof_quotes_the_analysis(models, catalog):
    a = analyze(models["llama-3-8b"], WorkloadParams(), catalog["h100-sxm"])
    e = binding_roof(a)
    t = a.totals
    assert e.numbers["memory_time_s"] == t.memory_time_s
    assert e.numbers["utilisation"] == pytest.approx(t.flops / t.time_s / 989.4e12)
    assert "memory-bound" in e.text and format_time(t.memory_time_s) in e.text
    assert f"{e.numbers['utilisation']:.1%}" in e.text


def test_compute_bound_prefill(models, catalog):
    a = analyze(models["llama-2-7b"], WorkloadParams(phase="prefill", seq=4096), catalog["h100-sxm"])
    assert "compute-bound" in binding_roof(a).text


def test_batch_crossing_matches_the_sweep(models, catalog):
    params = WorkloadParams(context=128)
    a = analyze(models["llama-3-8b"], params, catalog["h200-sxm"])
    e = batch_crossing(a)
    sweep = batch_sweep(models["llama-3-8b"], params, catalog["h200-sxm"])
    first_compute = next(int(b) for b, m in zip(sweep.batch, sweep.memory_bound, strict=True) if not m)
    assert e.numbers["crossing_batch"] == first_compute
    assert e.numbers["max_batch"] == sweep.max_batch
    assert f"From batch {first_compute:,} on" in e.text
    long_context = batch_crossing(analyze(models["llama-3-8b"], WorkloadParams(context=8192),
                                          catalog["h100-sxm"]))
    assert "stays memory-bound" in long_context.text and "crossing_batch" not in long_context.numbers


def test_lower_precision_and_fused_attention(models, catalog):
    model, h100 = models["llama-3-8b"], catalog["h100-sxm"]
    a = analyze(model, WorkloadParams(), h100)
    e = lower_precision(a)
    fp8 = analyze(model, WorkloadParams(dtype="fp8"), h100)
    assert e.numbers["speedup"] == pytest.approx(a.totals.time_s / fp8.totals.time_s)
    assert e.numbers["speedup"] == pytest.approx(2.0, rel=0.05)  # memory-bound: half the bytes
    naive = analyze(model, WorkloadParams(phase="prefill", seq=8192, attention="naive"), h100)
    fused = analyze(model, WorkloadParams(phase="prefill", seq=8192), h100)
    f = fused_attention(naive)
    assert f.numbers["bytes_saved"] == naive.totals.bytes - fused.totals.bytes > 0
    assert fused_attention(fused) is None


def test_memory_fit(models, catalog):
    a = analyze(models["llama-3-70b"], WorkloadParams(), catalog["h100-sxm"])
    e = memory_fit(a)
    assert "does NOT fit" in e.text and e.numbers["required_bytes"] == a.totals.memory_required_bytes


def test_cpu_versus_gpu_factors_multiply_to_the_ratio(models, catalog):
    model, params = models["llama-3-8b"], WorkloadParams()
    e = compare_devices(model, params, catalog["xeon-platinum-8480"], catalog["h100-sxm"])
    n = e.numbers
    assert n["ratio"] == pytest.approx(n["time_slow_s"] / n["time_fast_s"])
    assert n["from_bandwidth"] * n["from_compute"] == pytest.approx(n["ratio"])
    # Decode is memory-bound on both: the bandwidth ratio (3.35 TB/s / 307 GB/s) explains it.
    assert n["bandwidth_ratio"] == pytest.approx(3.35e12 / 307.2e9)
    assert n["from_bandwidth"] == pytest.approx(n["bandwidth_ratio"], rel=0.05)


def test_explain_workload_lists_what_applies(models, catalog):
    titles = [e.title for e in explain_workload(analyze(models["resnet-50"], WorkloadParams(batch=32),
                                                        catalog["a100-80gb-sxm"]))]
    assert titles[0] == "What limits the step" and "Batching" not in titles and titles[-1] == "Memory"


def test_why_topics_fill_their_numbers_from_the_catalogue(catalog):
    from explorer.core.why import load_topics, render

    topics = {t.id: t for t in load_topics(catalog)}
    assert set(topics) == {"simple-cores", "latency-hiding", "hbm", "tensor-cores", "mixed-precision",
                           "batching", "kv-cache", "quadratic-attention"}
    hbm = render(topics["hbm"], catalog)
    assert "3.35 TB/s" in hbm and "307 GB/s" in hbm and "11× less" in hbm  # 3.35 T / 307.2 G
    assert "{" not in "".join(render(t, catalog) for t in topics.values())


def test_a_broken_placeholder_is_caught_at_load(tmp_path, catalog):
    from explorer.core.datafile import DataFileError
    from explorer.core.why import load_topics

    path = tmp_path / "why.yaml"
    path.write_text("schema: 1\ntopics:\n- {id: x, title: X, text: 'peak {h100-sxm/peak-fp4}'}\n")
    with pytest.raises(DataFileError, match="no published fp4 peak") as info:
        load_topics(catalog, path)
    assert info.value.entry == "x" and info.value.field == "text"


def test_a_selected_op_is_explained_with_its_own_numbers(models, catalog):
    h100 = catalog["h100-sxm"]
    a = analyze(models["llama-3-8b"], WorkloadParams(batch=1, context=1024), h100)
    e = explain_op(a, "down_proj")
    i = next(i for i, o in enumerate(a.ops) if o.name == "down_proj")
    # By hand: 2 × 4096 × 14336 FLOPs over the bf16 weight matrix (2 bytes each) plus tiny activations.
    assert a.flops[i] == 2 * 4096 * 14336
    assert e.numbers["memory_time_s"] == pytest.approx(a.bytes[i] / 3.35e12)
    assert e.numbers["ridge"] == pytest.approx(989.4e12 / 3.35e12)
    assert "memory-bound" in e.text and format_time(e.numbers["memory_time_s"]) in e.text
    crossing = e.numbers["crossing_batch"]
    assert crossing == op_crossing_batch(a, "down_proj")
    at = analyze(models["llama-3-8b"], WorkloadParams(batch=crossing, context=1024), h100)
    before = analyze(models["llama-3-8b"], WorkloadParams(batch=crossing // 2, context=1024), h100)
    assert not at.memory_bound[i] and before.memory_bound[i]
    assert f"batch of {crossing:,}" in e.text
    # Attention reads each sequence's own cache: no batch makes it compute-bound.
    assert "No batch that fits" in explain_op(a, "attn_score").text
    prefill = analyze(models["llama-3-8b"], WorkloadParams(phase="prefill", seq=2048), h100)
    assert "compute-bound" in explain_op(prefill, "down_proj").text
    assert explain_op(a, "no-such-op") is None
