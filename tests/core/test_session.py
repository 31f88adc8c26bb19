"""Sessions: what-ifs, round trip through YAML, validation of broken files."""

import pytest
import yaml

from explorer.core.files.datafile import DataFileError
from explorer.core.model.session import Session, WhatIf, load_session
from explorer.core.model.workload import WorkloadParams


def test_what_if_scales_roofs_and_marks_them(catalog):
    h100 = catalog["h100-sxm"]
    changed = WhatIf(bandwidth_scale=2.0).with_peak_scale("bf16 matrix", 0.5).apply(h100)
    assert changed.bandwidth_bytes_per_s == pytest.approx(6.7e12)
    assert changed.peak_flops("bf16") == pytest.approx(494.7e12)
    assert changed.peak_flops("fp8") == pytest.approx(1978.9e12)  # untouched
    assert changed.main_memory.provenance.derived and "what-if" in changed.main_memory.provenance.formula
    assert changed.ridge_point("bf16") == pytest.approx(494.7e12 / 6.7e12)
    assert WhatIf().apply(h100) is h100
    with pytest.raises(ValueError, match=r"between 0\.001 and 1000"):
        WhatIf(bandwidth_scale=0.0)


def test_session_rules():
    with pytest.raises(ValueError, match="at most 4"):
        Session(hardware=("t4", "l4", "h100-sxm", "h200-sxm", "b200"))
    with pytest.raises(ValueError, match="listed twice"):
        Session(hardware=("t4", "t4"))
    s = Session().with_what_if("h100-sxm", WhatIf(bandwidth_scale=1.5))
    assert s.what_if("h100-sxm").bandwidth_scale == 1.5
    assert s.with_what_if("h100-sxm", WhatIf()).what_ifs == ()  # reset leaves nothing behind


def test_round_trip(tmp_path, catalog, models):
    session = Session(
        hardware=("h200-sxm", "xeon-platinum-8480"), model="llama-3-70b",
        params=WorkloadParams(phase="prefill", batch=4, seq=2048, dtype="fp8", kv_dtype="fp16",
                              attention="naive", memory_fraction=0.85),
        what_ifs=(("h200-sxm", WhatIf(1.25, (("fp8 matrix", 0.8),))),),
        precisions=("fp8", "fp32"), results=("/tmp/r.json",), measured_roofs=True,
        selected_op="q_proj")
    path = tmp_path / "s.yaml"
    session.save(path)
    assert load_session(path, set(catalog), set(models)) == session
    assert yaml.safe_load(path.read_text())["what_if"]["h200-sxm"]["peak_scale"] == {"fp8 matrix": 0.8}
    assert yaml.safe_load(path.read_text())["workload"]["memory_fraction"] == 0.85
    # The default share is left out of the file, and a file without one reads it back.
    Session().save(path)
    assert "memory_fraction" not in path.read_text()
    assert load_session(path).params.memory_fraction == 0.9


@pytest.mark.parametrize(
    ("text", "field", "message"),
    [
        ("schema: 1\nhardware: [h100]\nworkload: {model: gpt2}\n", "hardware", "unknown id 'h100'"),
        ("schema: 1\nhardware: [t4]\nworkload: {model: gpt-5}\n", "workload.model", "unknown model"),
        ("schema: 1\nhardware: [t4]\nworkload: {model: gpt2, batch: 0}\n", "workload.batch",
         "must be positive"),
        ("schema: 1\nhardware: [t4]\nworkload: {model: gpt2, batch: 99999999}\n", "workload.batch",
         "at most"),
        ("schema: 1\nhardware: [t4]\nworkload: {model: gpt2, dtype: fp7}\n", "workload.dtype",
         "expected one of"),
        ("schema: 1\nhardware: [t4]\nworkload: {model: gpt2}\nwhat_if: {t4: {bandwidth_scale: -1}}\n",
         "what_if.t4.bandwidth_scale", "must be positive"),
        ("schema: 1\nhardware: [t4]\nworkload: {model: gpt2}\nwhat_if: {t4: {peak_scale: {x: 5000.0}}}\n",
         "what_if.t4.peak_scale", "between"),
        # 400 digits: YAML reads the integer, no float holds it (once an OverflowError)
        ("schema: 1\nhardware: [t4]\nworkload: {model: gpt2}\nwhat_if: {t4: {peak_scale: {x: " + "9" * 400
         + "}}}\n", "what_if.t4.peak_scale", "peak_scale of x must be between 0.001 and 1000, got 999"),
        ("schema: 1\nhardware: [t4]\nworkload: {model: gpt2}\nwhat_if: {t4: {bandwidth_scale: " + "9" * 400
         + "}}\n", "what_if.t4.bandwidth_scale", "is too large for a number: "
         + "9" * 20 + "… (400 digits)"),
        ("schema: 1\nhardware: [t4, l4, h100-sxm, h200-sxm, b200]\nworkload: {model: gpt2}\n",
         "hardware", "at most 4"),
        ("schema: 1\nhardware: [t4]\nworkload: {model: gpt2}\ncolour: red\n", "colour",
         "not a known field"),
        ("schema: 1\nhardware: [t4]\nworkload: {model: gpt2, memory_fraction: 1.5}\n",
         "workload.memory_fraction", "between 0.05 and 1"),
    ],
)
def test_broken_sessions_name_the_field(tmp_path, catalog, models, text, field, message):
    path = tmp_path / "broken.yaml"
    path.write_text(text)
    with pytest.raises(DataFileError) as info:
        load_session(path, set(catalog), set(models))
    assert info.value.field == field
    assert message in str(info.value) and str(path) in str(info.value)


def test_a_custom_stack_round_trips(tmp_path, catalog, models):
    from explorer.core.model.custom import Layer

    layers = (Layer("attention", (("d_model", 1024), ("heads", 16), ("kv_heads", 4)), 12),
              Layer("mlp", (("d_model", 1024), ("width", 4096), ("gated", False),
                            ("activation", "gelu")), 12))
    session = Session(model="custom", custom_layers=layers)
    path = tmp_path / "custom.yaml"
    session.save(path)
    loaded = load_session(path, set(catalog), set(models))
    assert loaded == session and loaded.model_spec.parameter_count() == session.model_spec.parameter_count()
    path.write_text(path.read_text().replace("  layers:", "  layerz:"))
    with pytest.raises(DataFileError, match="layers"):
        load_session(path, set(catalog), set(models))


def test_a_bandwidth_only_what_if_round_trips(tmp_path, catalog, models):
    session = Session(what_ifs=(("h100-sxm", WhatIf(bandwidth_scale=0.5)),))
    path = tmp_path / "s.yaml"
    session.save(path)
    assert load_session(path, catalog, set(models)) == session


def test_an_error_names_a_value_without_echoing_the_whole_file(catalog, models, tmp_path):
    from explorer.core.files.datafile import DataFileError
    from explorer.core.model.session import load_session

    path = tmp_path / "huge.yaml"
    path.write_text("x" * 50_000 + "\n")
    with pytest.raises(DataFileError) as caught:
        load_session(path, catalog, models)
    message = str(caught.value)
    assert "expected a mapping" in message and "(50,002 characters)" in message and len(message) < 300


def test_a_huge_selected_op_is_refused_with_a_short_message(catalog, models, tmp_path):
    from explorer.core.files.datafile import DataFileError
    from explorer.core.model.session import load_session

    path = tmp_path / "s.yaml"
    huge = "q" * 100_000
    path.write_text(f"schema: 1\nhardware: [h100-sxm]\nworkload: {{model: gpt2}}\nselected_op: {huge}\n")
    with pytest.raises(DataFileError, match="at most 200 characters"):
        load_session(path, catalog, models)


@pytest.mark.parametrize("cut", [1, 6, 30])
def test_a_session_cut_short_is_refused_not_read_with_changed_values(tmp_path, catalog, models, cut):
    """The app's own files end with '# end': a copy that stopped halfway (here ``seq: 512``
    at the end of the workload, cut to ``seq: 5``) is refused with the reason."""
    session = Session(model="gpt2", params=WorkloadParams(seq=512))
    path = tmp_path / "s.yaml"
    session.save(path)
    text = path.read_text()
    assert text.startswith("# Roofline Explorer session") and text.endswith("\n# end\n")
    assert load_session(path, set(catalog), set(models)) == session
    path.write_text(text[:-cut])
    if cut == 1:  # only the final newline is gone: the file is whole
        assert load_session(path, set(catalog), set(models)) == session
        return
    with pytest.raises(DataFileError, match="was cut short: the app wrote it with '# end'"):
        load_session(path, set(catalog), set(models))


def test_a_hand_written_session_needs_no_end_line(tmp_path, catalog, models):
    path = tmp_path / "s.yaml"
    path.write_text("schema: 1\nhardware: [h100-sxm]\nworkload: {model: gpt2, seq: 5}\n")
    assert load_session(path, set(catalog), set(models)).params.seq == 5
