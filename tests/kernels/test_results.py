"""Results files: round trip, validation like the catalogue, and empirical ceilings."""

import json

import pytest

from explorer.core.files.datafile import DataFileError
from explorer.kernels.results import Point, Results, load_results


def point(**overrides):
    base = dict(suite="stream", kernel="triad", dtype="fp32", size={"n": 1000}, param={},
                flops=2000, bytes=12000, time_median_s=1e-6, time_p20_s=0.9e-6,
                time_p80_s=1.2e-6)
    return Point(**{**base, **overrides})


def results(*points, **overrides):
    base = dict(machine={"backend": "numpy"}, timer="perf_counter_ns", preset="quick",
                suites=("quick",), points=points)
    return Results(**{**base, **overrides})


def test_round_trip(tmp_path):
    original = results(point(), point(suite="gemm", kernel="square", flops=2 * 64**3,
                                      bytes=3 * 64 * 64 * 4, param={}, check=None),
                       skipped=({"suite": "gemm", "kernel": "square", "dtype": "bf16",
                                 "reason": "no bfloat16"},), notes=("a note",), cancelled=True)
    path = tmp_path / "r.json"
    original.save(path)
    assert load_results(path) == original
    doc = json.loads(path.read_text())
    assert doc["schema"] == 4
    p = doc["points"][0]
    assert p["intensity"] == pytest.approx(2000 / 12000)
    assert p["flops_per_s"] == pytest.approx(2e9) and p["bytes_per_s"] == pytest.approx(1.2e10)
    assert doc["ceilings"]["bandwidth"]["value"] == pytest.approx(1.2e10)


def test_ceilings_ignore_suspect_and_failed_points():
    good = point(time_median_s=2e-6, time_p20_s=1e-6, time_p80_s=3e-6)
    fast_but_cached = point(time_median_s=1e-9, time_p20_s=1e-9, time_p80_s=1e-9,
                            suspect="3× the main-memory bandwidth")
    wrong = point(time_median_s=1e-7, time_p20_s=1e-7, time_p80_s=1e-7, check="relative error 1")
    gemm = point(suite="gemm", kernel="square", dtype="fp32", flops=10**9, bytes=10**6,
                 time_median_s=1e-3, time_p20_s=1e-3, time_p80_s=1e-3)
    r = results(good, fast_but_cached, wrong, gemm)
    assert r.best_bandwidth().value == pytest.approx(6e9)
    assert r.best_flops()["fp32"].value == pytest.approx(1e12)
    assert set(r.best_flops()) == {"fp32"}


def write(tmp_path, doc):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
    return path


def valid_doc(tmp_path):
    path = tmp_path / "v.json"
    results(point()).save(path)
    return json.loads(path.read_text())


@pytest.mark.parametrize(
    ("mutate", "field", "message"),
    [
        (lambda d: d["points"][0].pop("flops"), "flops", "is missing"),
        (lambda d: d["points"][0].__setitem__("bytes", 0), "bytes", "must be positive"),
        (lambda d: d["points"][0].__setitem__("time_median_s", float("nan")), "time_median_s",
         "finite"),
        (lambda d: d["points"][0].__setitem__("time_p20_s", 5.0), "time_median_s",
         "between time_p20_s and time_p80_s"),
        (lambda d: d["points"][0].__setitem__("flops_per_s", 1.0), "flops_per_s",
         "the point's flops, bytes and time give"),
        (lambda d: d["points"][0].__setitem__("size", {"n": -1}), "size.n", "whole number >= 0"),
        (lambda d: d["points"][0].__setitem__("colour", "red"), "colour", "not a known field"),
        (lambda d: d.__setitem__("schema", 9), "schema", "reads schema 4"),
    ],
)
def test_broken_results_name_the_point_and_field(tmp_path, mutate, field, message):
    doc = valid_doc(tmp_path)
    mutate(doc)
    path = write(tmp_path, doc)
    with pytest.raises(DataFileError) as info:
        load_results(path)
    assert info.value.field == field
    assert message in str(info.value)
    assert str(path) in str(info.value)
    if field not in ("schema",):
        assert info.value.entry == "point #1"


def test_not_json(tmp_path):
    with pytest.raises(DataFileError, match="not valid JSON"):
        load_results(write(tmp_path, "{points: ["))
    with pytest.raises(DataFileError, match="cannot be read"):
        load_results(tmp_path / "missing.json")


def test_save_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "r.json"
    results(point()).save(path)
    before = path.read_text()

    def fail(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr("os.replace", fail)
    with pytest.raises(OSError):
        results(point(), point()).save(path)
    assert path.read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temporary file left


@pytest.mark.parametrize(
    ("mutate", "field", "message"),
    [
        (lambda d: d.__setitem__("points", 3), "points", "expected a list of measured points"),
        (lambda d: d.__setitem__("suites", "stream"), "suites", "expected a list of text"),
        (lambda d: d.__setitem__("notes", [1, 2]), "notes", "expected a list of text"),
        (lambda d: d.__setitem__("skipped", [{"suite": "gemm"}]), "kernel", "is missing"),
    ],
)
def test_broken_top_level_fields(tmp_path, mutate, field, message):
    doc = valid_doc(tmp_path)
    mutate(doc)
    with pytest.raises(DataFileError) as info:
        load_results(write(tmp_path, doc))
    assert info.value.field == field and message in str(info.value)


def test_a_key_written_twice_is_refused_as_in_the_yaml_files(tmp_path):
    """JSON keeps the last of two equal keys silently; a results file that says ``"flops"``
    twice is ambiguous, so it is refused with the key named."""
    path = tmp_path / "r.json"
    results(point()).save(path)
    text = path.read_text().replace('"flops": 2000,', '"flops": 2000, "flops": 4000,', 1)
    path.write_text(text)
    with pytest.raises(DataFileError, match="the key 'flops' is written twice in one object"):
        load_results(path)


BIG = 10**400 - 1  # 400 digits: JSON reads it (its limit is 4,300), no float holds it


@pytest.mark.parametrize(("field", "value", "message"), [
    ("time_median_s", BIG, f"is too large for a number: {'9' * 20}… (400 digits)"),
    ("power_w", BIG, f"is too large for a number: {'9' * 20}… (400 digits)"),
    ("foreign_load", BIG, f"is too large for a number: {'9' * 20}… (400 digits)"),
    ("intensity", BIG, f"is too large for a number: {'9' * 20}… (400 digits)"),
    ("flops", BIG, "must be at most 18,446,744,073,709,551,615, got 999"),
    ("bytes", BIG, "must be at most 18,446,744,073,709,551,615, got 999"),
    ("size", {"n": BIG}, "must be at most 18,446,744,073,709,551,615, got 999"),
])
def test_a_number_no_float_holds_names_the_file_and_field(tmp_path, field, value, message):
    doc = valid_doc(tmp_path)
    doc["points"][0][field] = value
    path = write(tmp_path, doc)
    with pytest.raises(DataFileError) as info:
        load_results(path)
    assert info.value.file == str(path) and info.value.entry == "point #1"
    assert info.value.field == (field if field != "size" else "size.n") and message in info.value.reason


def test_a_time_too_short_for_its_counts_is_refused(tmp_path):
    """1e-320 s is a positive float, but the point's rate would be infinite."""
    doc = valid_doc(tmp_path)
    for key in ("time_median_s", "time_p20_s", "time_p80_s"):
        doc["points"][0][key] = 1e-320
    for key in ("intensity", "flops_per_s", "bytes_per_s"):
        doc["points"][0].pop(key, None)
    path = write(tmp_path, doc)
    with pytest.raises(DataFileError) as info:
        load_results(path)
    assert info.value.field == "time_median_s" and "is too short for the point's counts" in info.value.reason


def test_commands_name_a_results_file_with_a_huge_integer(tmp_path):
    """calibrate --results refuses it by name; a session's export skips it and says why."""
    from tests.cli.test_cli import run
    doc = valid_doc(tmp_path)
    doc["points"][0]["power_w"] = BIG
    path = write(tmp_path, doc)
    code, _, err = run("calibrate", "--results", str(path), "--out", str(tmp_path / "p.yaml"))
    assert code == 1 and "Traceback" not in err
    assert f"{path}: entry 'point #1': field 'power_w': is too large for a number" in err
    (tmp_path / "s.yaml").write_text("schema: 1\nhardware: [h100-sxm]\nworkload: {model: gpt2}\n"
                                     "results: [r.json]\n")
    code, _, err = run("export", "--session", str(tmp_path / "s.yaml"), "--out", str(tmp_path / "x.svg"))
    assert code == 0 and (tmp_path / "x.svg").is_file()
    assert "1 of your results files could not be loaded: r.json, entry point #1, field power_w: is too " \
           "large for a number" in err


def test_a_schema_3_file_reads_its_powers_without_their_uncertainty(tmp_path):
    """Schema 4 adds each power's uncertainty (the energy counter's step over its window)."""
    path = tmp_path / "r.json"
    results(point(power_w=300.0, power_uncertainty_w=30.0)).save(path)
    assert load_results(path).points[0].power_uncertainty_w == 30.0
    doc = json.loads(path.read_text())
    doc["schema"] = 3
    del doc["points"][0]["power_uncertainty_w"]
    path.write_text(json.dumps(doc))
    (old,) = load_results(path).points
    assert old.power_w == 300.0 and old.power_uncertainty_w is None
