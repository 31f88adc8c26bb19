"""Explanations quote numbers computed by core for the same state."""

import re

import pytest

from explorer.core.analysis.analysis import analyze
from explorer.core.analysis.sweep import batch_sweep
from explorer.core.model.workload import WorkloadParams
from explorer.core.units import format_time
from explorer.core.words.explain import (
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


def test_batch_crossing_is_exact_not_a_power_of_two(models, catalog):
    # Llama 3 8B decode at context 128 on an A100 80 GB turns compute-bound at batch 213:
    # a sweep over powers of two said 256.
    params = WorkloadParams(context=128)
    a = analyze(models["llama-3-8b"], params, catalog["a100-80gb-sxm"])
    e = batch_crossing(a)
    assert e.numbers["crossing_batch"] == 213 and "From batch 213 on" in e.text
    sweep = batch_sweep(models["llama-3-8b"], params, catalog["a100-80gb-sxm"], [212, 213])
    assert list(sweep.memory_bound) == [True, False]
    full = batch_sweep(models["llama-3-8b"], params, catalog["a100-80gb-sxm"])
    assert e.numbers["max_batch"] == full.max_batch
    long_context = batch_crossing(analyze(models["llama-3-8b"], WorkloadParams(context=8192),
                                          catalog["h100-sxm"]))
    assert "stays memory-bound" in long_context.text and "crossing_batch" not in long_context.numbers


def test_throughput_plateau_is_named(models, catalog):
    # H100, context 256: the step stays memory-bound, yet throughput stops growing long
    # before the largest batch (the KV cache traffic grows as fast as the batch).
    a = analyze(models["llama-3-8b"], WorkloadParams(context=256, batch=512), catalog["h100-sxm"])
    e = batch_crossing(a)
    top, knee = e.numbers["max_batch"], e.numbers["levels_off_batch"]
    assert knee < top / 4
    assert f"batch {knee:,} already reaches 95% of the throughput at batch {top:,}" in e.text
    rate = [analyze(a.model, WorkloadParams(context=256, batch=b), a.hardware).totals.tokens_per_s
            for b in (knee - 1, knee, top)]
    assert rate[0] < 0.95 * rate[2] <= rate[1]
    assert f"{rate[2]:,.0f} tokens/s at batch {top:,}" in e.text  # units in the prose


def test_lower_precision_and_fused_attention(models, catalog):
    model, h100 = models["llama-3-8b"], catalog["h100-sxm"]
    a = analyze(model, WorkloadParams(), h100)
    e = lower_precision(a)
    fp8 = analyze(model, WorkloadParams(dtype="fp8"), h100)
    assert e.numbers["speedup"] == pytest.approx(a.totals.time_s / fp8.totals.time_s)
    assert e.numbers["speedup"] == pytest.approx(2.0, rel=0.05)  # memory-bound: half the bytes
    assert "Its matrix roof rises 2.0× (bf16 matrix to fp8 matrix)" in e.text
    assert "all of it from moving fewer bytes (the step stays memory-bound)" in e.text
    naive = analyze(model, WorkloadParams(phase="prefill", seq=8192, attention="naive"), h100)
    fused = analyze(model, WorkloadParams(phase="prefill", seq=8192), h100)
    f = fused_attention(naive)
    assert f.numbers["bytes_saved"] == naive.totals.bytes - fused.totals.bytes > 0
    assert fused_attention(fused) is None


def test_lower_precision_says_when_it_is_not_supported(models, catalog):
    model = models["llama-3-8b"]
    # The Xeon has no fp8: converted to bf16, it runs on AMX, and the step halves (bytes).
    xeon = lower_precision(analyze(model, WorkloadParams(), catalog["xeon-platinum-8480"]))
    assert "has no fp8 arithmetic" in xeon.text and "bf16 matrix units" in xeon.text
    assert "2.0× faster" in xeon.text and "matrix roof rises" not in xeon.text
    for ident, dtype in (("a100-80gb-sxm", "bf16"), ("t4", "fp16")):
        e = lower_precision(analyze(model, WorkloadParams(dtype=dtype, context=128), catalog[ident]))
        assert "has no fp8 arithmetic" in e.text and "run faster" not in e.text


def test_memory_fit(models, catalog):
    a = analyze(models["llama-3-70b"], WorkloadParams(), catalog["h100-sxm"])
    e = memory_fit(a)
    assert "does not fit" in e.text and e.numbers["required_bytes"] == a.totals.memory_required_bytes
    assert "the 71.7 GiB a serving engine may use (90% of 79.6 GiB usable of 80 GiB nominal)" in e.text
    t4 = memory_fit(analyze(models["llama-3-8b"], WorkloadParams(), catalog["t4"]))
    assert "15 GiB usable of 16 GiB nominal" in t4.text  # ECC takes 1/16 of a T4's GDDR6
    tiny = memory_fit(analyze(models["gpt2"], WorkloadParams(context=16), catalog["mi300x"]))
    assert "0.0%" not in tiny.text and "under 0.1% of the budget" in tiny.text


def test_cpu_versus_gpu_factors_multiply_to_the_ratio(models, catalog):
    model, params = models["llama-3-8b"], WorkloadParams()
    e = compare_devices(model, params, catalog["xeon-platinum-8480"], catalog["h100-sxm"])
    n = e.numbers
    assert n["ratio"] == pytest.approx(n["time_slow_s"] / n["time_fast_s"])
    assert n["from_bandwidth"] * n["from_compute"] == pytest.approx(n["ratio"])
    # Decode is memory-bound on both: the bandwidth ratio (3.35 TB/s / 307 GB/s) explains it.
    assert n["bandwidth_ratio"] == pytest.approx(3.35e12 / 307.2e9)
    assert n["from_bandwidth"] == pytest.approx(n["bandwidth_ratio"], rel=0.05)
    # Each device is named once; then "the CPU" and "the GPU".
    assert e.text.count("Intel Xeon Platinum 8480+") == 1 and e.text.count("NVIDIA H100") == 1


def test_explain_workload_lists_what_applies(models, catalog):
    titles = [e.title for e in explain_workload(analyze(models["resnet-50"], WorkloadParams(batch=32),
                                                        catalog["a100-80gb-sxm"]))]
    assert titles[0] == "What limits the step" and "Batching" not in titles and titles[-1] == "Memory"


def test_why_topics_fill_their_numbers_from_the_catalogue(catalog):
    from explorer.core.words.why import load_topics, render

    topics = {t.id: t for t in load_topics(catalog)}
    assert set(topics) == {"simple-cores", "latency-hiding", "hbm", "tensor-cores", "mixed-precision",
                           "batching", "kv-cache", "energy", "quadratic-attention", "parallelism",
                           "scaling-laws"}
    # NVLink 4 per direction over one InfiniBand NDR port: 450 / 50
    links = render(topics["parallelism"], catalog)
    assert "450 GB/s per direction over NVLink" in links
    assert "50 GB/s over its InfiniBand port to other servers, 9.0× less" in links
    hbm = render(topics["hbm"], catalog)
    # 3.35 TB/s / 307.2 GB/s
    assert "3.35 TB/s" in hbm and "307 GB/s" in hbm and "11 times what a Xeon 8480+ reads" in hbm
    assert "{" not in "".join(render(t, catalog) for t in topics.values())


def test_why_paragraphs_compare_like_with_like(catalog):
    from explorer.core.words.why import explain_topic, load_topics

    topics = {t.id: explain_topic(t, catalog) for t in load_topics(catalog)}
    for e in topics.values():
        assert e.problems() == [], e.title
    cores = topics["simple-cores"].text
    # fp32 lanes, not SMs against cores: 132 × 128 against 56 × 2 × 16; the Xeon's bound is
    # 1,792 lanes × 2 FLOP × 3.8 GHz = 13.62 TFLOP/s, and 66.9 / 13.62 = 4.9.
    assert "16,896 against 1,792" in cores and "66.9 TFLOP/s against 13.6 TFLOP/s, 4.9×" in cores
    tensor = topics["tensor-cores"].text
    assert "495 TFLOP/s against 66.9 TFLOP/s" in tensor and "7.4×" in tensor and "15×" not in tensor
    assert "2.0× more" in tensor
    hbm = topics["hbm"].text
    assert "Data-centre GPUs" in hbm and "GDDR" in hbm and "11× faster on the H100" in hbm
    assert "lower bound" in topics["latency-hiding"].text
    assert "compulsory traffic" in topics["quadratic-attention"].text
    assert "only ever moves" not in topics["quadratic-attention"].text


def test_a_broken_placeholder_is_caught_at_load(tmp_path, catalog):
    from explorer.core.files.datafile import DataFileError
    from explorer.core.words.why import load_topics

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
    # Exact: 326 for gate_proj at context 128 (B·d·f/989.4T ≥ (d·f + B·(d+f))/3.35T).
    short = analyze(models["llama-3-8b"], WorkloadParams(context=128), h100)
    assert op_crossing_batch(short, "gate_proj") == 326
    assert op_crossing_batch(analyze(models["llama-3-8b"], WorkloadParams(context=128),
                                     catalog["a100-80gb-sxm"]), "gate_proj") == 161
    # Attention reads each sequence's own cache: no batch makes it compute-bound.
    assert "No batch that fits" in explain_op(a, "attn_score").text
    # The op's ridge is the one the chart draws for its roof, in plain digits.
    assert "ridge is at 295 FLOP/byte" in e.text and "e+" not in e.text
    prefill = analyze(models["llama-3-8b"], WorkloadParams(phase="prefill", seq=2048), h100)
    assert "compute-bound" in explain_op(prefill, "down_proj").text
    assert explain_op(a, "no-such-op") is None


def explained(models, catalog, devices, model="llama-3-8b", **params):
    from explorer.core.words.explain import explain_state

    out = {e.title: e for e in explain_state(models[model], WorkloadParams(**params),
                                             [catalog[d] for d in devices])}
    for e in out.values():
        assert e.problems() == [], (e.title, e.text)
    return out


def test_cpu_and_gpu_comparison_says_when_the_model_does_not_fit(models, catalog):
    # Llama 3 70B needs 132 GiB: the H100's 71.7 GiB budget cannot hold it.
    e = explained(models, catalog, ["xeon-platinum-8480", "h100-sxm"], "llama-3-70b")["CPU and GPU"]
    assert e.text.startswith("If it fit, the NVIDIA H100 SXM5 80 GB would run this step 11× faster")
    assert "It does not fit on the GPU: 132 GiB against a 71.7 GiB budget." in e.text
    assert not re.search(r"\bagain\b", e.text)


def test_batching_when_only_one_or_no_sequence_fits(models, catalog):
    one = explained(models, catalog, ["t4"], "llama-2-7b")["Batching"]
    assert one.text.startswith("Only one sequence fits at a context of 1,024 (")
    # The weights (12.6 GiB) fit in 13.5 GiB; one sequence's cache at 32,768 tokens does not.
    none = explained(models, catalog, ["t4"], "llama-2-7b", context=32768)["Batching"]
    assert none.text.startswith("Not even one sequence fits: the weights (12.6 GiB) leave")
    assert "The weights alone" not in none.text
    weights = explained(models, catalog, ["t4"], "llama-3-70b")["Batching"]
    assert weights.text.startswith("The weights alone (131 GiB) do not fit")


def test_the_step_leads_with_its_time_and_names_an_unsupported_precision(models, catalog):
    e = explained(models, catalog, ["a100-80gb-sxm"], "llama-2-7b", dtype="fp8")["What limits the step"]
    a = analyze(models["llama-2-7b"], WorkloadParams(dtype="fp8"), catalog["a100-80gb-sxm"])
    assert f"this step takes {format_time(a.totals.time_s)} and is memory-bound" in e.text
    assert "The NVIDIA A100 80 GB SXM4 has no fp8 arithmetic: values are converted to fp16" in e.text
    tie = explained(models, catalog, ["h100-sxm"], phase="prefill", seq=2048, attention="naive")
    assert "takes more than either sum" in tie["What limits the step"].text
    unfit = explained(models, catalog, ["h100-sxm"], batch=4096)
    assert "These times assume it fit: it does not fit" in unfit["What limits the step"].text
    assert "If it fit, the step would take" in unfit["Lower precision"].text


def test_lower_precision_credits_the_units_and_the_precision_apart(models, catalog):
    # fp32 → bf16 on an H100: 15× the roof, of which 7.4× from the tensor cores (TF32) and 2.0×.
    e = explained(models, catalog, ["h100-sxm"], dtype="fp32")["Lower precision"]
    assert "from the fp32 vector units to the bf16 matrix units, a roof 15× higher: 7.4× from the " \
           "matrix units themselves (TF32 on them shows it) and 2.0× from the lower precision" in e.text
    assert "matrix roof rises 15×" not in e.text
    # fp16 → fp8 on a Xeon: the fp8 gain is really AMX bf16's, and it says so.
    x = explained(models, catalog, ["xeon-platinum-8480"], phase="prefill", seq=2048,
                  dtype="fp16")["Lower precision"]
    assert "has no fp8 arithmetic" in x.text and "(bf16 itself would get that too)" in x.text
    assert x.text.count(", and") <= 1
    w = explained(models, catalog, ["h100-sxm"], weight_dtype="int8")["Lower precision"]
    assert w.text.startswith("In fp8 the activations and the KV cache take (the weights stay int8)")


def test_a_compute_bound_op_names_what_would_help(models, catalog):
    h100 = catalog["h100-sxm"]
    a = analyze(models["llama-3-8b"], WorkloadParams(phase="prefill", seq=2048), h100)
    assert "a lower precision, or matrix units with a higher peak" in explain_op(a, "down_proj").text
    assert "matrix units, a lower precision" not in explain_op(a, "down_proj").text


def test_a_context_beyond_training_is_noted(models, catalog):
    e = explained(models, catalog, ["t4"], "gpt2", context=4096)
    assert "exceed GPT-2 (124M)'s trained context of 1,024" in e["Note"].text
