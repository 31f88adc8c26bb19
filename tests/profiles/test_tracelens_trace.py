"""A real PyTorch profiler trace of a model on a GPU (TraceLens, MIT licence:
tests/data/tracelens/README.md): one forward pass of Qwen1.5 0.5B without its output head,
bf16, 16 prompts of 559 tokens, on an H100. The counts below are worked out by hand from
the model's shapes (hidden 1,024, MLP 2,816, 16 heads of 64, 24 layers); the kernel time
was added up from the file's own events by a separate script."""

from collections import defaultdict
from pathlib import Path

import pytest

from explorer.core.analysis.analysis import analyze
from explorer.core.analysis.expected import expected_for
from explorer.core.analysis.profile_match import by_shape, compare
from explorer.core.model.workload import WorkloadParams
from explorer.profiles.reading import read_profile

TRACE = Path(__file__).parents[1] / "data" / "tracelens" / "qwen1.5-0.5b-chat-h100.pt.trace.json.gz"
LAYERS, D, FF, HEADS, SEQ, BATCH = 24, 1024, 2816, 16, 559, 16
ROWS = BATCH * SEQ  # 8,944 tokens: the rows of every product


@pytest.fixture(scope="module")
def profile():
    return read_profile(TRACE)


def test_the_same_step_on_an_mi300x_does_the_same_work(profile):
    """The same workload traced on an MI300X (hipBLASLt's products, ROCm's attention
    kernel): its own kernels and time, the same FLOPs for every product shape."""
    amd = read_profile(TRACE.with_name("qwen1.5-0.5b-chat-mi300x.pt.trace.json.gz"))
    assert sum(k.launches for k in amd.kernels) == 1053  # 1,516 in the file; the rest before the step
    assert amd.notes[0].startswith("463 kernel(s)") and amd.device == "AMD Instinct MI300X VF"

    def work(p):
        out = defaultdict(int)
        for k in p.kernels:
            if k.shape:
                out[k.shape] += k.total_flops
        return dict(out)

    assert work(amd) == work(profile) and work(amd)[(D, FF)] == 2 * LAYERS * 2 * ROWS * D * FF


def test_only_the_kernels_of_the_recorded_step_are_read(profile):
    # 1,465 kernels in the file: the 436 before the step's span on the GPU are the previous
    # step's tail (they link to no CPU op)
    assert sum(k.launches for k in profile.kernels) == 1029
    assert profile.time_s == pytest.approx(31.760058e-3, rel=1e-6)
    assert profile.notes[0].startswith("436 kernel(s), 13.7 ms, started outside the profiler's 1 step(s)")
    assert profile.estimated == "FLOPs and bytes from shapes"
    assert profile.device == "NVIDIA H100 80GB HBM3"  # its deviceProperties


def test_each_product_takes_its_flops_from_its_recorded_shape(profile):
    launches, flops = defaultdict(int), defaultdict(int)
    for k in profile.kernels:
        if k.shape:
            launches[k.shape] += k.launches
            flops[k.shape] += k.flops["bf16"]
    # q, k, v (biased) and o: 4 per layer; gate and up: 2; down: 1 (2 FLOPs per multiply-add)
    assert dict(launches) == {(D, D): 4 * LAYERS, (D, FF): 2 * LAYERS, (FF, D): LAYERS}
    assert flops[(D, D)] == 4 * LAYERS * 2 * ROWS * D * D
    assert flops[(D, FF)] == 2 * LAYERS * 2 * ROWS * D * FF
    assert flops[(FF, D)] == LAYERS * 2 * ROWS * FF * D


def test_causal_flash_attention_counts_the_pairs_its_mask_keeps(profile):
    flash = [k for k in profile.kernels if "flash_fwd_kernel" in k.name]
    assert len(flash) == LAYERS
    kept_pairs = SEQ * (SEQ + 1) // 2  # each query with itself and the keys before it
    for k in flash:  # scores and weighted sum: 2·(64 + 64) FLOPs a pair, for 16 × 16 heads
        assert k.flops == {"bf16": 2 * BATCH * HEADS * kept_pairs * (64 + 64)}


def test_the_products_share_a_row_with_every_predicted_op_of_their_shape(profile, models, catalog):
    """Qwen's query, key and value projections carry a bias and its output projection not:
    the prediction's shapes differ by the bias (1,025 against 1,024 columns) but a trace
    records 1,024 × 1,024 for all four, so all four share one row."""
    params = WorkloadParams(phase="prefill", batch=BATCH, seq=SEQ, causal=True, attention="fused")
    a = analyze(models["qwen1.5-0.5b"], params, catalog["h100-sxm"])
    e = expected_for(a)
    rows = {row.shape: row for row in by_shape(profile, a, e)}
    square = rows[(D, D)]
    assert square.ops == ("q_proj", "k_proj", "v_proj", "o_proj")
    ops = {o.name: i for i, o in enumerate(a.ops)}
    assert square.bound_s == pytest.approx(sum(float(a.time_s[ops[n]]) * LAYERS for n in square.ops))
    assert square.measured_s == pytest.approx(sum(k.time_s for k in profile.kernels if k.shape == (D, D)))
    assert rows[(D, FF)].ops == ("gate_proj", "up_proj") and rows[(FF, D)].ops == ("down_proj",)
    # every product the trace ran is matched to a predicted op, and the classes add up
    comparison = compare(profile, a, e)
    products = next(r for r in comparison.rows if r.op_class == "matrix products")
    assert products.measured_s == pytest.approx(sum(r.measured_s for r in rows.values()), rel=1e-3)
    assert sum(r.measured_s for r in comparison.rows) + sum(
        k.time_s for k in comparison.unmatched) == pytest.approx(profile.time_s)
