"""Estimates from shapes beyond the device's roofs: in the B200's eager trace (TraceLens,
tests/data/third_party/TraceLens/README.md) vLLM's ``reshape_and_cache_flash_kernel`` is
given the bytes of every tensor it is passed, the whole KV cache among them: 466,022,778,912
bytes in 162.686 µs (36 launches), 2.86 PB/s, 372× the B200's 7.7 TB/s; one
``vectorized_gather_kernel`` under ``aten::gather``, 315,141,120 bytes in 4.576 µs, 68.9
TB/s (9×). Each is noted and not placed on the chart; the rotary embedding's 9.36 TB/s
(1.2×, within the margin) is not."""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path

import pytest

from explorer.chart.profile_marks import placed
from explorer.core.analysis.profile_match import ROOF_MARGIN, beyond_roof, beyond_roofs
from explorer.profiles.reading import read_profile

TL = Path(__file__).resolve().parents[1] / "data" / "third_party" / "TraceLens"
B200_TRACE = TL / "b200-eager-trace.json.gz"


@pytest.fixture(scope="module")
def b200_trace():
    return read_profile(B200_TRACE)


def test_an_estimate_beyond_the_memory_s_roof_is_noted(b200_trace, catalog):
    b200 = catalog["b200"]
    assert b200.bandwidth_bytes_per_s == 7.7e12 and "bytes" in b200_trace.estimated
    found = {k.name.split("<")[0]: (k, note) for k, note in beyond_roofs(b200_trace, b200)}
    assert set(found) == {"void vllm::reshape_and_cache_flash_kernel",
                          "void at::native::vectorized_gather_kernel"}
    cache, note = found["void vllm::reshape_and_cache_flash_kernel"]
    assert cache.bytes["dram"] == 466_022_778_912 and cache.time_s == pytest.approx(162.686e-6)
    assert cache.launches == 36
    assert "its estimate from shapes, 466 GB in 163 µs, 2.86 PB/s, 372× the 7.7 TB/s of its memory" in note
    assert note.endswith("is beyond the device's roof: not a measurement, not placed on the chart")
    rotary = next(k for k in b200_trace.folded(0.0, by_shape=True) if "rotary_embedding" in k.name)
    assert 1 < rotary.bytes["dram"] / rotary.time_s / 7.7e12 < ROOF_MARGIN
    assert beyond_roof(rotary, b200, b200_trace.estimated) == ""
    assert beyond_roofs(b200_trace, None) == ()
    # counted bytes (an Nsight Compute profile) are the device's own: not judged
    assert beyond_roof(cache, b200, "") == ""


def test_the_profile_command_notes_it(b200_trace):
    from explorer.commands import main as cli

    out, err = io.StringIO(), io.StringIO()
    assert cli.run(cli.parse_args(["profile", str(B200_TRACE), "--hardware", "b200"]), out, err) == 0
    assert "note: void vllm::reshape_and_cache_flash_kernel" in out.getvalue()
    out = io.StringIO()
    argv = ["profile", str(B200_TRACE), "--hardware", "b200", "--json"]
    assert cli.run(cli.parse_args(argv), out, err) == 0
    assert len(json.loads(out.getvalue())["beyond_roof"]) == 2
    out = io.StringIO()
    assert cli.run(cli.parse_args(["profile", str(B200_TRACE)]), out, err) == 0
    assert "beyond the device's roof" not in out.getvalue()  # no device, no roof


def test_a_product_beyond_the_compute_roof_is_not_placed(b200_trace, catalog):
    """The trace's own products are within the roofs; the 36 products of shape 2,880 × 640
    (``nvjet_tst_64x64…``, bf16, 2 × 888 × 2,880 × 640 FLOPs each) with their FLOPs and
    bytes scaled up 1,000× (the trace scaled here, those two fields) are beyond both roofs."""
    b200 = catalog["b200"]
    shape = (2880, 640)
    assert not any(k.shape == shape for k, _ in beyond_roofs(b200_trace, b200))
    scaled = dataclasses.replace(b200_trace, kernels=tuple(
        dataclasses.replace(k, flops={p: f * 1000 for p, f in k.flops.items()},
                            bytes={level: b * 1000 for level, b in k.bytes.items()})
        if k.shape == shape else k for k in b200_trace.kernels))
    assert shape in {k.shape for k in placed(b200_trace, b200)}
    assert shape not in {k.shape for k in placed(scaled, b200)}
    assert shape in {k.shape for k in placed(scaled)}  # without a device, no roof to judge by
    (fast, note), = ((k, n) for k, n in beyond_roofs(scaled, b200) if k.shape == shape)
    assert fast.flops == {"bf16": 1000 * 36 * 2 * 888 * 2880 * 640}
    assert "TB/s of its memory" in note
    assert f"{fast.flops_per_s / b200.peak('bf16').flops_per_s:,.0f}× its" in note
