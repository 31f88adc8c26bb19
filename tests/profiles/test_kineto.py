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
    assert all(k.bytes == {} for k in profile.kernels)  # a trace counts no bytes
    assert "compared by time" in profile.notes[0]


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
