"""Real PyTorch profiler traces of other projects (tests/data/third_party/, each folder's
README.md gives its origin and the figures counted by hand): steps marked on the CPU only,
kernels of two GPUs, CUDA graphs, an MTIA run, a device other than the one compared."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from explorer.core.files.errors import DataFileError
from explorer.profiles.reading import read_profile
from tests.cli.test_cli import run

ROOT = Path(__file__).resolve().parents[1] / "data"
HTA = ROOT / "third_party" / "HolisticTraceAnalysis"
TRACELENS = ROOT / "tracelens"
TL = ROOT / "third_party" / "TraceLens"
COMPARE = ("analyze", "--model", "qwen1.5-0.5b", "--hardware", "h100-sxm", "--batch", "16",
           "--seq", "559", "--phase", "prefill", "--profile")


def test_steps_marked_only_on_the_cpu_are_counted_through_their_launches():
    """6 ProfilerStep# spans of 75 to 81 ms on the CPU and none on the GPU: all 8,568
    kernels (446.813 ms) are launched inside them, so a step is 74.5 ms, not one of 447."""
    profile = read_profile(HTA / "cpu-marked-steps-control.json.gz")
    assert profile.steps == 6 and len(profile.kernels) == 8568
    assert profile.time_s == pytest.approx(0.446813)
    assert profile.device == "NVIDIA A100-PG509-200" and profile.devices == 1
    assert profile.notes[0].startswith("steps marked on the CPU only (6 ProfilerStep#… span(s)")
    assert not any(k.flops or k.bytes for k in profile.kernels)  # no FLOP count, no shapes recorded


def test_kernels_launched_outside_the_cpu_steps_are_left_out_and_said_so():
    """5 steps marked on the CPU; 705 of the 6,080 kernels (56.3 ms) are launched outside them."""
    profile = read_profile(HTA / "cuda-graph-launches-rank0.json.gz")
    assert profile.steps == 5 and len(profile.kernels) == 6080 - 705
    assert profile.time_s == pytest.approx(0.401445 - 0.0563, abs=1e-4)
    assert profile.notes[1].startswith("705 kernel(s), 56.3 ms, launched outside the profiler's steps")


def test_cuda_graph_launches_are_read_as_they_ran_and_said_so():
    """70 cudaGraphLaunch calls, each with its kernels in the trace (135 kernels, 105 ms)."""
    profile = read_profile(HTA / "cuda-graph-launches-rank0.json.gz")
    assert any(n.startswith("70 CUDA graph launch(es) (cudaGraphLaunch), 70 of them with kernels")
               for n in profile.notes)


def test_a_trace_of_a_graph_s_capture_alone_is_refused():
    """SGLang capturing its decode graph on an MI300X: 546 launches (401 hipLaunchKernel, 145
    hipExtModuleLaunchKernel), of which 2 ran (11.015 µs of kernels); the other 544 were
    captured, never run. Once read as an 11 µs, 2-kernel step."""
    with pytest.raises(DataFileError) as caught:
        read_profile(TL / "sglang-decode-graph-capture-bs32-rank0.json.gz")
    assert "records the capture of 1 CUDA graph(s) (hipStreamBeginCapture): 544 kernel launch(es) captured " \
           "and never run, 2 kernel(s) run: not a step" in str(caught.value)


def test_a_graph_s_replay_is_read_as_it_ran():
    """The same decode step replayed: one hipGraphLaunch, whose correlation id 544 of the 555
    kernels carry; 9.765437 ms of kernels in all."""
    profile = read_profile(TL / "sglang-qwen3-8b-decode-graph-replay.json.gz")
    assert len(profile.kernels) == 555 and profile.time_s == pytest.approx(9.765437e-3)
    assert "1 CUDA graph launch(es) (hipGraphLaunch), 1 of them with kernels in the trace" in \
        " ".join(profile.notes)
    assert profile.device == "AMD Instinct MI300X"


def test_a_graph_s_capture_amid_kernels_that_ran_is_noted_not_refused(tmp_path):
    """Written here, not a real trace: a capture of 3 launches beside 4 kernels that ran."""
    def call(name, ts, corr):
        return {"ph": "X", "cat": "cuda_runtime", "name": name, "ts": ts, "dur": 1,
                "args": {"correlation": corr}}

    events = [call("cudaLaunchKernel", i, i) for i in range(4)]
    events += [{"ph": "X", "cat": "kernel", "name": f"gemm_{i}", "ts": 10 + i, "dur": 1,
                "args": {"correlation": i, "device": 0}} for i in range(4)]
    events += [call("cudaStreamBeginCapture", 20, 100), *(call("cudaLaunchKernel", 21 + i, 101 + i)
                                                          for i in range(3))]
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"traceEvents": events}))
    profile = read_profile(path)
    assert len(profile.kernels) == 4 and profile.notes[0].startswith(
        "1 CUDA graph capture(s) in the trace (cudaStreamBeginCapture): 3 launch(es) captured, not run")


def test_nvjet_kernels_are_products_with_the_flops_of_the_op_that_launched_them(catalog):
    """A B200's eager run (gpt-oss-like MoE layers, TraceLens): 768 kernels, 10.862916 ms;
    109 nvjet kernels under aten::addmm (36 × 3 shapes, M 888) and one aten::mm, their FLOPs
    from the ops' shapes: 2 × 888 × (2880 × 640 + 512 × 2880 + 2880 × 128) × 36 + 2 × 2880 ×
    25136 = 235,838,453,760. nvjet_tst_64x64…'s bytes: bias, input, weight and result, bf16,
    (640 + 888 × 2880 + 2880 × 640 + 888 × 640) × 2 × 36 = 357,811,200. Classed as products
    by their name, and by their op where no pattern names them."""
    import re

    from explorer.core.analysis.profile_match import Pattern, kernel_class

    profile = read_profile(TL / "b200-eager-trace.json.gz")
    assert len(profile.kernels) == 768 and profile.time_s == pytest.approx(10.862916e-3)
    nvjet = [k for k in profile.kernels if k.name.startswith("nvjet_")]
    assert len(nvjet) == 109 and {k.op for k in nvjet} == {"aten::addmm", "aten::mm"}
    assert sum(k.total_flops for k in nvjet) == 235_838_453_760
    assert sum(k.bytes.get("dram", 0) for k in nvjet if k.name.startswith("nvjet_tst_64x64")) == 357_811_200
    assert all(kernel_class(k) == "matrix products" for k in nvjet)
    by_op_only = [Pattern("products:aten", "matrix products", re.compile(r"^aten::(mm|addmm)$"))]
    assert all(kernel_class(k, by_op_only) == "matrix products" for k in nvjet)
    assert profile.device == "NVIDIA B200"
    code, out, _ = run("profile", str(TL / "b200-eager-trace.json.gz"), "--hardware", "h100-sxm")
    assert "warning: the profile ran on NVIDIA B200, not on NVIDIA H100" in out
    code, out, _ = run("profile", str(TL / "b200-eager-trace.json.gz"), "--hardware", "b200")
    assert code == 0 and "warning" not in out


def test_kernels_of_two_gpus_are_compared_per_device(tmp_path):
    """Two ranks' traces in one (derived, README.md): 1,154 kernels on device 0 (606.519
    ms) and 1,104 on device 1 (651.026 ms); a step of each device is a quarter of the sum
    (two devices, two steps), not half."""
    profile = read_profile(HTA / "two-gpus-sampled-rank-0-and-1.json.gz")
    assert profile.devices == 2 and profile.steps == 2 and len(profile.kernels) == 1154 + 1104
    assert profile.time_s == pytest.approx(0.606519 + 0.651026)
    assert any("device 0: 607 ms, 1: 651 ms" in n for n in profile.notes)
    code, out, _ = run(*COMPARE, str(HTA / "two-gpus-sampled-rank-0-and-1.json.gz"), "--json")
    assert code == 0
    doc = json.loads(out)["profile"]
    measured = sum(r["measured_s"] for r in doc["classes"]) + sum(k["time_s"] for k in doc["unmatched"])
    assert doc["devices"] == 2 and measured == pytest.approx((0.606519 + 0.651026) / 4)


def test_an_mtia_trace_is_refused_by_name():
    with pytest.raises(DataFileError) as caught:
        read_profile(HTA / "mtia_inference_rank_0.json.gz")
    assert "ran on MTIA (ARTEMIS), an accelerator the project does not model" in str(caught.value)


def test_a_profile_of_another_device_is_warned_of():
    """The MI300X's trace beside an H100's prediction: said, in the text and the JSON; the
    H100's trace beside it is not."""
    mi300x = str(TRACELENS / "qwen1.5-0.5b-chat-mi300x.pt.trace.json.gz")
    code, out, _ = run(*COMPARE, mi300x)
    assert code == 0 and "warning: the profile ran on AMD Instinct MI300X VF, not on NVIDIA H100" in out
    code, out, _ = run(*COMPARE, mi300x, "--json")
    assert json.loads(out)["profile"]["warnings"][0].startswith("the profile ran on AMD Instinct MI300X VF")
    code, out, _ = run("profile", mi300x, "--hardware", "h100-sxm")
    assert code == 0 and "warning: the profile ran on AMD Instinct MI300X VF" in out
    code, out, _ = run("profile", mi300x, "--hardware", "mi300x")
    assert code == 0 and "warning" not in out
    code, out, _ = run(*COMPARE, str(TRACELENS / "qwen1.5-0.5b-chat-h100.pt.trace.json.gz"))
    assert code == 0 and "warning" not in out


def test_the_json_lists_every_kernel_and_the_table_says_what_it_folds():
    """The H100 trace: 1,465 kernels, 45.43 ms in all, a ProfilerStep on the GPU holding 1,029
    of them; the JSON lists each name (a 2 µs kernel beside a 1 ms GEMM too)."""
    path = str(TRACELENS / "qwen1.5-0.5b-chat-h100.pt.trace.json.gz")
    profile = read_profile(path)
    code, out, _ = run("profile", path, "--json")
    kernels = json.loads(out)["kernels"]
    assert code == 0 and "other" not in [k["name"] for k in kernels]
    assert sum(k["launches"] for k in kernels) == len(profile.kernels) == 1029
    assert len(kernels) == len({k.name for k in profile.kernels})
    assert min(k["time_s"] for k in kernels) < 0.01 * profile.time_s
    code, out, _ = run("profile", path)
    assert '\nnote: "other" folds ' in out and "--json lists each" in out


@pytest.mark.parametrize("name", ["nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NNT", "kernel_0"])
def test_products_are_matched_by_name_or_by_the_op_that_launched_them(tmp_path, name):
    """cuBLAS's nvjet kernels (CUDA 12.8 on) are products by name; a kernel whose name says
    nothing takes its class from the op that launched it (aten::mm, addmm): the H100 trace
    with its GEMMs renamed so (derived here)."""
    doc = json.loads(gzip.decompress((TRACELENS / "qwen1.5-0.5b-chat-h100.pt.trace.json.gz").read_bytes()))
    renamed = 0
    for event in doc["traceEvents"]:
        if event.get("cat") == "kernel" and "gemm" in event["name"].lower():
            event["name"], renamed = name, renamed + 1
    path = tmp_path / "renamed.json.gz"
    path.write_bytes(gzip.compress(json.dumps(doc).encode()))
    assert renamed > 100
    code, out, _ = run(*COMPARE, str(path), "--json")
    profile = json.loads(out)["profile"]
    products = next(r for r in profile["classes"] if r["class"] == "matrix products")
    assert code == 0 and name in products["kernels"]
    assert all(k["name"] != name for k in profile["unmatched"])


def test_the_comparison_says_none_measured_and_shortens_long_names(tmp_path):
    """A trace of one norm kernel with a 1,900-character name and no product: the products'
    row says "none measured" (no 0 s, no 0.00), the name is cut with an ellipsis."""
    name = "void at::native::elementwise_kernel<" + "x" * 1900 + ">"
    events = [{"ph": "X", "cat": "kernel", "name": "rms_norm_kernel", "ts": 0, "dur": 5, "args": {}},
              {"ph": "X", "cat": "kernel", "name": name.replace("elementwise", "weird"), "ts": 6, "dur": 5,
               "args": {}}]
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"traceEvents": events}))
    code, out, _ = run(*COMPARE, str(path))
    assert code == 0
    products = next(line for line in out.splitlines() if line.startswith("matrix products"))
    assert "none measured" in products and "0.00" not in products
    unmatched = next(line for line in out.splitlines() if line.startswith("unmatched"))
    assert "…" in unmatched and len(unmatched) < 300
    code, out, _ = run(*COMPARE, str(path), "--json")
    products = next(r for r in json.loads(out)["profile"]["classes"] if r["class"] == "matrix products")
    assert products["kernels"] == [] and products["measured_over_bound"] is None


def test_a_gzip_of_binary_data_is_not_a_trace(tmp_path):
    path = tmp_path / "weights.json.gz"
    path.write_bytes(gzip.compress(b'{"a": 1}' + bytes(range(128, 256))))
    with pytest.raises(DataFileError) as caught:
        read_profile(path)
    assert str(caught.value).startswith(f"{path}: is not a trace: its gzip holds binary data")


@pytest.mark.parametrize("device, hardware, warned", [
    ("NVIDIA A100-PG509-200", "a100-80gb-sxm", False),
    ("NVIDIA A100-SXM4-80GB", "h100-sxm", True),
    ("NVIDIA H100 80GB HBM3", "h100-sxm", False),
    ("Tesla V100-SXM2-32GB", "v100-sxm2", False),
    ("AMD Instinct MI300X VF", "mi300x", False),
    ("AMD Radeon Graphics", "h100-sxm", True),  # another vendor, whatever the model
    ("AMD Radeon Graphics", "mi300x", False),  # no model number: nothing to tell
    ("NVIDIA GeForce RTX 4090", "rtx-4090", False),
    # tests/data/third_party/ncu/microgpusim: a GeForce GTX model number is one too
    ("NVIDIA GeForce GTX 1080", "rtx-4090", True),
    ("NVIDIA GeForce GTX 1080 Ti", "rtx-4090", True),
    # the board: an H100 PCIe (2 TB/s) is not an H100 SXM (3.35 TB/s); a name without one says nothing
    ("NVIDIA H100 PCIe", "h100-sxm", True),
    ("NVIDIA H100 PCIe", "h100-pcie", False),
    ("NVIDIA H100 NVL", "h100-nvl", False),
    ("NVIDIA H100 80GB HBM3", "h100-pcie", False),
    ("NVIDIA A100-SXM4-80GB", "a100-80gb-pcie", True),
    ("NVIDIA RTX A6000", "rtx-6000-ada", True),  # Ampere's A6000 is not the RTX 6000 Ada
    ("NVIDIA RTX A6000", "a40", True),
    ("NVIDIA GH200 480GB", "h100-sxm", True),
    ("NVIDIA GB200", "gb200", False),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "rtx-pro-6000-blackwell", False),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "rtx-5090", True),
])
def test_a_device_is_told_from_another_by_its_model_number(catalog, device, hardware, warned):
    from explorer.core.analysis.profile_match import device_mismatch

    assert bool(device_mismatch(device, catalog[hardware])) == warned


def test_the_workload_panel_says_none_measured_and_none_predicted_where_each_is_meant():
    from explorer.core.analysis.profile_match import Row
    from explorer.ui.panels.workload_panel import measured_words

    assert measured_words(Row("attention", 1e-3, 2e-3, 0.0, ())) == "attention: none measured"
    assert measured_words(Row("communication", 0.0, 0.0, 1e-3, ("nccl",))) == \
        "communication 1 ms (none predicted)"
    assert measured_words(Row("matrix products", 1e-3, 2e-3, 3e-3, ("gemm",))) == \
        "matrix products 3 ms (1.50× expected)"
