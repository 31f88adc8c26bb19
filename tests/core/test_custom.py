"""Custom layer stacks: costed with the same formulas as the presets."""

import pytest

from explorer.core.analysis.analysis import analyze
from explorer.core.files.datafile import DataFileError
from explorer.core.model.custom import CustomSpec, Layer
from explorer.core.model.session import load_workload
from explorer.core.model.step_ops import build_ops
from explorer.core.model.workload import WorkloadError, WorkloadParams


def llama2_7b_as_a_stack(layers: int = 32) -> CustomSpec:
    d, residual = 4096, Layer("elementwise", (("width", 4096), ("inputs", 2)), layers)
    return CustomSpec((
        Layer("embedding", (("vocab", 32000), ("d", d))),
        Layer("norm", (("d", d),), layers),
        Layer("attention", (("d_model", d), ("heads", 32), ("kv_heads", 32)), layers),
        residual,
        Layer("norm", (("d", d),), layers),
        Layer("mlp", (("d_model", d), ("width", 11008)), layers),
        residual,
        Layer("norm", (("d", d),)),
        Layer("linear", (("d_in", d), ("d_out", 32000), ("role", "lm_head"))),
    ))


def test_a_stack_rebuilding_llama2_7b_costs_the_same_as_the_preset(models, catalog):
    stack, preset = llama2_7b_as_a_stack(), models["llama-2-7b"]
    assert stack.parameter_count() == preset.parameter_count() == 6_738_415_616
    assert stack.kv_values_per_token() == preset.kv_values_per_token()
    params = WorkloadParams(phase="decode", batch=4, context=2048)
    ours = analyze(stack, params, catalog["h100-sxm"]).totals
    theirs = analyze(preset, params, catalog["h100-sxm"]).totals
    for field in ("flops", "bytes", "kv_cache_bytes", "weight_bytes"):
        assert getattr(ours, field) == getattr(theirs, field), field
    assert ours.time_s == pytest.approx(theirs.time_s)


def test_repeat_lists_one_op_per_layer(catalog):
    stack = CustomSpec((Layer("linear", (("d_in", 512), ("d_out", 512)), 3),))
    rows = analyze(stack, WorkloadParams(batch=2), catalog["t4"]).rows
    assert list(rows.layers) == [0, 1, 2]
    assert all(f == 2 * 2 * 512 * 512 for f in rows.flops)


def test_a_conv_stack_counts_images(catalog):
    stack = CustomSpec((Layer("conv2d", (("image", 32), ("c_in", 3), ("c_out", 16))),))
    t = analyze(stack, WorkloadParams(batch=8), catalog["l4"]).totals
    assert t.item_unit == "images" and t.items_per_step == 8
    assert t.flops == 2 * 8 * 32 * 32 * 16 * 3 * 9


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(kind="lstm"), "unknown layer kind 'lstm'"),
        (dict(kind="linear", values=(("d_in", 0),)), "d_in must be a whole number >= 1"),
        (dict(kind="linear", values=(("width", 4),)), "linear has no field 'width'"),
        (dict(kind="attention", values=(("heads", 3),)), "not divisible by 3 heads"),
        (dict(kind="mlp", values=(("activation", "relu6"),)), "activation must be one of silu, gelu"),
        (dict(kind="norm", repeat=0), "repeat must be a whole number >= 1"),
    ],
)
def test_invalid_layers(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Layer(**kwargs)


def test_an_empty_stack_is_a_clear_error():
    with pytest.raises(WorkloadError, match="no layers"):
        build_ops(CustomSpec(()), WorkloadParams())


def test_workload_file_with_a_custom_stack(tmp_path):
    path = tmp_path / "w.yaml"
    path.write_text("""schema: 1
workload:
  model: custom
  batch: 2
  layers:
  - {kind: linear, d_in: 1024, d_out: 4096, repeat: 4}
  - {kind: norm, d: 4096, kind_: x}
""")
    with pytest.raises(DataFileError) as info:
        load_workload(path)
    assert info.value.field == "workload.layers[1].kind_"
    path.write_text(path.read_text().replace(", kind_: x", ""))
    model, params, layers, _config = load_workload(path)
    assert model == "custom" and params.batch == 2 and layers[0].repeat == 4
    assert CustomSpec(layers).parameter_count() == 4 * 1024 * 4096 + 4096
