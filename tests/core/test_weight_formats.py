"""4-bit weight formats: stored at 4 bits plus their share of the group scales, dequantised
to the compute precision, which sets the peak they run at."""

import pytest

from explorer.core.analysis.analysis import analyze
from explorer.core.model.session import Session, load_session
from explorer.core.model.step_ops import build_ops
from explorer.core.model.workload import WorkloadError, WorkloadParams


@pytest.mark.parametrize(("params", "bits"), [
    ({"weight_dtype": "int4"}, 4 + 16 / 128),  # GPTQ / AWQ: an fp16 scale per 128 values
    ({"weight_dtype": "fp4", "weight_group": 32, "weight_scale": "fp32"}, 4 + 32 / 32),
    ({"weight_dtype": "nvfp4", "weight_group": 7}, 4 + 8 / 16),  # its block is fixed: 16, fp8 scales
    ({"weight_dtype": "mxfp4"}, 4 + 8 / 32),  # OCP MX: an 8-bit scale per 32
    ({"weight_dtype": "int8"}, 8),
    # ggml's block_q8_0: an fp16 scale and 32 int8 values, 34 bytes a block
    ({"weight_dtype": "q8_0", "weight_group": 128, "weight_scale": "fp32"}, 34 * 8 / 32),
])
def test_bits_per_weight_include_the_scales(params, bits):
    assert WorkloadParams(**params).weight_bytes * 8 == pytest.approx(bits)


def test_int4_weights_are_read_at_their_size_and_computed_at_bf16(models, catalog):
    model, device = models["llama-3-8b"], catalog["h100-sxm"]
    params = WorkloadParams(weight_dtype="int4")
    [q_proj] = [o for o in build_ops(model, params) if o.name == "q_proj"]
    assert q_proj.weight_bytes == 4096 * 4096 * 0.515625
    a = analyze(model, params, device)
    assert a.roofs.matrix.precision == "bf16"  # dequantised: the bf16 matrix peak
    assert a.totals.weight_bytes == model.parameter_count() * 0.515625
    dense = analyze(model, WorkloadParams(), device)
    assert 3.5 < dense.totals.time_s / a.totals.time_s < 4  # decode reads ~a quarter of the bytes


def test_formats_are_saved_and_checked(tmp_path, catalog, models):
    session = Session(params=WorkloadParams(weight_dtype="fp4", weight_group=64, weight_scale="fp8"))
    session.save(tmp_path / "s.yaml")
    assert load_session(tmp_path / "s.yaml", set(catalog), set(models)) == session
    with pytest.raises(WorkloadError, match="weight_group must be at least 1"):
        WorkloadParams(weight_dtype="int4", weight_group=0)
    with pytest.raises(WorkloadError, match="dtype must be one of"):
        WorkloadParams(dtype="int4")  # a storage format, not a compute precision


def test_a_q8_0_decode_on_a_cpu_reads_its_blocks_and_multiplies_in_int8(models, catalog):
    """llama.cpp's Q8_0 weights (8.5 bits) times int8 activations: a token reads 34/32 of
    the int8 bytes of every linear layer, and the products run at the int8 peak."""
    model, device = models["llama-3-8b"], catalog["ryzen-9-7950x"]
    q8 = analyze(model, WorkloadParams(dtype="int8", weight_dtype="q8_0"), device)
    int8 = analyze(model, WorkloadParams(dtype="int8", weight_dtype="int8"), device)
    assert q8.roofs.matrix.precision == "int8"
    assert q8.totals.weight_bytes == pytest.approx(int8.totals.weight_bytes * 34 / 32)
    assert q8.totals.time_s / int8.totals.time_s == pytest.approx(34 / 32, rel=0.01)  # memory-bound
