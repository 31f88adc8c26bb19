"""Nsight Compute CSV exports in both layouts, written here with values known by
construction: scaled units, thousands separators, ncu's progress lines and an
application's output before the header, "n/a" cells; and every way a file can be wrong."""

import csv
import io
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.core.files.datafile import DataFileError
from explorer.core.model.profile import OTHER
from explorer.profiles import ncu
from tests.profiles.mutations import mutated
from tests.timeouts import no_block, no_hang

PREFACE = ["==PROF== Connected to process 1234 (/usr/bin/python3)", "training step 1 of 1",
           '==PROF== Profiling "triad_kernel" - 0: 0%....50%....100% - 9 passes']
CONTEXT = ["Process ID", "Process Name", "Host Name"]
# (ID, kernel, {metric: (unit, value as ncu prints it)}); the triad runs twice.
LAUNCHES = [
    ("0", "triad_kernel", {"gpu__time_duration.sum": ("usecond", "10.00"),
                           "dram__bytes_read.sum": ("Kbyte", "2,000.00"),
                           "dram__bytes_write.sum": ("Kbyte", "1,000.00"),
                           "lts__t_bytes.sum": ("Mbyte", "3.50"),
                           "sm__sass_thread_inst_executed_op_ffma_pred_on.sum": ("inst", "1,000,000")}),
    ("1", "hgemm_kernel", {"gpu__time_duration.sum": ("usecond", "2,500.00"),
                           "dram__bytes.sum": ("Mbyte", "64.00"),
                           "sm__sass_thread_inst_executed_op_hfma_pred_on.sum": ("Kinst", "1,000.00"),
                           "sm__sass_thread_inst_executed_op_hadd_pred_on.sum": ("inst", "10"),
                           "sm__inst_executed_pipe_tensor.sum": ("inst", "5,000")}),
    ("2", "triad_kernel", {"gpu__time_duration.sum": ("usecond", "12.00"),
                           "dram__bytes_read.sum": ("Kbyte", "2,000.00"),
                           "dram__bytes_write.sum": ("Kbyte", "1,000.00"),
                           "lts__t_bytes.sum": ("Mbyte", "3.50"),
                           "sm__sass_thread_inst_executed_op_ffma_pred_on.sum": ("inst", "1,000,000")}),
]


def _csv(rows) -> str:
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    return out.getvalue()


def raw_page() -> str:
    """--page raw: a column per metric, a units row (ncu scales a column's values to one unit)."""
    metrics = list(dict.fromkeys(m for _, _, values in LAUNCHES for m in values))
    units = {m: unit for _, _, values in LAUNCHES for m, (unit, _) in values.items()}
    rows = [["ID", *CONTEXT, "Kernel Name", *metrics], ["", "", "", "", "", *(units[m] for m in metrics)]]
    for ident, name, values in LAUNCHES:
        cells = [values.get(m, ("", "n/a"))[1] for m in metrics]
        rows.append([ident, "1234", "python3", "host", name, *cells])
    return "\n".join(PREFACE) + "\n" + _csv(rows) + "==PROF== Disconnected from process 1234\n"


def long_layout() -> str:
    """--page details / --metrics: one row per metric of each launch, each with its unit."""
    rows = [["ID", *CONTEXT, "Kernel Name", "Section Name", "Metric Name", "Metric Unit", "Metric Value"]]
    for ident, name, values in LAUNCHES:
        for metric, (unit, value) in values.items():
            if metric == "gpu__time_duration.sum" and ident == "1":
                unit, value = "msecond", "2.50"  # each row has its own unit here
            section = "Command line profiler metrics"
            rows.append([ident, "1234", "python3", "host", name, section, metric, unit, value])
    return "\n".join(PREFACE) + "\n" + _csv(rows)


@pytest.mark.parametrize("layout", [raw_page, long_layout])
def test_each_layout_gives_the_counted_kernels(tmp_path, layout):
    path = tmp_path / "profile.csv"
    path.write_text(layout())
    profile = ncu.read_ncu_csv(path)
    triad, hgemm, again = profile.kernels
    assert triad.name == again.name == "triad_kernel" and hgemm.name == "hgemm_kernel"
    assert triad.time_s == pytest.approx(10e-6) and again.time_s == pytest.approx(12e-6)
    assert triad.flops == {"fp32": 2_000_000}  # an FMA is 2 FLOPs
    assert triad.bytes == {"dram": 3_000_000, "l2": 3_500_000}  # read + written; Kbyte and Mbyte are 10³, 10⁶
    assert triad.intensity("dram") == pytest.approx(2 / 3) and triad.intensity("l1") is None
    assert hgemm.time_s == pytest.approx(2.5e-3)
    assert hgemm.flops == {"fp16": 1_000_000 * 4 + 10 * 2}  # packed pairs: fma 4, add 2
    assert hgemm.bytes == {"dram": 64_000_000} and hgemm.tensor_instructions == 5_000
    assert profile.notes[0].startswith("3 line(s) before the CSV header skipped")
    assert "1 kernel(s) ran tensor-core instructions" in profile.notes[1]


def test_both_layouts_read_the_same_launches(tmp_path):
    (tmp_path / "raw.csv").write_text(raw_page())
    (tmp_path / "long.csv").write_text(long_layout())
    assert ncu.read_ncu_csv(tmp_path / "raw.csv").kernels == ncu.read_ncu_csv(tmp_path / "long.csv").kernels


def test_launches_of_a_kernel_are_summed_and_small_ones_fold_into_other(tmp_path):
    (tmp_path / "p.csv").write_text(raw_page())
    profile = ncu.read_ncu_csv(tmp_path / "p.csv")
    hgemm, triads = profile.folded(share=0.001)
    assert hgemm.name == "hgemm_kernel" and triads.name == "triad_kernel" and triads.launches == 2
    assert triads.time_s == pytest.approx(22e-6) and triads.flops == {"fp32": 4_000_000}
    [_, other] = profile.folded()  # the triads are under 1 % of 2.522 ms
    assert other.name == OTHER and other.launches == 2 and other.bytes["dram"] == 6_000_000
    assert sum(k.time_s for k in profile.folded()) == pytest.approx(profile.time_s)


@pytest.mark.parametrize("change, message", [
    (lambda t: t.replace('"ID",', '"Id",'), "no Nsight Compute CSV header"),
    (lambda t: t.replace('"Kernel Name"', '"Kernel"'), 'no "Kernel Name" column'),
    (lambda t: t.replace('"10.00"', '"ten"'), "'ten' is not a number"),
    (lambda t: t.replace('"10.00"', '"-10.00"'), "must be a finite number of at least 0"),
    (lambda t: t.replace('"usecond"', '"fortnight"', 1), "a time in an unknown unit 'fortnight'"),
    (lambda t: t.replace('"Kbyte"', '"Kbit"', 1), "an unknown unit 'Kbit'"),
    (lambda t: t.replace('"10.00"', '"n/a"'), "gpu__time_duration.sum is missing"),
    (lambda t: t.rsplit('"0","1234"', 1)[0] + '"0","1234"\n', "of the header's"),
    (lambda t: t.replace('"2","1234"', '"0","1234"'), "repeats kernel ID 0"),
])
def test_a_broken_export_is_refused_naming_the_kernel_and_metric(tmp_path, change, message):
    path = tmp_path / "p.csv"
    path.write_text(change(raw_page()))
    with pytest.raises(DataFileError, match=message) as info:
        ncu.read_ncu_csv(path)
    assert str(path) in str(info.value)


def test_an_export_beyond_the_size_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(ncu, "MAX_PROFILE_BYTES", 100)
    path = tmp_path / "p.csv"
    path.write_text(raw_page())
    with pytest.raises(DataFileError, match="files over 100 bytes are refused"):
        ncu.read_ncu_csv(path)


@settings(deadline=None, max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_mutated_exports_load_or_are_refused(tmp_path, data):
    """Lines dropped, doubled or swapped, cells cut or replaced: a profile or a DataFileError
    naming the file, within a second."""
    rng = random.Random(data.draw(st.integers(0, 2 ** 32)))
    text = mutated(rng, (raw_page() if rng.random() < 0.5 else long_layout()).splitlines(),
                   ['"10.00"', '"inst"', '"Kbyte"', '"1234"', '","'],
                   ['""', '"1e400"', '"nan"', '"x"', '"-1"', '"', ',', '"1e308"', '"-1e308"', '"1e-320"',
                    f'"{"9" * 400}"', '"inf"'])
    path = tmp_path / "fuzzed.csv"
    path.write_text(text)
    try:
        with no_hang(1.0), no_block():
            ncu.read_ncu_csv(path)
    except DataFileError as exc:
        assert str(path) in str(exc)


def test_the_profile_command_prints_each_kernel_against_the_device(tmp_path):
    import json

    from explorer.commands import main as cli

    path = tmp_path / "p.csv"
    path.write_text(raw_page())
    out, err = io.StringIO(), io.StringIO()
    assert cli.run(cli.parse_args(["profile", str(path), "--hardware", "h100-sxm", "--json"]), out, err) == 0
    doc = json.loads(out.getvalue())
    hgemm = doc["kernels"][0]
    assert hgemm["name"] == "hgemm_kernel" and hgemm["flops"] == {"fp16": 4_000_020}
    # 0.0625 FLOP/byte × 3.35 TB/s is far below the fp16 vector roof: memory-bound, and the
    # share of that roof is the achieved rate over 0.0625 × 3.35 TB/s.
    assert hgemm["bound"] == "memory"
    assert hgemm["share_of_roof"] == pytest.approx(4_000_020 / 2.5e-3 / (4_000_020 / 64e6 * 3.35e12))
    # the JSON lists every kernel, however small ("each kernel"); the table folds and says so
    assert [(k["name"], k["launches"]) for k in doc["kernels"][1:]] == [("triad_kernel", 2)]
    out = io.StringIO()
    assert cli.run(cli.parse_args(["profile", str(path)]), out, err) == 0
    assert "3 launches" in out.getvalue() and "hgemm_kernel" in out.getvalue()
    assert OTHER in out.getvalue() and '"other" folds 1 kernel(s)' in out.getvalue()
    broken = tmp_path / "broken.csv"
    broken.write_text("not a profile\n")
    assert cli.run(cli.parse_args(["profile", str(broken)]), io.StringIO(), err) == 1
    assert "no Nsight Compute CSV header" in err.getvalue()


@pytest.mark.parametrize("layout", [raw_page, long_layout])
@pytest.mark.parametrize("huge, metric", [
    ("1e308", "dram__bytes_read.sum"), ("1e20", "dram__bytes_read.sum"),
    ("1.7976931348623157e308", "sm__sass_thread_inst_executed_op_ffma_pred_on.sum")])
def test_a_finite_but_huge_count_is_refused_naming_the_kernel_and_metric(tmp_path, layout, huge, metric):
    """1e308 Kbyte is a float times 1000: inf, and round() of it once raised OverflowError."""
    from explorer.profiles.reading import read_profile
    from tests.cli.test_cli import run
    old = '"2,000.00"' if metric.startswith("dram") else '"1,000,000"'
    path = tmp_path / "run.csv"
    path.write_text(layout().replace(old, f'"{huge}"', 1))
    message = (f"{path}: entry 'kernel ID 0': field '{metric}': must be a count of at most "
               f"18,446,744,073,709,551,615 (64 bits), got {huge!r}")
    with pytest.raises(DataFileError) as caught:
        read_profile(path)
    assert str(caught.value) == message
    code, _, err = run("profile", str(path))
    assert code == 1 and message in err and "Traceback" not in err


def test_tensor_operations_count_once_by_source_and_the_gpu_is_named(tmp_path):
    head = ['"ID","Kernel Name","Section Name","Metric Name","Metric Unit","Metric Value",'
            '"Rule Name","Rule Type","Rule Description"']
    rows = [("device__attribute_display_name", "", "NVIDIA B200"), ("gpu__time_duration.sum", "ns", "1,000"),
            ("sm__ops_path_tensor_src_bf16_dst_fp32.sum", "", "2,147,483,648"),
            ("sm__ops_path_tensor_src_bf16_dst_fp32_sparsity_off.sum", "", "2,147,483,648"),
            ("sm__ops_path_tensor_src_fp8_dst_fp32_sparsity_off.sum", "", "100"),
            ("sm__ops_path_tensor_src_fp8_dst_fp16_sparsity_off.sum", "", "20"),
            ("sm__ops_path_tensor_src_fp16_bf16_tf32_dst_fp32.sum", "", "7"),
            ("sm__sass_thread_inst_executed_op_ffma_pred_on.sum", "Kinst", "1"),
            ("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "Kinst", "1")]
    lines = [*head, *(f'"0","gemm","Command line profiler metrics","{m}","{u}","{v}",'
                      for m, u, v in rows),
             '"0","gemm","SpeedOfLight","","","","SOLBottleneck","OPT","a rule"']
    path = tmp_path / "b200.csv"
    path.write_text("\n".join(lines) + "\n")
    profile = ncu.read_ncu_csv(path)
    assert profile.device == "NVIDIA B200"
    assert profile.kernels[0].time_s == pytest.approx(1e-6)
    assert profile.kernels[0].flops == {"fp32": 2000, "bf16": 2**31, "fp8": 120}
    assert any("src_fp16_bf16_tf32" in note for note in profile.notes)
