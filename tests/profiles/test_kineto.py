"""PyTorch profiler traces (Kineto chrome-trace JSON, plain or gzipped), written here with
values known by construction: kernels, the CPU ops that launched them and their FLOPs."""

import gzip
import json

import pytest

from explorer.core.files.datafile import DataFileError
from explorer.profiles import kineto
from explorer.profiles.reading import read_profile


def trace() -> dict:
    """aten::mm (External id 7, 2·8·4096·4096 FLOPs, bf16) launches a GEMM and a small
    kernel; a norm launches one kernel and records no FLOPs; a runtime call is not a kernel."""
    flops = 2 * 8 * 4096 * 4096
    return {"schemaVersion": 1, "traceEvents": [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": 40,
         "args": {"External id": 7, "Input Dims": [[8, 4096], [4096, 4096]],
                  "Input type": ["c10::BFloat16", "c10::BFloat16"], "flops": flops}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 1, "dur": 5,
         "args": {"External id": 7, "correlation": 101}},
        {"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16bf16_bf16f32", "ts": 10, "dur": 25.5,
         "args": {"External id": 7, "correlation": 101, "device": 0, "stream": 7}},
        {"ph": "X", "cat": "kernel", "name": "splitKreduce_kernel", "ts": 36, "dur": 2.0,
         "args": {"External id": 7, "correlation": 102}},
        {"ph": "X", "cat": "cpu_op", "name": "aten::rms_norm", "ts": 50, "dur": 10,
         "args": {"External id": 8, "Input type": ["c10::BFloat16"]}},
        {"ph": "X", "cat": "kernel", "name": "vectorized_elementwise_kernel", "ts": 55, "dur": 3.0,
         "args": {"External id": 8}},
    ]}


@pytest.mark.parametrize("packed", [False, True])
def test_kernels_take_their_op_s_flops_on_the_longest(tmp_path, packed):
    text = json.dumps(trace()).encode()
    path = tmp_path / ("trace.json.gz" if packed else "trace.json")
    path.write_bytes(gzip.compress(text) if packed else text)
    profile = read_profile(path)
    assert profile.tool.startswith("PyTorch profiler")
    gemm, reduce, norm = profile.kernels
    assert gemm.time_s == pytest.approx(25.5e-6) and gemm.flops == {"bf16": 2 * 8 * 4096 * 4096}
    assert reduce.flops == {} and norm.flops == {} and norm.time_s == pytest.approx(3e-6)
    # bytes from the mm's recorded shapes: [8, 4096] and [4096, 4096] read, [8, 4096] written, bf16
    assert gemm.bytes == {"dram": 2 * (8 * 4096 + 4096 * 4096 + 8 * 4096)}
    assert reduce.bytes == {} and norm.bytes == {}  # the norm recorded no shapes
    assert "profiler's own count" in profile.notes[0] and "an estimate, not a count" in profile.notes[1]
    assert profile.estimated == "bytes from shapes"  # its FLOPs were counted
    assert profile.device == ""  # the trace names no device


def _events(t: dict, change) -> dict:
    return {**t, "traceEvents": [e for e in map(change, t["traceEvents"]) if e is not None]}


@pytest.mark.parametrize("change, message", [
    (lambda t: {"events": []}, 'no "traceEvents" list'),
    (lambda t: _events(t, lambda e: None if e["cat"] == "kernel" else e), "holds no GPU kernels"),
    (lambda t: _events(t, lambda e: {**e, "dur": -1} if e["cat"] == "kernel" else e),
     "dur must be a number of at least 0"),
])
def test_a_broken_trace_is_refused_by_name(tmp_path, change, message):
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(change(trace())))
    with pytest.raises(DataFileError, match=message):
        kineto.read_kineto(path)


def test_a_gzip_that_expands_past_the_limit_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(kineto, "MAX_TRACE_BYTES", 10_000)
    path = tmp_path / "bomb.json.gz"
    path.write_bytes(gzip.compress(b"{" + b" " * 1_000_000 + b"}"))  # 1 KB on disk
    with pytest.raises(DataFileError, match="expands beyond"):
        kineto.read_kineto(path)


def _op(name, ident, dims, types, **args):
    return [{"ph": "X", "cat": "cpu_op", "name": name, "ts": 0, "dur": 5,
             "args": {"External id": ident, "Input Dims": dims, "Input type": types, **args}},
            {"ph": "X", "cat": "kernel", "name": f"kernel_of_{ident}", "ts": 1, "dur": 2.0,
             "args": {"External id": ident}}]


@pytest.mark.parametrize("name, dims, types, flops, moved", [
    ("aten::linear", [[4, 16, 4096], [11008, 4096], []], ["c10::BFloat16", "c10::BFloat16", ""],
     2 * 64 * 4096 * 11008, 2 * (64 * 4096 + 11008 * 4096 + 64 * 11008)),
    ("aten::addmm", [[1024], [32, 512], [512, 1024], [], []], ["float", "float", "float", "Scalar", "Scalar"],
     2 * 32 * 512 * 1024, 4 * (1024 + 32 * 512 + 512 * 1024 + 32 * 1024)),
    ("aten::bmm", [[8, 128, 64], [8, 64, 128]], ["c10::Half", "c10::Half"],
     2 * 8 * 128 * 64 * 128, 2 * (8 * 128 * 64 * 2 + 8 * 128 * 128)),
    ("aten::add", [[1000, 10], [1000, 10], []], ["float", "float", "Scalar"], None, 4 * 3 * 10_000),
    # inner sizes that do not match: not a product, read as any op (its result as large as its largest input)
    ("aten::mm", [[8, 4096], [2048, 4096]], ["float", "float"], None, 4 * (8 * 4096 + 2 * 2048 * 4096)),
])
def test_without_a_flop_count_products_take_their_flops_and_every_op_its_bytes_from_shapes(
        tmp_path, name, dims, types, flops, moved):
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"traceEvents": _op(name, 1, dims, types)}))
    profile = read_profile(path)
    kernel = profile.kernels[0]
    assert kernel.bytes == {"dram": moved}
    assert profile.estimated == ("FLOPs and bytes from shapes" if flops else "bytes from shapes")
    assert kernel.total_flops == (flops or 0)  # mismatched inner sizes (the last case): no FLOPs


def test_a_trace_without_shapes_is_compared_by_time_only(tmp_path):
    events = [e for e in trace()["traceEvents"] if e["name"] != "aten::mm"]
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"traceEvents": events}))
    profile = read_profile(path)
    assert all(k.bytes == {} for k in profile.kernels) and profile.estimated == ""
    assert "compared by time, not placed on the chart" in profile.notes[-1]


def test_shapes_beyond_any_tensor_are_skipped_not_multiplied(tmp_path):
    """Thirty dimensions of 2^39 would overflow every float downstream: not a shape."""
    dims = [[1 << 39] * 30, [1 << 39] * 30]
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"traceEvents": _op("aten::mm", 1, dims, ["float", "float"])}))
    kernel = read_profile(path).kernels[0]
    assert kernel.bytes == {} and kernel.flops == {}


def _step(ts, dur, cat="gpu_user_annotation", name="ProfilerStep#3"):
    return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "args": {}}


def test_only_kernels_inside_a_profiled_step_on_the_gpu_are_read(tmp_path):
    """The GEMM (ts 10) and its reduce (36) run inside the step's GPU span (from 8 to 40
    µs); the norm's kernel (55) runs after it: an earlier or later step's, left out."""
    events = [*trace()["traceEvents"], _step(8, 32), _step(0, 100, cat="user_annotation")]
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"traceEvents": events}))
    profile = read_profile(path)
    assert [k.name for k in profile.kernels] == ["sm90_xmma_gemm_bf16bf16_bf16f32", "splitKreduce_kernel"]
    assert profile.notes[0] == ("1 kernel(s), 0.003 ms, started outside the profiler's 1 step(s) on the GPU "
                                "(ProfilerStep#…): work of steps not recorded (a recording opens while the "
                                "GPU still runs the step before); left out")
    assert profile.steps == 1


def test_a_profile_covers_the_steps_the_trace_marks_and_is_compared_per_step(tmp_path, models, catalog):
    """Two steps, each a GEMM and a norm: the comparison gives one step's time."""
    events = [*trace()["traceEvents"], _step(8, 32, name="ProfilerStep#3"),
              _step(50, 20, name="ProfilerStep#4")]
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"traceEvents": events}))
    profile = read_profile(path)
    assert profile.steps == 2 and len(profile.kernels) == 3 and profile.notes[0].startswith("FLOPs")
    from explorer.core.analysis.analysis import analyze
    from explorer.core.analysis.profile_match import compare
    from explorer.core.model.workload import WorkloadParams

    a = analyze(models["llama-3-8b"], WorkloadParams(), catalog["h100-sxm"])
    comparison = compare(profile, a, None)
    assert comparison.steps == 2
    assert sum(r.measured_s for r in comparison.rows) == pytest.approx(profile.time_s / 2)
    assert compare(profile, a, None, steps=1).steps == 1  # told otherwise (--profile-steps)


@pytest.mark.parametrize("spans", [
    [],  # no step marked on the GPU: every kernel
    [(200, 10)],  # no kernel inside any step (a damaged or foreign annotation): every kernel
    [(8, 32), (50, "long")],  # a span without a number is not a span; the norm's kernel is outside
])
def test_without_a_step_holding_kernels_every_kernel_is_read(tmp_path, spans):
    events = [*trace()["traceEvents"], *(_step(ts, dur) for ts, dur in spans)]
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"traceEvents": events}))
    count = len(read_profile(path).kernels)
    assert count == (2 if len(spans) == 2 else 3)


@pytest.mark.parametrize("name, dims, concrete, flops", [
    # [B, H, L, D] queries, keys, values; every pair of 128 queries and 128 keys
    ("aten::scaled_dot_product_attention", [[2, 4, 128, 64]] * 3, None, 2 * 8 * 128 * 128 * 128),
    # a causal mask keeps 128·129/2 pairs (is_causal is the sixth input)
    ("aten::scaled_dot_product_attention", [[2, 4, 128, 64]] * 3, ["", "", "", "", "0.", "True", "", ""],
     2 * 8 * (128 * 129 // 2) * 128),
    # FlashAttention's own entry: [B, L, H, D], is_causal the ninth input
    ("aten::_flash_attention_forward", [[2, 128, 4, 64]] * 3, [""] * 8 + ["True"],
     2 * 8 * (128 * 129 // 2) * 128),
    ("aten::_flash_attention_forward", [[2, 128, 4, 64]] * 3, [""] * 8 + ["False"], 2 * 8 * 128 * 128 * 128),
    # 16 queries over 144 keys: PyTorch's mask starts at the first key, query i sees keys 0 … i
    ("aten::_scaled_dot_product_flash_attention", [[1, 2, 16, 64], [1, 2, 144, 64], [1, 2, 144, 64]],
     ["", "", "", "0.", "True"], 2 * 2 * (16 * 17 // 2) * 128),
    # FlashAttention's ends at the last key (new tokens after a cached prefix): 16·144 − 16·15/2
    ("aten::_flash_attention_forward", [[1, 16, 2, 64], [1, 144, 2, 64], [1, 144, 2, 64]],
     [""] * 8 + ["True"], 2 * 2 * (16 * 144 - 16 * 15 // 2) * 128),
    # more queries than keys: 4 see none under FlashAttention's mask, then 1 … 4 keys
    ("aten::_flash_attention_forward", [[1, 8, 1, 64], [1, 4, 1, 64], [1, 4, 1, 64]],
     [""] * 8 + ["True"], 2 * (1 + 2 + 3 + 4) * 128),
    # … and PyTorch's: queries 0 … 3 see 1 … 4 keys, the 4 after them all 4
    ("aten::scaled_dot_product_attention", [[1, 1, 8, 64], [1, 1, 4, 64], [1, 1, 4, 64]],
     ["", "", "", "", "0.", "True"], 2 * (1 + 2 + 3 + 4 + 4 * 4) * 128),
    # the memory-efficient kernel's is_causal is its seventh input (after compute_log_sumexp, dropout_p)
    ("aten::_scaled_dot_product_efficient_attention", [[1, 1, 8, 64]] * 3,
     ["", "", "", "", "False", "0.", "True"], 2 * (8 * 9 // 2) * 128),
    # grouped-query attention: 32 query heads share 8 key/value heads; every query head counts
    ("aten::_flash_attention_forward", [[1, 64, 32, 128], [1, 64, 8, 128], [1, 64, 8, 128]],
     [""] * 8 + ["False"], 2 * 32 * 64 * 64 * 256),
    ("aten::scaled_dot_product_attention", [[1, 32, 64, 128], [1, 8, 64, 128], [1, 8, 64, 128]],
     None, 2 * 32 * 64 * 64 * 256),
])
def test_attention_takes_its_flops_from_its_shapes_and_its_mask(tmp_path, name, dims, concrete, flops):
    extra = {} if concrete is None else {"Concrete Inputs": concrete}
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"traceEvents": _op(name, 1, dims, ["c10::BFloat16"] * 3, **extra)}))
    assert read_profile(path).kernels[0].flops == {"bf16": flops}


def _with_header(megabytes: int) -> bytes:
    """A real trace whose "traceEvents" key comes after a header of ``megabytes`` MB (a big
    deviceProperties, as a many-GPU node writes)."""
    devices = [{"id": i, "name": "NVIDIA H100 80GB HBM3", "padding": "x" * 1000}
               for i in range(megabytes * 1000)]
    header = {"schemaVersion": 1, "deviceProperties": devices}
    return json.dumps({**header, "traceEvents": trace()["traceEvents"]}).encode()


@pytest.mark.parametrize("packed", [False, True])
def test_a_trace_whose_events_come_after_a_long_header_loads(tmp_path, packed):
    from explorer.profiles.kineto import is_trace
    data = _with_header(2)
    assert data.index(b'"traceEvents"') > 2 << 20
    path = tmp_path / ("trace.json.gz" if packed else "trace.json")
    path.write_bytes(gzip.compress(data) if packed else data)
    assert is_trace(path)  # the window opens it as a profile, not as a model's config.json
    profile = read_profile(path)
    assert profile.tool.startswith("PyTorch profiler") and len(profile.kernels) == 3


@pytest.mark.parametrize("content, message", [
    (b" " * (3 << 20), "is gzip-compressed but holds no JSON object once expanded (3.0 MB): not a PyTorch "
                       "profiler trace"),
    (b"{" + b" " * (3 << 20) + b'"a": 1}', 'has no "traceEvents" list: not a PyTorch profiler trace'),
    (b" " * (5 << 20), "expands beyond 4 MB: refused (is it the right file?)"),
])
def test_a_gzip_without_trace_events_says_what_it_is(tmp_path, monkeypatch, content, message):
    """Once refused as "not UTF-8 text" (its compressed bytes read as a CSV), because its
    first megabyte named no traceEvents."""
    from tests.cli.test_cli import run
    monkeypatch.setattr(kineto, "MAX_TRACE_BYTES", 4 << 20)
    path = tmp_path / "bomb.json.gz"
    path.write_bytes(gzip.compress(content))
    with pytest.raises(DataFileError) as caught:
        read_profile(path)
    assert str(caught.value) == f"{path}: {message}"
    code, _, err = run("profile", str(path))
    assert code == 1 and f"{path}: {message}" in err and "Traceback" not in err


def test_a_json_object_that_is_no_trace_is_named_so_not_read_as_a_csv(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"architectures": ["LlamaForCausalLM"], "padding": "x" * (2 << 20)}))
    with pytest.raises(DataFileError) as caught:
        read_profile(path)
    assert str(caught.value) == f'{path}: has no "traceEvents" list: not a PyTorch profiler trace'
