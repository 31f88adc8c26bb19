"""A PyTorch trace from CUPTI's range profiler (HolisticTraceAnalysis's sample, MIT):
refused without kernel times, naming the metric to add; with them, each range a kernel
whose counters are read as Nsight Compute reads them."""

import gzip
import json
import re
from pathlib import Path

import pytest

from explorer.core.files.datafile import DataFileError
from explorer.profiles.reading import read_profile

SAMPLE = Path(__file__).parents[1] / "data" / "holistictraceanalysis" / "cupti_profiler_trace.json.gz"


def _sample() -> dict:
    return json.loads(gzip.decompress(SAMPLE.read_bytes()))


def test_ranges_without_a_kernel_time_are_refused_naming_the_metric():
    with pytest.raises(DataFileError, match=re.escape("carry no kernel time: add gpu__time_duration.sum")):
        read_profile(SAMPLE)


def test_with_their_times_the_ranges_are_kernels_counted_as_ncu_counts_them(tmp_path):
    trace = _sample()
    ranges = [e for e in trace["traceEvents"] if e.get("cat") == "cuda_profiler_range"]
    for i, event in enumerate(ranges):  # the times the sample lacks, known here
        event["args"]["gpu__time_duration.sum"] = 1000 * (i + 1)
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(trace))
    profile = read_profile(path)
    assert profile.tool == "PyTorch profiler (CUPTI counter ranges)" and len(profile.kernels) == 77
    sgemm = profile.kernels[30]  # the sample's first ampere_sgemm_32x32_sliced1x4_tn
    assert sgemm.name == "ampere_sgemm_32x32_sliced1x4_tn" and sgemm.time_s == pytest.approx(31e-6)
    # fadd 1,572,864 + fmul 2,097,152 + 2 × ffma 4,831,838,208 (the sample's counters)
    assert sgemm.flops == {"fp32": 1_572_864 + 2_097_152 + 2 * 4_831_838_208}
    first = profile.kernels[0]  # half-precision FMAs count 4 FLOPs (packed pairs), fp32 FMAs 2
    assert first.flops == {"fp16": 4 * 4_866_048, "fp32": 2 * 38_731_776}
    assert first.bytes == {}  # the sample counted no bytes


def test_a_counter_that_is_not_a_number_is_named(tmp_path):
    trace = _sample()
    event = next(e for e in trace["traceEvents"] if e.get("cat") == "cuda_profiler_range")
    event["args"]["smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"] = "many"
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(trace))
    name = "args.smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"
    with pytest.raises(DataFileError, match=re.escape(f"field '{name}': must be a number")):
        read_profile(path)
