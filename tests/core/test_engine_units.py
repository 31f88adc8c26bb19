"""Which unit a CPU engine's products run on (explorer/core/analysis/engine_units.py,
resources/efficiency/engine-units.yaml): the expected time follows the engine's unit, the
bound keeps the device's best one."""

import pytest

from explorer.core.analysis.analysis import analyze
from explorer.core.analysis.engine_terms import FitClass, classes
from explorer.core.analysis.engine_units import MATRIX, VECTOR, product_peak, read_units
from explorer.core.analysis.expected import expected, products_peak
from explorer.core.files.datafile import DataFileError
from explorer.core.hardware.efficiency import efficiency_for, published
from explorer.core.model import ops as op
from explorer.core.model.workload import WorkloadParams

PRODUCTS = (op.Role.QKV_PROJ, op.Role.O_PROJ, op.Role.GATE_PROJ, op.Role.UP_PROJ, op.Role.DOWN_PROJ)


def test_every_engine_entry_is_sourced_and_names_an_engine_the_app_offers():
    from explorer.core.model.parameters import ENGINES

    table = read_units()
    assert {"llama.cpp", "ik-llama.cpp", "itrex"} <= set(table.engines) <= set(ENGINES)
    for entry in table.engines.values():
        assert entry.source.startswith("https://") and entry.quote and entry.rules


def test_ggml_runs_int8_products_on_avx512_vnni_of_an_amx_xeon(catalog):
    """The Xeon 8480 lists int8 only on AMX (56 cores × 2,048 ops a cycle × 3.8 GHz =
    435.8 TOP/s); llama.cpp's products run on AVX-512 VNNI, 256 ops a cycle a core:
    56 × 256 × 3.8 GHz = 54.4768 TOP/s. The bound's roof stays AMX's."""
    xeon = catalog["xeon-platinum-8480"]
    amx = xeon.peak("int8", MATRIX)
    assert amx is not None and amx.flops_per_s == pytest.approx(435.8144e12)
    vnni = product_peak(xeon, amx, "llama.cpp", 32)
    assert vnni.unit == VECTOR and vnni.precision == "int8"
    assert vnni.flops_per_s == pytest.approx(56 * 256 * 3.8e9)
    assert product_peak(xeon, amx, "ik-llama.cpp", 32).flops_per_s == pytest.approx(56 * 256 * 3.8e9)
    # no rule: the best unit, as the bound
    assert product_peak(xeon, amx, "typical", 32) is amx


def test_intels_llm_runtime_uses_amx_int8_only_with_groups_of_128(catalog):
    """ITREX's kernel notes: "AMX_INT8 requires group size is aligend to 128"."""
    xeon = catalog["xeon-platinum-8480"]
    amx = xeon.peak("int8", MATRIX)
    assert product_peak(xeon, amx, "itrex", 128) is amx
    assert product_peak(xeon, amx, "itrex", 4096) is amx  # a multiple of 128
    assert product_peak(xeon, amx, "itrex", 32).flops_per_s == pytest.approx(56 * 256 * 3.8e9)
    bf16 = xeon.peak("bf16", MATRIX)
    assert product_peak(xeon, bf16, "itrex", 32) is bf16  # AMX_BF16


def test_a_precision_without_a_vector_peak_or_share_takes_the_next_vector_tier(catalog):
    """llama.cpp's bf16 products on the Xeon 8480 (no bf16 vector peak listed, no share):
    the fp16 vector peak, 56 × 2 × 32 lanes × 2 × 3.8 GHz = 27.2384 TFLOP/s."""
    xeon = catalog["xeon-platinum-8480"]
    peak = product_peak(xeon, xeon.peak("bf16", MATRIX), "llama.cpp", 128)
    assert (peak.precision, peak.unit) == ("fp16", VECTOR)
    assert peak.flops_per_s == pytest.approx(27.2384e12)


def test_devices_without_matrix_units_and_gpus_keep_their_roof(catalog):
    ryzen = catalog["ryzen-9-7950x"]
    int8 = ryzen.peak("int8")
    assert product_peak(ryzen, int8, "llama.cpp", 32) is int8
    h100 = catalog["h100-sxm"]
    bf16 = h100.peak("bf16", MATRIX)
    assert product_peak(h100, bf16, "llama.cpp", 128) is bf16


def test_the_expected_time_follows_the_engines_unit_and_the_bound_does_not(models, catalog):
    """Llama 2 7B, a 1,024-token prompt, int4 weights in groups of 32 and int8 compute on the
    Xeon 8480: the bound is the same for every engine (AMX); llama.cpp's expected time runs
    the products at VNNI's eighth of AMX, so it is longer than typical's, and its products
    are int8 products on vector units for the fit."""
    xeon, model = catalog["xeon-platinum-8480"], models["llama-2-7b"]
    family = efficiency_for(xeon, published())
    base = dict(phase="prefill", seq=1024, dtype="int8", weight_dtype="int4", weight_group=32,
                weight_scale="fp16", kv_dtype="fp16")
    ggml = analyze(model, WorkloadParams(**base, engine="llama.cpp"), xeon)
    best = analyze(model, WorkloadParams(**base, engine="typical"), xeon)
    assert ggml.totals.time_s == best.totals.time_s
    assert products_peak(ggml).flops_per_s == pytest.approx(products_peak(best).flops_per_s / 8)
    slow, fast = expected(ggml, family), expected(best, family)
    assert ggml.totals.time_s <= fast.time_s < slow.time_s
    gemm = [c for o, c in zip(ggml.ops, classes(ggml), strict=True) if o.role in PRODUCTS]
    assert gemm and set(gemm) == {FitClass.QUANTIZED}
    # on AMX the same products' arithmetic is dense (their reading is weight-bound's, class_seconds)
    assert FitClass.DENSE in {c for o, c in zip(best.ops, classes(best), strict=True) if o.role in PRODUCTS}
    assert FitClass.QUANTIZED not in classes(best)


@pytest.mark.parametrize(("change", "message"), [
    ("share: 0.125", "share: 1.5"),
    ("unit: vector}", "unit: tiles}"),
])
def test_a_broken_table_is_refused(tmp_path, change, message):
    from pathlib import Path

    from explorer.paths import resource_path

    text = Path(resource_path("efficiency", "engine-units.yaml")).read_text(encoding="utf-8")
    assert change in text
    bad = tmp_path / "units.yaml"
    bad.write_text(text.replace(change, message, 1), encoding="utf-8")
    with pytest.raises(DataFileError):
        read_units(bad)


def test_the_report_names_the_peak_the_products_ran_at(models, catalog):
    """`analyze --json`'s efficiency.engine.products_peak: on the Xeon 8480 with llama.cpp,
    int8 on the vector units at 54.48 TOP/s from PyTorch's AMX recipe; on an H100, the
    bound's own roof."""
    from explorer.core.analysis.expected import expected_for
    from explorer.core.analysis.report import efficiency_dict

    params = WorkloadParams(phase="prefill", seq=512, dtype="int8", weight_dtype="int4", weight_group=32,
                            engine="llama.cpp")
    a = analyze(models["llama-2-7b"], params, catalog["xeon-platinum-8480"])
    peak = efficiency_dict(a, expected_for(a))["engine"]["products_peak"]
    assert (peak["precision"], peak["unit"], peak["same_as_bound"]) == ("int8", VECTOR, False)
    assert peak["flops_per_s"] == pytest.approx(54.4768e12)
    assert peak["source"] == "https://pytorch.org/tutorials/recipes/amx.html"
    h100 = analyze(models["llama-2-7b"], WorkloadParams(), catalog["h100-sxm"])
    assert efficiency_dict(h100, expected_for(h100))["engine"]["products_peak"]["same_as_bound"] is True
