"""Limits checked when a file loads, each naming its field, so that whatever loads analyses
in milliseconds and nothing exhausts memory: layer repeats, widths, stack length, results
files, file size, YAML aliases and nesting."""

import pytest

from explorer.core.files.datafile import MAX_FILE_BYTES, DataFileError
from explorer.core.files.yamltext import MAX_VALUES
from explorer.core.model import custom
from explorer.core.model.session import MAX_RESULTS_FILES, Session, load_session
from explorer.core.model.workload import MAX_BATCH, WorkloadError, WorkloadParams
from explorer.document import Document
from explorer.kernels.results import load_results
from tests.timeouts import no_hang


def session_with(tmp_path, workload: str, extra: str = ""):
    path = tmp_path / "s.yaml"
    path.write_text(f"schema: 1\nhardware: [h100-sxm]\nworkload:\n  model: custom\n  {workload}\n{extra}")
    return path


@pytest.mark.parametrize(("layers", "field", "message"), [
    ("[{kind: mlp, d_model: 256, width: 1024, repeat: 30000000}]", "workload.layers[0].repeat",
     "must be at most 10,000, got 30000000"),
    ("[{kind: mlp, d_model: 256, width: 1024, repeat: 4000000000000000000}]", "workload.layers[0].repeat",
     "must be at most 10,000"),
    ("[{kind: mlp, d_model: 256, width: 1000000000000000}]", "workload.layers[0].width",
     "width must be at most 16,777,216"),
    ("[" + ", ".join(["{kind: norm, d: 8}"] * 1001) + "]", "workload.layers",
     "has 1,001 entries; a stack holds at most 1,000"),
    ("[" + ", ".join(["{kind: norm, d: 8, repeat: 10000}"] * 11) + "]", "workload.layers[10].repeat",
     "brings the stack to 110,000 layers; at most 100,000"),
])
def test_a_stack_too_large_is_refused_with_its_field(tmp_path, catalog, models, layers, field, message):
    path = session_with(tmp_path, f"layers: {layers}")
    with pytest.raises(DataFileError) as caught:
        load_session(path, set(catalog), set(models))
    assert caught.value.field == field and message in caught.value.reason


def test_too_many_results_files_are_refused(tmp_path, catalog, models):
    files = ", ".join(f"r{i}.json" for i in range(MAX_RESULTS_FILES + 1))
    path = tmp_path / "s.yaml"
    path.write_text(f"schema: 1\nhardware: [h100-sxm]\nworkload: {{model: gpt2}}\nresults: [{files}]\n")
    with pytest.raises(DataFileError, match=f"at most {MAX_RESULTS_FILES} results files") as caught:
        load_session(path, set(catalog), set(models))
    assert caught.value.field == "results"


def test_a_file_too_large_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("schema: 1\n" + "#" * MAX_FILE_BYTES)
    with pytest.raises(DataFileError, match="files over 4 MB are refused"):
        load_session(path)


def test_an_alias_bomb_and_deep_nesting_are_refused(tmp_path):
    path = tmp_path / "s.yaml"
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 12)]
    path.write_text("\n".join(lines) + "\n")
    with no_hang(5.0), pytest.raises(DataFileError, match=f"expand it to more than {MAX_VALUES:,} values"):
        load_session(path)
    path.write_text("schema: " + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(DataFileError, match="exceeded maximum nesting depth"):  # LibYAML refuses it
        load_session(path)
    results = tmp_path / "r.json"
    results.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(DataFileError, match="nests too deeply"):
        load_results(results)


def test_the_largest_accepted_stack_analyses_without_hanging(catalog, models):
    big = custom.MAX_COUNT
    layers = [custom.Layer("mlp", (("d_model", 8192), ("width", 32768)), repeat=custom.MAX_REPEAT)
              for _ in range(custom.MAX_LAYERS // custom.MAX_REPEAT)]
    layers[0] = custom.Layer("embedding", (("vocab", big), ("d", big)), repeat=custom.MAX_REPEAT)
    session = Session(model="custom", params=WorkloadParams(phase="prefill", batch=MAX_BATCH, seq=4096),
                      custom_layers=tuple(layers))
    with no_hang(5.0):
        try:
            totals = Document(catalog, models, session).analysis().totals
        except WorkloadError as exc:  # too large to count: said, not crashed
            assert "too large" in str(exc)
        else:
            assert totals.flops > 0
    assert len(layers) == 10


def test_aliases_under_any_count_limit_that_expand_a_model_config_are_refused(tmp_path, catalog, models):
    """80 aliases eight levels deep inside a session's model config (1.4 GB once serialised)
    and a value that holds itself are refused when the file is read, naming the file."""
    lines = ["a0: &a0 [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    path = tmp_path / "s.yaml"
    path.write_text("\n".join(["schema: 1", "hardware: [h100-sxm]",
                               "workload:", "  model: config", "  model_config:",
                               *("    " + line for line in lines)]) + "\n")
    with no_hang(5.0), pytest.raises(DataFileError, match="expand it to more than") as caught:
        load_session(path, set(catalog), set(models))
    assert caught.value.file == str(path)
    path.write_text("schema: 1\nhardware: [h100-sxm]\n"
                    "workload: {model: config, model_config: {loop: &r [*r]}}\n")
    with no_hang(5.0), pytest.raises(DataFileError, match="an alias on line 3 refers to a value "
                                                          "that contains it"):
        load_session(path, set(catalog), set(models))
    mapping = tmp_path / "m.yaml"  # a mapping that holds itself, through a merge key too
    mapping.write_text("a: &m {b: *m}\n")
    with pytest.raises(DataFileError, match="refers to a value that contains it"):
        load_session(mapping)


def test_shared_aliases_that_stay_small_still_load(tmp_path):
    from explorer.core.files.datafile import load_yaml
    path = tmp_path / "ok.yaml"
    path.write_text("base: &b {x: 1, y: [1, 2]}\none: *b\ntwo: {<<: *b, z: 3}\n")
    assert load_yaml(path) == {"base": {"x": 1, "y": [1, 2]}, "one": {"x": 1, "y": [1, 2]},
                               "two": {"x": 1, "y": [1, 2], "z": 3}}


def test_an_error_about_a_structure_built_of_aliases_stays_short(tmp_path, catalog, models):
    """A structure built of aliases that stays under the expansion limit is named briefly
    in a message: a few of its items, at once."""
    lines = ["a0: &a0 [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 5)]
    path = tmp_path / "s.yaml"
    path.write_text("\n".join(["schema: 1", "hardware: [h100-sxm]", "anchors:",
                               *("  " + line for line in lines),
                               "workload: {model: custom, layers: [{kind: norm, d: *a4}]}"]) + "\n")
    with no_hang(5.0), pytest.raises(DataFileError) as caught:
        load_session(path, set(catalog), set(models))
    assert "d must be a whole number >= 1, got [[[[...], [...]," in str(caught.value)
    assert len(str(caught.value)) < 400
