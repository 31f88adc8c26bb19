"""A CPU as a run uses it (``--threads``): its threads take the fastest cores first, one to a
core, and every compute roof is that of the cores used, worked out again from the
catalogue's per-core formula (hand-computed below) or, where a peak has no such formula, in
proportion; memory, a GPU, and a count of every core (or 0) leave the device as it is."""

from __future__ import annotations

import io
from dataclasses import replace

import pytest

from explorer.commands import main as cli
from explorer.core.analysis.analysis import analyze
from explorer.core.hardware.cores import restrict_cores
from explorer.core.hardware.hardware import DeviceKind, evaluate_formula
from explorer.core.model.parameters import BY_NAME
from explorer.core.model.session import Session
from explorer.core.model.workload import WorkloadError, WorkloadParams

GHZ = 1e9


def test_a_hybrid_cpu_s_threads_take_its_performance_cores_first(catalog):
    """A 13900K's 16 threads: its 8 P-cores (2 × 256-bit units × 8 INT32 lanes × 4 INT8
    products × 2 OP × 5.8 GHz each), then 8 of its 16 E-cores (2 × 128-bit × 4 × 4 × 2 ×
    4.3 GHz each): 5.94 + 2.20 TOP/s."""
    hw = restrict_cores(catalog["core-i9-13900k"], 16)
    p_core, e_core = 2 * 8 * 4 * 2 * 5.8 * GHZ, 2 * 4 * 4 * 2 * 4.3 * GHZ
    assert hw.peak_flops("int8") == pytest.approx(8 * p_core + 8 * e_core)
    assert hw.peak_flops("int8") == pytest.approx(8.1408e12)
    assert hw.specs.cores == 16
    formula = hw.peak("int8").provenance.formula
    assert formula.startswith("8 P-cores") and "+ 8 E-cores" in formula and "16 of the 24 cores" in formula
    # fewer threads than P-cores: P-cores alone
    assert restrict_cores(catalog["core-i9-13900k"], 4).peak_flops("int8") == pytest.approx(4 * p_core)


def test_an_apple_cpu_on_eight_threads_has_eight_p_cores_units(catalog):
    """The M4 Max CPU's fp32 vector roof on 8 threads: 8 P-cores × 4 FMA units × 4 FP32 lanes
    × 2 FLOP × 4.51 GHz = 1.155 TFLOP/s, of the 16 cores' 1.917."""
    full = catalog["apple-m4-max-cpu"]
    hw = restrict_cores(full, 8)
    assert hw.peak("fp32", "vector").flops_per_s == pytest.approx(8 * 4 * 4 * 2 * 4.51 * GHZ)
    assert full.peak("fp32", "vector").flops_per_s == pytest.approx(1916.8e9)
    assert hw.bandwidth_bytes_per_s == full.bandwidth_bytes_per_s  # memory as the catalogue gives it
    assert hw.id == full.id and "8 threads" in hw.name


def test_a_peak_without_a_per_core_formula_scales_with_the_share_of_cores(catalog):
    full = catalog["epyc-9654"]
    peak = full.peak("fp32")
    published = replace(full, peaks=(replace(peak, provenance=replace(peak.provenance, formula="")),))
    hw = restrict_cores(published, 24)
    assert hw.peak_flops("fp32") == pytest.approx(peak.flops_per_s * 24 / 96)
    formula = hw.peak("fp32").provenance.formula
    assert formula.startswith("11.4 TFLOP/s × 24 ÷ 96 cores;")  # (the published rate to 3 digits)
    assert evaluate_formula(formula) == pytest.approx(hw.peak_flops("fp32"), rel=0.005)


def test_a_cluster_s_matrix_unit_counts_whole_once_a_thread_reaches_it(catalog):
    """The M4 Max CPU's SME units, one per cluster (2 P-clusters at 512 FP32 FLOP a cycle ×
    4.51 GHz, the E-cluster's at 360 GFLOP/s), each driven by one thread (Zakharko: 2 TFLOPs
    'achievable by a single thread'): one thread reaches one P-cluster's unit, two both,
    three every unit. A bound: no placement of the threads drives more."""
    full = catalog["apple-m4-max-cpu"]
    p_unit, e_unit = 512 * 4.51 * GHZ, 360e9
    every = 2 * p_unit + e_unit
    for threads, expected in ((1, p_unit), (2, 2 * p_unit), (3, every), (8, every)):
        hw = restrict_cores(full, threads)
        assert hw.peak("fp32", "matrix").flops_per_s == pytest.approx(expected)
    assert restrict_cores(full, 1).peak("fp32", "matrix").provenance.formula.startswith("1 P-cluster (")
    assert "; SDOT" in restrict_cores(full, 8).peak("int8", "vector").provenance.formula  # notes kept


@pytest.mark.parametrize("threads", [0, 16, 64])
def test_every_core_or_no_count_leaves_the_cpu_as_it_is(catalog, threads):
    hw = catalog["ryzen-9-7950x"]  # 16 cores
    assert restrict_cores(hw, threads) is hw


def test_a_gpu_is_never_restricted(catalog):
    hw = catalog["h100-sxm"]
    assert restrict_cores(hw, 8) is hw


def test_restricting_twice_is_restricting_once(catalog):
    once = restrict_cores(catalog["core-i9-13900k"], 16)
    assert restrict_cores(once, 16) == once


def test_fewer_threads_slow_a_prompt_and_not_a_decode(catalog, models):
    """Llama 3 8B in int8 on the M4 Max CPU: a 256-token prompt is compute-bound; its bound
    takes the fastest unit the threads reach, the SME units. One thread drives one P-cluster's
    (1,024 int8 operations a cycle at 4.51 GHz), where every core drives all three (9.94
    TOP/s): 2.15× longer; eight threads reach them all and take no longer than every core.
    A decode reads its weights at the same bandwidth."""
    model, hw = models["llama-3-8b"], catalog["apple-m4-max-cpu"]
    prompt = WorkloadParams(phase="prefill", seq=256, dtype="int8")
    decode = WorkloadParams(phase="decode", dtype="int8")
    every, one, eight = (analyze(model, replace(prompt, threads=t), hw).totals.time_s for t in (0, 1, 8))
    assert one / every == pytest.approx(9.93648e12 / (1024 * 4.51e9), rel=0.02)
    assert eight == pytest.approx(every, rel=0.01)
    d_every, d_eight = (analyze(model, replace(decode, threads=t), hw).totals.time_s for t in (0, 8))
    assert d_eight == pytest.approx(d_every, rel=0.01)


def test_the_parameter_applies_on_a_cpu_only():
    applies = BY_NAME["threads"].applies
    params = WorkloadParams()
    assert applies.holds(params, kinds=frozenset({DeviceKind.CPU}))
    assert applies.holds(params, kinds=frozenset({DeviceKind.GPU, DeviceKind.CPU}))  # a CPU among them
    assert not applies.holds(params, kinds=frozenset({DeviceKind.GPU}))
    assert "a CPU" in applies.describe()


def test_a_negative_count_is_refused():
    with pytest.raises(WorkloadError, match="threads"):
        WorkloadParams(threads=-1)


def test_a_session_s_threads_give_the_window_s_device_its_cores(catalog, models):
    from explorer.document import Document

    session = Session(model="llama-3-8b", hardware=("apple-m4-max-cpu",),
                      params=WorkloadParams(phase="prefill", seq=256, dtype="int8", threads=8))
    doc = Document(catalog, models, session)
    assert doc.primary.specs.cores == 8
    assert doc.analysis().hardware == doc.primary  # the chart's roofs are the analysis's


def test_the_command_line_takes_threads():
    out, err = io.StringIO(), io.StringIO()
    args = ["analyze", "--model", "llama-3-8b", "--hardware", "apple-m4-max-cpu", "--phase", "prefill",
            "--seq", "256", "--dtype", "int8", "--threads", "8"]
    code = cli.run(cli.parse_args(args), out, err)
    assert code == 0, err.getvalue()
    assert "8 threads" in out.getvalue() and "9.94 TOP/s (int8 matrix)" in out.getvalue()


def test_threads_are_not_a_what_if_on_the_chart(catalog, models):
    """The chart marks a device whose drawn roofs differ from its datasheet's as a what-if:
    a CPU on fewer threads is the device as the workload uses it, not a dragged roof."""
    from explorer.chart.snapshot import Snapshot
    from explorer.document import Document

    session = Session(model="llama-3-8b", hardware=("apple-m4-max-cpu", "ryzen-9-7950x"),
                      params=WorkloadParams(phase="prefill", seq=256, dtype="int8", threads=8))
    shot = Snapshot.of(Document(catalog, models, session))
    assert all(d.hardware == d.datasheet and d.hardware.specs.cores == 8 for d in shot.devices)
    assert shot.analysis.hardware == shot.devices[0].hardware


def test_a_cpu_on_fewer_threads_draws_the_power_of_the_cores_it_keeps_busy(catalog, models):
    """The power model's activity is the chip's: one thread of a 13900K's 24 cores busy all
    the time adds a 24th of the dynamic power to the idle quarter of its 125 W, not all of it."""
    from explorer.core.analysis.energy_report import device_busy_s, step_energy

    model, hw = models["llama-3-8b"], catalog["core-i9-13900k"]
    a = analyze(model, WorkloadParams(phase="prefill", seq=512, dtype="int8", threads=1), hw)
    t = a.totals
    assert device_busy_s(a) == pytest.approx((t.compute_time_s + t.memory_time_s) / 24)
    energy = step_energy(a, None)  # at the bound: the roofs busy the whole step
    assert energy is not None
    assert energy.power_w == pytest.approx(125 * (0.25 + 0.75 * device_busy_s(a) / t.time_s))
    assert energy.power_w < 125 * (0.25 + 0.75 / 12)


def test_the_batch_sweep_and_the_crossing_follow_the_threads(catalog, models):
    """Given the catalogue's CPU, the batch sweep and the compute-bound test cost it on the
    cores of the workload's threads, as ``analyze`` does."""
    from explorer.core.analysis.batching import compute_bound
    from explorer.core.analysis.sweep import batch_sweep

    model, hw = models["llama-3-8b"], catalog["apple-m4-max-cpu"]
    params = WorkloadParams(phase="prefill", seq=256, dtype="int8", threads=1)
    analysed = analyze(model, params, hw).totals.time_s
    assert batch_sweep(model, params, hw, [1]).time_s[0] == pytest.approx(analysed)
    decode, batches = WorkloadParams(phase="decode", dtype="int8", threads=1), list(range(1, 65))
    every_core = list(compute_bound(model, replace(decode, threads=0), hw, batches))
    on_one = list(compute_bound(model, decode, hw, batches))
    assert on_one == list(compute_bound(model, decode, restrict_cores(hw, 1), batches))
    assert on_one.index(True) < every_core.index(True)  # fewer cores: compute-bound from a smaller batch


def test_a_restricted_cpu_s_card_says_which_cores_it_uses(catalog):
    """Its core count is derived (the threads, not the datasheet's), and says which cores."""
    from explorer.core.hardware.device_sheet import device_sheet

    hw = restrict_cores(catalog["core-i9-13900k"], 16)
    assert hw.specs.provenance.derived and hw.specs.cores_of == 24
    assert hw.specs.provenance.formula == "16 threads, one to a core: 8 P + 8 E of its 24 cores"
    sheet = device_sheet(hw).specs
    assert sheet.text.startswith("16 cores, ") and sheet.provenance is not None and sheet.provenance.derived
    assert restrict_cores(catalog["apple-m4-max-cpu"], 1).name.endswith(", 1 thread")
