"""PyTorch profiler traces of runs on the CPU: ops as kernels, each with its own time and the
work of the deepest op that does it; a real trace of GPT-2 decoding checked against the
FLOPs worked out by hand and against the app's own count of the same step."""

import json
from pathlib import Path

import pytest

from explorer.core.analysis.analysis import analyze
from explorer.core.analysis.expected import OpClass
from explorer.core.analysis.profile_match import compare
from explorer.core.files.datafile import DataFileError
from explorer.core.model.workload import WorkloadParams
from explorer.profiles.reading import read_profile

GPT2_TRACE = Path(__file__).parents[1] / "data" / "pytorch-cpu" / "gpt2-decode.pt.trace.json.gz"
STEPS, LAYERS, D, VOCAB, CONTEXT = 4, 12, 768, 50257, 512


def op(name, ts, dur, dims=None, types=None, tid=1):
    args = {} if dims is None else {"Input Dims": dims, "Input type": types}
    return {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur,
            "args": args}


def linear_trace() -> dict:
    """aten::linear (100 µs) around aten::t (5 µs) and aten::addmm (80 µs), which copies its
    bias (10 µs) and resolves a conjugate (2 µs); then a norm on its own (20 µs)."""
    f = "float"
    return {"traceEvents": [
        op("aten::linear", 0, 100, [[4, 64], [128, 64], [128]], [f, f, f]),
        op("aten::t", 2, 5, [[128, 64]], [f]),
        op("aten::addmm", 10, 80, [[128], [4, 64], [64, 128], [], []], [f, f, f, "Scalar", "Scalar"]),
        op("aten::copy_", 12, 10, [[4, 128], [4, 128], []], [f, f, "Scalar"]),
        op("aten::resolve_conj", 30, 2, [[64, 128]], [f]),
        op("aten::layer_norm", 120, 20, [[4, 128], [], [128], [128]], [f, "ScalarList", f, f]),
    ]}


def write(tmp_path, doc) -> Path:
    path = tmp_path / "cpu.pt.trace.json"
    path.write_text(json.dumps(doc))
    return path


def test_each_op_keeps_its_own_time_and_the_product_its_work(tmp_path):
    profile = read_profile(write(tmp_path, linear_trace()))
    assert profile.tool == "PyTorch profiler (Kineto trace, CPU ops)"
    by_name = {k.name: k for k in profile.kernels}
    # own time: linear 100 − 5 − 80; addmm 80 − 10 − 2
    assert by_name["aten::linear"].time_s == pytest.approx(15e-6)
    assert by_name["aten::addmm"].time_s == pytest.approx(68e-6)
    assert profile.time_s == pytest.approx(120e-6)  # the outer ops' 100 + 20 µs, nothing twice
    # the addmm does the work: 2·4·64·128 FLOPs, reads bias, input, weight, writes the result
    addmm = by_name["aten::addmm"]
    assert addmm.flops == {"fp32": 2 * 4 * 64 * 128}
    assert addmm.bytes == {"dram": 4 * (128 + 4 * 64 + 64 * 128 + 4 * 128)}
    for inner in ("aten::linear", "aten::copy_", "aten::t", "aten::resolve_conj"):  # counted in the addmm
        assert by_name[inner].flops == {} and by_name[inner].bytes == {}
    assert by_name["aten::layer_norm"].bytes == {"dram": 4 * (4 * 128 + 128 + 128 + 4 * 128)}
    assert profile.estimated == "FLOPs and bytes from shapes"
    assert "no op: Python" in profile.notes[-1] and "14%" in profile.notes[-1]  # 20 of 140 µs


def test_a_tensor_list_takes_the_commonest_type_and_a_lookup_reads_its_rows(tmp_path):
    f = "float"
    doc = {"traceEvents": [
        op("aten::cat", 0, 10, [[[1, 12, 511, 64], [1, 12, 1, 64]], []], ["TensorList", "Scalar"]),
        op("aten::embedding", 20, 5, [[50257, 768], [1, 3]], [f, "long int"]),
        op("aten::add", 30, 1, [[1, 768], [1, 768]], [f, f]),
    ]}
    cat, embedding, _ = read_profile(write(tmp_path, doc)).kernels
    cache = 12 * 511 * 64 * 4
    assert cat.bytes == {"dram": cache + 12 * 64 * 4 + cache}  # both inputs, a result as large as the largest
    assert embedding.bytes == {"dram": 2 * 3 * 768 * 4 + 3 * 8}  # three rows read and written, three indices


def test_a_gpu_run_without_its_kernels_is_not_read_as_a_cpu_run(tmp_path):
    doc = linear_trace()
    doc["deviceProperties"] = [{"id": 0, "name": "NVIDIA H100"}]
    with pytest.raises(DataFileError, match=r"although a GPU took part.*ProfilerActivity\.CUDA"):
        read_profile(write(tmp_path, doc))
    with pytest.raises(DataFileError, match="no CPU ops"):
        read_profile(write(tmp_path, {"traceEvents": [{"ph": "M", "name": "process_name"}]}))


@pytest.fixture(scope="module")
def gpt2():
    return read_profile(GPT2_TRACE)


def test_a_real_gpt2_trace_holds_the_products_and_attention_worked_out_by_hand(gpt2):
    kernels = {k.name: k for k in gpt2.folded(0.0)}
    assert len(gpt2.kernels) == 7020 and kernels["aten::addmm"].launches == STEPS * LAYERS * 4
    per_layer = 2 * (D * 3 * D + D * D + D * 4 * D + 4 * D * D)  # qkv, out, fc1, fc2: 2 per multiply-add
    assert kernels["aten::addmm"].flops == {"fp32": STEPS * LAYERS * per_layer}
    assert kernels["aten::mm"].flops == {"fp32": STEPS * 2 * D * VOCAB}  # the tied output head
    attention = kernels["aten::_scaled_dot_product_flash_attention_for_cpu"]
    assert attention.flops == {"fp32": STEPS * LAYERS * 12 * CONTEXT * 2 * (64 + 64)}  # scores and values
    assert kernels["aten::cat"].launches == STEPS * LAYERS * 2  # the cache grows by concatenation


def test_the_app_counts_the_same_work_as_the_real_gpt2_step(gpt2, models, catalog):
    a = analyze(models["gpt2"], WorkloadParams(phase="decode", batch=1, context=CONTEXT, dtype="fp32"),
                catalog["epyc-9654"])
    flops = {o.role.value: o.flops * o.count for o in a.ops}
    biases = LAYERS * (3 * D + D + 4 * D + D)  # the app counts a bias add as one FLOP per output
    products = sum(flops[r] for r in ("qkv_proj", "o_proj", "fc1", "fc2", "lm_head")) - biases
    measured = {k.name: k.total_flops for k in gpt2.folded(0.0)}
    assert products == (measured["aten::addmm"] + measured["aten::mm"]) / STEPS
    softmax = LAYERS * 12 * CONTEXT * 5  # the app counts softmax in the score op; shapes cannot
    assert flops["attn_score"] + flops["attn_value"] - softmax == (
        measured["aten::_scaled_dot_product_flash_attention_for_cpu"] / STEPS)
    # bytes: the products read their weights once a step, as the app counts them (within 1 %)
    moved = sum(k.bytes.get("dram", 0) for k in gpt2.folded(0.0) if k.name in ("aten::addmm", "aten::mm"))
    weights = sum(o.weight_bytes * o.count for o in a.ops if o.role.value in
                  ("qkv_proj", "o_proj", "fc1", "fc2", "lm_head"))
    assert moved / STEPS == pytest.approx(weights, rel=0.01)


def test_the_real_trace_compares_by_class_with_views_left_unmatched(gpt2, models, catalog):
    a = analyze(models["gpt2"], WorkloadParams(phase="decode", batch=1, context=CONTEXT, dtype="fp32"),
                catalog["epyc-9654"])
    comparison = compare(gpt2, a, None, steps=STEPS)
    rows = {r.op_class: r for r in comparison.rows}
    kernels = {k.name: k.time_s for k in gpt2.folded(0.0)}
    products = sum(kernels[n] for n in ("aten::addmm", "aten::mm", "aten::linear", "aten::matmul"))
    assert rows[OpClass.GEMM].measured_s == pytest.approx(products / STEPS)
    assert "aten::cat" in rows[OpClass.MEMORY].kernels
    assert "aten::_scaled_dot_product_flash_attention_for_cpu" in rows[OpClass.ATTENTION].kernels
    assert "aten::view" in {k.name for k in comparison.unmatched}


def test_the_real_trace_s_products_are_matched_to_their_ops_by_shape(gpt2, models, catalog):
    a = analyze(models["gpt2"], WorkloadParams(phase="decode", batch=1, context=CONTEXT, dtype="fp32"),
                catalog["epyc-9654"])
    rows = {r.ops: r for r in compare(gpt2, a, None, steps=STEPS).products}
    assert {roles: r.shape for roles, r in rows.items()} == {
        ("qkv_proj",): (D, 3 * D), ("o_proj",): (D, D), ("fc1",): (D, 4 * D), ("fc2",): (4 * D, D),
        ("lm_head",): (D, VOCAB)}
    fc2 = [k for k in gpt2.kernels if k.shape == (4 * D, D)]
    assert len(fc2) == STEPS * LAYERS and {k.name for k in fc2} == {"aten::addmm"}
    assert rows[("fc2",)].measured_s == pytest.approx(sum(k.time_s for k in fc2) / STEPS)
    fc2_op = next(i for i, o in enumerate(a.ops) if o.role.value == "fc2")
    assert rows[("fc2",)].bound_s == pytest.approx(float(a.time_s[fc2_op]) * LAYERS)
    # the same products, summed by shape, are the products' class row (the mm's linear and
    # matmul around it add only their own time to the class)
    by_class = next(r for r in compare(gpt2, a, None, steps=STEPS).rows if r.op_class == OpClass.GEMM)
    assert sum(r.measured_s for r in rows.values()) <= by_class.measured_s


def test_ops_that_share_a_shape_share_a_row_and_another_model_matches_none(gpt2, models, catalog):
    from explorer.core.model.profile import Profile, ProfiledKernel

    a = analyze(models["llama-3-8b"], WorkloadParams(batch=1), catalog["h100-sxm"])
    square = ProfiledKernel("sm90_xmma_gemm_bf16", 1e-3, shape=(4096, 4096))
    rows = compare(Profile("test", "t.json", (square,)), a, None).products
    assert [(r.ops, r.measured_s) for r in rows] == [(("q_proj", "o_proj"), 1e-3)]
    assert compare(gpt2, a, None, steps=STEPS).products == ()  # GPT-2's shapes are not Llama's
    train = analyze(models["llama-3-8b"], WorkloadParams(phase="train", batch=1, seq=512),
                    catalog["h100-sxm"])
    assert compare(Profile("test", "t.json", (square,)), train, None).products == ()


def test_a_saved_profile_keeps_each_product_s_shape(gpt2):
    from explorer.core.files.datafile import Fields
    from explorer.core.model.profile import profile_to_dict, read_saved_profile

    saved = profile_to_dict(gpt2)
    addmms = sorted(tuple(k["shape"]) for k in saved["kernels"] if k["name"] == "aten::addmm")
    assert addmms == [(D, D), (D, 3 * D), (D, 4 * D), (4 * D, D)]
    back = read_saved_profile(Fields(saved, "session.yaml", "profile"))
    assert sorted(k.shape for k in back.kernels if k.name == "aten::addmm") == addmms
    with pytest.raises(DataFileError, match=r"expected a product's \[K, N\]"):
        read_saved_profile(Fields({**saved, "kernels": [{**saved["kernels"][0], "shape": [0, 5]}]},
                                  "session.yaml", "profile"))


def test_analyze_prints_and_writes_each_product_s_row(gpt2):
    import io

    from explorer.commands import main as cli

    argv = ["analyze", "--hardware", "epyc-9654", "--model", "gpt2", "--context", str(CONTEXT), "--dtype",
            "fp32", "--profile", str(GPT2_TRACE), "--profile-steps", str(STEPS)]
    out, err = io.StringIO(), io.StringIO()
    assert cli.run(cli.parse_args([*argv, "--json"]), out, err) == 0, err.getvalue()
    rows = json.loads(out.getvalue())["profile"]["products_by_shape"]
    assert [(r["ops"], r["k"], r["n"]) for r in rows] == [
        (["qkv_proj"], D, 3 * D), (["o_proj"], D, D), (["fc1"], D, 4 * D), (["fc2"], 4 * D, D),
        (["lm_head"], D, VOCAB)]
    head = next(k for k in gpt2.kernels if k.shape == (D, VOCAB))
    assert rows[-1]["measured_s"] == pytest.approx(sum(
        k.time_s for k in gpt2.kernels if k.shape == (D, VOCAB)) / STEPS) and head.name == "aten::mm"
    out = io.StringIO()
    assert cli.run(cli.parse_args(argv), out, err) == 0
    assert "matrix products matched to the predicted ops by their recorded shapes" in out.getvalue()
    assert "lm_head   768 × 50,257" in out.getvalue()
    out = io.StringIO()
    assert cli.run(cli.parse_args([*argv[:4], "llama-3-8b", *argv[5:]]), out, err) == 0
    assert "no product in the profile has the shape of one of this workload's products" in out.getvalue()


def test_ops_that_share_a_role_keep_rows_of_their_own(models, catalog):
    """DeepSeek-V3's latent attention has three products of role q_proj (q_down, q_up and the
    absorbed k_up): each is matched by its own shape and named, not by the role."""
    from explorer.core.model.profile import Profile, ProfiledKernel

    a = analyze(models["deepseek-v3"], WorkloadParams(batch=1, tp=8), catalog["b200"])
    q_down = next(o for o in a.ops if o.name == "q_down")
    assert q_down.role.value == "q_proj"
    kernel = ProfiledKernel("gemm", 1e-3, shape=(7168, 1536))  # d_model → q_lora_rank
    rows = compare(Profile("t", "t.json", (kernel,)), a, None).products
    assert [(r.ops, r.shape) for r in rows] == [(("q_down",), (7168, 1536))]


def test_the_chart_places_each_product_shape_in_its_op_s_colour(gpt2, models, catalog):
    from explorer.chart import palette
    from explorer.chart.elements import Page
    from explorer.chart.model import build_chart
    from explorer.core.model.session import Session
    from explorer.document import Document

    params = WorkloadParams(context=CONTEXT, dtype="fp32")
    session = Session(model="gpt2", hardware=("epyc-9654",), params=params, profile=gpt2)
    chart = build_chart(Document(catalog, models, session), Page.screen(1366, 768))
    squares = {m.name: m for m in chart.markers if m.kind == "profile" and m.symbol == "square"}
    groups = dict(palette.THEMES["light"].groups)
    assert squares["aten::addmm 768×3072"].fill == groups["mlp"]  # fc1
    assert squares["aten::addmm 768×2304"].fill == groups["projection"]  # qkv_proj
    assert squares["aten::mm 768×50257"].fill == groups["embedding / head"]  # lm_head
    assert "matched by its shape 3,072 × 768 to fc2" in squares["aten::addmm 3072×768"].tooltip
    fc1 = [k for k in gpt2.kernels if k.shape == (D, 4 * D)]
    seconds, flops = sum(k.time_s for k in fc1), sum(k.total_flops for k in fc1)
    assert squares["aten::addmm 768×3072"].center[1] == pytest.approx(chart.y_px(flops / seconds))
