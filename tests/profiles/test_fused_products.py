"""Products an engine fuses, matched to the predicted ops they do together: SGLang's decode
of Qwen3-8B on an MI300X (TraceLens, tests/data/third_party/TraceLens/README.md) runs the
query, key and value projections as one product of 4,096 × 6,144 and the gate and up
projections as one of 4,096 × 24,576.

The replayed graph's kernels carry no shapes (a graph's launches record none); the trace of
the graph's capture records each product's ``aten::mm`` with its shapes, in the order the
graph runs them. Here the replay's 145 ``Cijk_*`` product kernels are given the shapes of
the capture's 145 ``aten::mm`` ops, one to one in order (a join made for this test: each
kernel name then has one shape, 36 of each and one output head). Their times, summed over
the replay (µs): 4,096 × 6,144: 903.515; 4,096 × 4,096: 602.344; 4,096 × 24,576: 2,417.659;
12,288 × 4,096: 1,461.907; 4,096 × 151,936: 396.832."""

from __future__ import annotations

import dataclasses
import gzip
import json
from collections import Counter
from pathlib import Path

import pytest

from explorer.core.analysis.analysis import analyze
from explorer.core.analysis.expected import expected_for
from explorer.core.analysis.profile_match import compare, fused_ops, ops_of_shape
from explorer.core.model.hf_config import spec_from_config
from explorer.core.model.profile import Profile, ProfiledKernel
from explorer.core.model.workload import WorkloadParams
from explorer.profiles.reading import read_profile
from tests.core.test_hf_config import QWEN3_8B

TL = Path(__file__).resolve().parents[1] / "data" / "third_party" / "TraceLens"
LAYERS = 36
MI300X_BANDWIDTH = 5.3e12  # bytes/s, the catalogue's MI300X


@pytest.fixture(scope="module")
def sglang() -> Profile:
    with gzip.open(TL / "sglang-decode-graph-capture-bs32-rank0.json.gz") as f:
        events = json.load(f)["traceEvents"]
    mms = sorted((e for e in events if e.get("cat") == "cpu_op" and e.get("name") == "aten::mm"),
                 key=lambda e: e["ts"])
    shapes = [tuple(e["args"]["Input Dims"][1]) for e in mms]  # [K, N] of [M, K] × [K, N]
    replay = read_profile(TL / "sglang-qwen3-8b-decode-graph-replay.json.gz")
    products = [k for k in replay.kernels if k.name.startswith("Cijk_")]
    assert len(products) == len(shapes) == 145
    shaped = {id(k): dataclasses.replace(k, shape=s) for k, s in zip(products, shapes, strict=True)}
    assert len(Counter((k.name, k.shape) for k in shaped.values())) == 5  # one shape a kernel name
    return dataclasses.replace(replay, kernels=tuple(shaped.get(id(k), k) for k in replay.kernels))


@pytest.fixture(scope="module")
def qwen3(catalog):
    spec = spec_from_config(QWEN3_8B, "Qwen3-8B/config.json")
    return analyze(spec, WorkloadParams(phase="decode", batch=32, context=1024), catalog["mi300x"])


def test_a_fused_product_is_compared_with_the_ops_it_fuses(sglang, qwen3):
    """Bytes of one layer's products at batch 32, bf16 (weights, input and output): q_proj
    4,096 × 4,096 × 2 + 32 × 4,096 × 2 × 2 = 34,078,720; k_proj and v_proj 4,096 × 1,024 × 2
    + 32 × 4,096 × 2 + 32 × 1,024 × 2 = 8,716,288 each; gate_proj and up_proj 4,096 × 12,288
    × 2 + 32 × 4,096 × 2 + 32 × 12,288 × 2 = 101,711,872 each. Each is bound by the MI300X's
    5.3 TB/s (its FLOPs take under a microsecond at 1.3 PFLOP/s), 36 layers: q + k + v
    36 × 51,511,296 / 5.3e12 = 349.89 µs against 903.515 measured (2.58×); gate + up 36 ×
    203,423,744 / 5.3e12 = 1,381.75 µs against 2,417.659 (1.75×); o_proj alone 36 ×
    34,078,720 / 5.3e12 = 231.48 µs against 602.344 (2.60×), no longer beside q_proj."""
    comparison = compare(sglang, qwen3, expected_for(qwen3))
    rows = {r.name: r for r in comparison.products}
    assert list(rows) == ["q_proj + k_proj + v_proj (fused)", "o_proj", "gate_proj + up_proj (fused)",
                          "down_proj", "lm_head"]
    qkv, o = rows["q_proj + k_proj + v_proj (fused)"], rows["o_proj"]
    gate_up = rows["gate_proj + up_proj (fused)"]
    assert qkv.shape == (4096, 6144) and qkv.fused and not o.fused
    assert qkv.bound_s == pytest.approx(36 * 51_511_296 / MI300X_BANDWIDTH)
    assert qkv.measured_s == pytest.approx(903.515e-6)
    assert qkv.measured_s / qkv.bound_s == pytest.approx(2.58, abs=0.01)
    assert gate_up.bound_s == pytest.approx(36 * 203_423_744 / MI300X_BANDWIDTH)
    assert gate_up.measured_s == pytest.approx(2417.659e-6)
    assert o.bound_s == pytest.approx(36 * 34_078_720 / MI300X_BANDWIDTH)
    assert o.measured_s == pytest.approx(602.344e-6)
    assert comparison.unshaped == ()
    # every product kernel is in a row: the rows sum to the products' time
    assert sum(r.measured_s for r in comparison.products) == pytest.approx(5782.257e-6)


def test_the_command_names_the_fused_rows(sglang, qwen3):
    from explorer.commands.profile import comparison_dict, comparison_lines

    comparison = compare(sglang, qwen3, expected_for(qwen3))
    text = "\n".join(comparison_lines(sglang, comparison))
    row = next(line for line in text.splitlines() if line.startswith("q_proj + k_proj + v_proj (fused) "))
    assert row.split()[6:10] == ["4,096", "×", "6,144", "350"] and "2.58" in row.split()
    assert "gate_proj + up_proj (fused)" in text and "q_proj + o_proj" not in text
    rows = comparison_dict(sglang, comparison)["products_by_shape"]
    assert [(r["ops"], r["fused"]) for r in rows][:2] == [(["q_proj", "k_proj", "v_proj"], True),
                                                           (["o_proj"], False)]


def test_the_chart_colours_a_fused_product_as_the_ops_it_fuses(qwen3):
    assert [o.name for o in ops_of_shape(qwen3, (4096, 6144))] == ["q_proj", "k_proj", "v_proj"]
    assert [o.name for o in ops_of_shape(qwen3, (4096, 4096))] == ["q_proj", "o_proj"]
    assert fused_ops(qwen3, (4096, 4096)) == ()  # a shape one op has is that op's, not a sum's
    assert fused_ops(qwen3, (4096, 7000)) == () and fused_ops(qwen3, (1024, 6144)) == ()
    assert fused_ops(qwen3, (4096, 28672)) == ()  # gate + up + down: down's depth is 12,288


def test_a_product_of_no_predicted_shape_is_said_not_dropped(sglang, qwen3):
    """Written here: one kernel of a shape no op of Qwen3-8B has, beside the real trace's."""
    from explorer.commands.profile import comparison_lines

    odd = ProfiledKernel("Cijk_odd", 1e-4, shape=(4096, 7000))
    profile = dataclasses.replace(sglang, kernels=(*sglang.kernels, odd))
    comparison = compare(profile, qwen3, None)
    assert comparison.unshaped == (((4096, 7000), pytest.approx(1e-4)),)
    assert ("products of a shape no predicted op has, alone or with the ops next to it, left out of the "
            "rows above: 4,096 × 7,000 (100 µs)") in "\n".join(comparison_lines(profile, comparison))
