"""The expected time: its factors' file, the rules it adds ops up by (checked against the
bound with factors chosen so the answer is known by hand), and what it says when a device
has no published efficiency."""

from dataclasses import replace
from pathlib import Path

import pytest

from explorer.core.analysis.analysis import analyze
from explorer.core.analysis.expected import expected, expected_for, missing_efficiency, product_time
from explorer.core.analysis.report import analysis_dict
from explorer.core.analysis.report_words import step_summary
from explorer.core.files.datafile import DataFileError
from explorer.core.hardware.efficiency import (
    FACTORS,
    Efficiency,
    Factor,
    efficiency_for,
    published,
    read_efficiencies,
)
from explorer.core.model.applicability import Phase
from explorer.core.model.workload import WorkloadParams


def _efficiency(share=1.0, tile=1, kernel_us=0.0, step_ms=0.0) -> Efficiency:
    values = {f.name: share for f in FACTORS}
    values.update(gemm_tile=tile, gemm_depth=0, gemm_overlap=1.0, gemv_overlap=1.0, kernel_us=kernel_us,
                  step_ms=step_ms)
    return Efficiency("test", "test", ("h100-sxm",), None,
                      {name: Factor(v, "https://example.org", "a test value") for name, v in values.items()})


def _unlisted(catalog):
    """A device no published family lists (as a user's own device would be)."""
    return replace(catalog["b200"], id="my-gpu", name="My GPU")


def test_published_families_name_catalogue_devices_and_every_factor_has_a_source(catalog):
    families = published()
    assert {f.id for f in families} == {"a100", "h100", "h200", "mi300x", "v100", "t4", "l4", "rtx-4090",
                                        "b200", "apple-gpu", "x86-cpu", "arm-cpu",
                                        "raspberry-pi-5", "nvidia-grace", "graviton4", "tpu", "gaudi-2",
                                        "gaudi-3"}
    # Every catalogue device now has a family; a factor measured on another family says so.
    assert all(efficiency_for(catalog[ident], families) is not None for ident in catalog)
    for family in families:
        for factor in family.factors.values():
            if factor.note.startswith("borrowed from "):
                assert factor.note.split(":")[0].removeprefix("borrowed from ") in {f.id for f in families}
        assert set(family.devices) <= set(catalog), family.id
        for spec in FACTORS:
            if spec.absent and spec.name not in family.factors:  # (a kernel not published for it)
                continue
            factor = family.factors[spec.name]
            assert spec.check(factor.value) is None and factor.source.startswith("https://") and factor.note
    # FlashAttention 3's and cuDNN's attention shares are published for Hopper alone
    hopper = {f.id for f in families if f.attention_shares("fa3") and f.attention_shares("cudnn")}
    assert hopper == {"h100", "h200"}
    assert not any(f.attention_shares("fa3") or f.attention_shares("cudnn") for f in families
                   if f.id not in hopper)


def test_a_device_takes_its_family_and_a_device_without_one_none(catalog):
    assert efficiency_for(catalog["h100-sxm"], published()).id == "h100"
    assert efficiency_for(catalog["a100-40gb-sxm"], published()).id == "a100"
    assert efficiency_for(catalog["b200"], published()).id == "b200"
    assert efficiency_for(catalog["xeon-platinum-8480"], published()).id == "x86-cpu"
    # L4 has no kernel measurement of its own: its family borrows the A100's, and says so.
    l4 = efficiency_for(catalog["l4"], published())
    assert l4.id == "l4" and l4.value("bandwidth") == published()[0].value("bandwidth")
    assert l4.factors["bandwidth"].note == "borrowed from a100: no published measurement on L4 was found"
    # A device no family lists (a user's own) has none.
    assert efficiency_for(_unlisted(catalog), published()) is None


def test_rows_are_padded_to_whole_tiles_and_depth_spreads_a_tiles_fixed_work():
    e = _efficiency(share=0.8, tile=64)
    assert e.gemm_share(1) == pytest.approx(0.8)  # one row: a matrix-vector product, no tile
    assert e.gemm_share(2) == pytest.approx(0.8 * 2 / 64)
    assert e.gemm_share(64) == pytest.approx(0.8)
    assert e.gemm_share(65) == pytest.approx(0.8 * 65 / 128)
    assert e.gemm_share(float("inf")) == pytest.approx(0.8)
    deep = replace(e, factors={**e.factors, "gemm_depth": Factor(512.0, "-", "-")})
    assert deep.gemm_share(64, 512) == pytest.approx(0.4) and deep.gemm_share(64, 0) == pytest.approx(0.8)


def test_overlap_hides_the_shorter_of_memory_and_arithmetic():
    e = _efficiency(share=1.0)
    assert product_time(e, 2e12, 1e9, 1e6, 0, 1e15, 1e12) == pytest.approx(2e-3)  # the longer only
    none = replace(e, factors={**e.factors, "gemm_overlap": Factor(0.0, "-", "-")})
    assert product_time(none, 2e12, 1e9, 1e6, 0, 1e15, 1e12) == pytest.approx(3e-3)  # both


@pytest.mark.parametrize("kwargs", [dict(batch=1, context=2048), dict(batch=64, context=512),
                                    dict(phase="prefill", seq=256, attention="naive")])
def test_at_half_of_every_roof_and_no_overheads_a_step_takes_twice_its_bound(models, catalog, kwargs):
    a = analyze(models["llama-3-8b"], WorkloadParams(**kwargs), catalog["h100-sxm"])
    assert expected(a, _efficiency(share=0.5)).time_s == pytest.approx(2 * a.totals.time_s, rel=1e-9)


def test_vector_arithmetic_keeps_the_vector_peak(models, catalog):
    """No factor is published for vector units: a fused attention's softmax keeps its time,
    so a long causal prompt, where it counts, takes a little under twice its bound."""
    params = WorkloadParams(phase="prefill", seq=4096, causal=True)
    a = analyze(models["llama-3-8b"], params, catalog["h100-sxm"])
    i = [o.name for o in a.ops].index("attn_score")
    softmax_s = float(a.ops[i].vector_flops) / a.roofs.vector.flops_per_s * a.ops[i].count
    e = expected(a, _efficiency(share=0.5))
    assert e.time_s == pytest.approx(2 * a.totals.time_s - softmax_s, rel=1e-9)


@pytest.mark.parametrize(("recompute", "kernel_forwards"), [("none", 3.5), ("selective", 3.5), ("full", 4.5)])
def test_in_training_a_fused_kernel_s_backward_computes_the_scores_again(models, catalog, recompute,
                                                                         kernel_forwards):
    """FlashAttention's backward does 5 products of the forward's shape to the forward's 2
    (FlashAttention-2 paper, section 4.1: "we multiply the forward pass FLOPs by 2.5"), where
    the step counts 2: a fused attention op takes 3.5 forwards' time, not 3 (4.5, not 4,
    with full recomputation). A naive kernel keeps its scores: its time is as counted."""
    h100 = catalog["h100-sxm"]
    params = WorkloadParams(phase=Phase.TRAIN, seq=4096, batch=1, causal=True, recompute=recompute)
    a = analyze(models["llama-3-8b"], params, h100)
    i = [o.name for o in a.ops].index("attn_value")  # P·V: products only, no softmax
    forward = 2 * 32 * (4096 * 4097 // 2) * 128  # 2 · heads · causal pairs · head dim, one layer
    passes = 4 if recompute == "full" else 3
    assert float(a.flops[i]) == passes * forward  # the step's count: forward(s) and a backward of 2
    e = expected(a, _efficiency(share=0.5))
    assert e.op_time_s[i] == pytest.approx(kernel_forwards * forward / (989.4e12 * 0.5), rel=1e-9)
    naive = analyze(models["llama-3-8b"], replace(params, attention="naive"), h100)
    j = [o.name for o in naive.ops].index("attn_value")
    assert expected(naive, _efficiency(share=0.5)).op_time_s[j] == pytest.approx(2 * float(naive.time_s[j]))


def test_each_kernel_and_each_step_add_their_overhead(models, catalog):
    a = analyze(models["llama-2-7b"], WorkloadParams(batch=4), catalog["a100-80gb-sxm"])
    e = expected(a, _efficiency(kernel_us=3.0, step_ms=0.2))
    kernels = int(a.counts.sum())  # each op of each layer is one kernel
    assert kernels == 32 * 14 + 3  # 14 ops a layer; embedding, final norm, LM head
    assert e.time_s - a.totals.time_s == pytest.approx(kernels * 3e-6 + 0.2e-3, rel=1e-9)
    assert e.parts["kernel overheads"] == pytest.approx(kernels * 3e-6)


def test_a_few_row_product_is_padded_but_stays_memory_bound(models, catalog):
    """Decode at batch 1 on an H100: a 64-row tile does 64 times a row's work, still faster
    than reading the weights, so the products take their bytes at gemm_bandwidth."""
    a = analyze(models["llama-2-7b"], WorkloadParams(batch=1), catalog["h100-sxm"])
    h100 = efficiency_for(catalog["h100-sxm"], published())
    e = expected(a, replace(h100, factors={**h100.factors, "kernel_us": Factor(0.0, "-", "-"),
                                           "step_ms": Factor(0.0, "-", "-")}))
    i = [o.name for o in a.ops].index("q_proj")
    assert e.op_time_s[i] == pytest.approx(float(a.bytes[i]) / (3.35e12 * h100.value("gemm_bandwidth")))


def test_the_bound_never_exceeds_the_expected_time(models, catalog):
    for ident in ("a100-80gb-sxm", "h100-sxm", "h200-sxm", "mi300x"):
        for params in (WorkloadParams(batch=8, tp=2), WorkloadParams(phase="prefill", seq=4096, causal=True),
                       WorkloadParams(phase="train", seq=2048, batch=8, tp=2, pp=2, dp=2)):
            a = analyze(models["llama-3-70b"], params, catalog[ident])
            e = expected_for(a)
            assert e is not None and e.time_s >= a.totals.time_s, (ident, params)


def test_the_bound_alone_or_no_published_family_is_said(models, catalog):
    bound_only = analyze(models["gpt2"], WorkloadParams(efficiency="bound"), catalog["h100-sxm"])
    assert expected_for(bound_only) is None and missing_efficiency(bound_only) is None
    mine = analyze(models["gpt2"], WorkloadParams(), _unlisted(catalog))
    assert expected_for(mine) is None
    assert "no efficiency is published for My GPU" in missing_efficiency(mine)
    assert "expected" not in step_summary(mine) and "bound at datasheet peaks" in step_summary(mine)


def test_json_keeps_the_bound_and_adds_the_expected_time_with_its_sources(models, catalog):
    a = analyze(models["llama-3-8b"], WorkloadParams(), catalog["h100-sxm"])
    doc = analysis_dict(a)
    e = expected_for(a)
    assert doc["totals"]["time_s"] == a.totals.time_s
    assert doc["totals"]["expected_time_s"] == e.time_s
    assert doc["efficiency"]["family"] == "h100" and doc["efficiency"]["asked"] == "published"
    assert sum(doc["efficiency"]["parts_s"].values()) == pytest.approx(e.time_s)
    assert doc["efficiency"]["factors"]["bandwidth"]["source"].startswith("https://")
    assert f"expected {e.time_s * 1e3:.3g} ms" in step_summary(a)


def test_training_reports_the_utilisation_its_expected_time_implies(models, catalog):
    a = analyze(models["llama-3-8b"], WorkloadParams(phase="train", seq=2048, batch=8), catalog["h100-sxm"])
    doc = analysis_dict(a)
    mfu = doc["efficiency"]["expected_mfu"]
    optimizer = next(o.flops for o in a.ops if o.name == "optimizer")
    flops = a.totals.flops - optimizer  # forward and backward, no recomputation: the model's FLOPs
    assert a.model_flops == flops
    assert mfu == pytest.approx(flops / (doc["totals"]["expected_time_s"] * 989.4e12), rel=1e-6)
    assert 0.3 < mfu < 0.75  # published large runs: 0.35–0.55


@pytest.mark.parametrize("text, message", [
    ("schema: 1\nefficiencies:\n- {id: x, name: X, devices: [h100-sxm]}\n", "field 'gemm': is missing"),
    ("schema: 1\nefficiencies:\n- {id: x, name: X}\n", "name the devices"),
])
def test_a_broken_efficiency_file_is_named(tmp_path, text, message):
    path = tmp_path / "mine.yaml"
    path.write_text(text)
    with pytest.raises(DataFileError, match=message):
        read_efficiencies(path)


def test_a_share_above_one_is_refused(tmp_path):
    text = Path(published()[0].origin).read_text(encoding="utf-8").replace("value: 0.831", "value: 1.5", 1)
    path = tmp_path / "mine.yaml"
    path.write_text(text)
    with pytest.raises(DataFileError, match=r"field 'gemm.value': must be from 0.01 to 1"):
        read_efficiencies(path)


def test_scene_fields_state_the_expected_time_and_refuse_what_is_not_there(models, catalog):
    from explorer.core.words import expected_claims
    from explorer.core.words.claims import State

    state = State(models["llama-3-8b"], WorkloadParams(), catalog["h100-sxm"])
    e = expected_for(state.analysis())
    text, claim = expected_claims.step_field(state, "expected-share:kernels")
    assert text == f"{e.parts['kernel overheads'] / e.time_s:.0%}" and claim.check() is None
    assert expected_claims.step_field(state, "kernels")[0] == "451"
    assert expected_claims.step_field(state, "efficiency:kernel_us")[0] == "3 µs"
    with pytest.raises(KeyError, match="unknown class"):
        expected_claims.step_field(state, "expected-share:nothing")
    with pytest.raises(KeyError, match="no efficiency is published for My GPU"):
        unlisted = State(models["llama-3-8b"], WorkloadParams(), _unlisted(catalog))
        expected_claims.step_field(unlisted, "expected")


def test_a_number_too_large_for_a_float_is_refused_by_name(tmp_path):
    text = Path(published()[0].origin).read_text(encoding="utf-8")
    text = text.replace("value: 0.831", "value: " + "9" * 400, 1)
    path = tmp_path / "mine.yaml"
    path.write_text(text)
    with pytest.raises(DataFileError, match="is too large a number"):
        read_efficiencies(path)


def test_training_launches_a_kernel_per_pass_and_micro_batch(models, catalog):
    """Forward, backward (×3; ×4 recomputed) for compute ops, a stage's send twice, the
    optimizer and gradient all-reduces once a step; with a pipeline, per micro-batch."""
    from explorer.core.analysis.expected import launches

    def per_op(**kwargs):
        params = WorkloadParams(phase="train", seq=1024, **kwargs)
        a = analyze(models["llama-3-8b"], params, catalog["h100-sxm"])
        return {o.name: n for o, n in zip(a.ops, launches(a), strict=True)}

    plain = per_op(batch=8, dp=2)
    assert plain["q_proj"] == 3 and plain["optimizer"] == 1 and plain["grad_all_reduce"] == 1
    piped = per_op(batch=8, pp=2, tp=2, recompute="full")
    assert piped["q_proj"] == 4 * 8 and piped["stage_send"] == 2 * 8 and piped["attn_all_reduce"] == 3 * 8


def test_a_calibration_of_an_uncatalogued_machine_applies_to_no_device(catalog):
    machine = replace(published()[1], devices=(), kind=None, machine="Some CPU")
    assert efficiency_for(catalog["epyc-9654"], (machine,)) is None
    assert efficiency_for(catalog["h100-sxm"], (machine,)) is None


def test_eight_bit_products_take_their_own_share_and_a_file_without_one_takes_gemms(tmp_path, models,
                                                                                  catalog):
    h100 = efficiency_for(catalog["h100-sxm"], published())
    # the MAMF table's bf16 best (80.3 % at K 13312) and the Azure guide's fp8 16384³ (69.6 %)
    assert h100.gemm_share(float("inf"), 13312, "bf16") == pytest.approx(0.803, abs=0.002)
    assert h100.gemm_share(float("inf"), 16384, "fp8") == pytest.approx(0.696, abs=0.002)
    bf16 = analyze(models["llama-3-8b"], WorkloadParams(phase="prefill", seq=4096), catalog["h100-sxm"])
    fp8 = analyze(models["llama-3-8b"], WorkloadParams(phase="prefill", seq=4096, dtype="fp8"),
                  catalog["h100-sxm"])
    gemm = "matrix products"
    # fp8 doubles the peak but reaches a smaller share of it: 2 × 0.730 / 0.851 the rate
    ratio = expected(bf16, h100).parts[gemm] / expected(fp8, h100).parts[gemm]
    assert 1.5 < ratio < 2 * 0.730 / 0.851 * 1.02
    a100 = efficiency_for(catalog["a100-80gb-sxm"], published())  # no 8-bit measurement: gemm stands in
    assert a100.value("gemm_8bit") == a100.gemm and "gemm's value stands in" in a100.factors["gemm_8bit"].note
    text = Path(published()[0].origin).read_text(encoding="utf-8")
    head, rest = text.split("  gemm_8bit:\n", 1)  # the first family that has one loses it
    mine = tmp_path / "mine.yaml"
    mine.write_text(head + rest.split("\n", 3)[3])
    read = {f.id: f for f in read_efficiencies(mine)}
    assert read["h100"].value("gemm_8bit") == read["h100"].gemm == h100.gemm
    assert read["h200"].value("gemm_8bit") == 0.724  # the others keep theirs


def test_a_one_row_product_hides_its_arithmetic_where_gemv_overlap_says(catalog):
    """A matrix-vector product (one row) takes its overlap from ``gemv_overlap``, a product of
    more rows from ``gemm_overlap``: the CPU families publish 1 for the first (ik_llama.cpp PR
    142: a 7950X's token on 2 threads takes no longer than on 4) and 0 for the second (a
    packing BLAS); where a family gives none, gemm_overlap stands in."""
    from explorer.core.analysis.expected import product_time

    x86 = efficiency_for(catalog["ryzen-9-7950x"], published())
    assert x86 is not None and x86.value("gemv_overlap") == 1.0 and x86.value("gemm_overlap") == 0.0
    assert "pull/142" in x86.factors["gemv_overlap"].source
    flops, moved, peak, bandwidth = 1e9, 1e9, 1e12, 1e11  # arithmetic under its memory time
    one = product_time(x86, flops, moved, 1, 4096, peak, bandwidth, "bf16")
    two = product_time(x86, 2 * flops, moved, 2, 4096, peak, bandwidth, "bf16")
    memory = moved / (bandwidth * x86.value("gemm_bandwidth"))
    assert one == pytest.approx(memory)  # the arithmetic hidden
    assert two > memory  # added
    gpu = efficiency_for(catalog["h100-sxm"], published())
    assert gpu is not None and gpu.factors["gemv_overlap"].stand_in
    assert gpu.value("gemv_overlap") == gpu.value("gemm_overlap")


def test_a_cpu_pads_no_rows_so_a_second_decode_adds_only_its_arithmetic(catalog, models):
    """ggml's CPU product takes the activations' rows one (or, for MMLA kernels, two) at a
    time and pads none (ggml.c: 'dot kernels can handle 1 row and col at a time'): every CPU
    family's gemm_tile is 1. A batch of 2 decodes on a Ryzen 9 7950X then adds one token's
    arithmetic (1.03× a single decode's time in the kernel model, 1.08× fitted), where a
    64-row tile (the A100's, borrowed before) charged 32 tokens' and took 1.79×;
    ik_llama.cpp's batched-bench on a 16-core Xeon measured 2 sequences' step at 1.04× one's
    (discussion 164: T_TG 93.563 s against 90.247 s for 128 tokens)."""
    families = published()
    for ident in ("x86-cpu", "arm-cpu", "raspberry-pi-5", "nvidia-grace", "graviton4"):
        tile = next(f for f in families if f.id == ident).factors["gemm_tile"]
        assert tile.value == 1 and "dot kernels can handle 1 row and col at a time" in tile.note, ident
    cpu = catalog["ryzen-9-7950x"]
    family = efficiency_for(cpu, families)
    assert family is not None
    one, two, eight = (expected(analyze(models["llama-3-8b"], WorkloadParams(dtype="int8", batch=b), cpu),
                                family).time_s for b in (1, 2, 8))
    assert one < two < 1.1 * one and two < eight
    tiled = replace(family, factors={n: replace(f, value=64) if n == "gemm_tile" else f
                                     for n, f in family.factors.items()})
    a_one, a_two = (expected(analyze(models["llama-3-8b"], WorkloadParams(dtype="int8", batch=b), cpu),
                             tiled).time_s for b in (1, 2))
    fitted = [expected_for(analyze(models["llama-3-8b"], WorkloadParams(dtype="int8", batch=b), cpu))
              for b in (1, 2)]
    assert fitted[0] is not None and fitted[1] is not None
    doc = " ".join((Path(__file__).resolve().parents[2] / "docs" / "validation.md").read_text().split())
    assert (f"on a Ryzen a batch of 2 takes {two / one:.2f}× one decode's time in the kernel model and "
            f"{fitted[1].time_s / fitted[0].time_s:.2f}× with the fitted terms, where the A100's 64-row tile "
            f"had it take {a_two / a_one:.2f}× in the kernel model") in doc
    assert a_two / a_one > 1.5
