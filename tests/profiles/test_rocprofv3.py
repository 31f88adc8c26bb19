"""rocprofv3 CSV output: the real kernel trace and counter collection of rocprofiler-sdk's
user guide (tests/data/third_party/rocprofiler-sdk/, figures read by hand in expected.yaml),
and the cases a real trace can hold: rows of other kinds, nanosecond clocks beyond a
float's exact range, broken timestamps."""

from pathlib import Path

import pytest
import yaml

from explorer.core.files.errors import DataFileError
from explorer.profiles.reading import read_profile

ROOT = Path(__file__).resolve().parents[1] / "data" / "third_party" / "rocprofiler-sdk"
EXPECTED = yaml.safe_load((ROOT / "expected.yaml").read_text())
HEADER = ('"Kind","Agent_Id","Queue_Id","Thread_Id","Dispatch_Id","Kernel_Id","Kernel_Name",'
          '"Correlation_Id","Start_Timestamp","End_Timestamp"')


def test_every_file_there_has_its_figures_written_down():
    assert set(EXPECTED) == {p.name for p in ROOT.glob("*.csv")}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_file_gives_the_figures_read_by_hand_or_is_refused_by_name(name):
    figures = EXPECTED[name]
    if "refused" in figures:
        with pytest.raises(DataFileError, match=figures["refused"]) as caught:
            read_profile(ROOT / name)
        assert name in str(caught.value) and "--kernel-trace" in str(caught.value)
        return
    profile = read_profile(ROOT / name)
    assert profile.tool == "rocprofv3 (kernel trace)"
    assert len(profile.kernels) == figures["kernels"]
    assert profile.time_s == pytest.approx(figures["time_ns"] * 1e-9, rel=1e-12)
    assert all(k.flops == figures["flops"] and not k.bytes for k in profile.kernels)
    first = profile.kernels[0]
    assert first.name == figures["first"]["name"]
    assert first.time_s == pytest.approx(figures["first"]["time_ns"] * 1e-9, rel=1e-12)
    assert "no FLOP or byte counter" in " ".join(profile.notes)


def _trace(tmp_path, *rows: str) -> Path:
    path = tmp_path / "1234_kernel_trace.csv"
    path.write_text("\n".join((HEADER, *rows)) + "\n")
    return path


def test_timestamps_beyond_a_float_s_exact_range_keep_every_nanosecond(tmp_path):
    # 2**53 + 1 is not a float: read as one, 9007199254740993 → …992 and …995 → …996 (4 ns)
    path = _trace(tmp_path, '"KERNEL_DISPATCH",1,1,7,1,3,"k()",10,9007199254740993,9007199254740995')
    assert read_profile(path).kernels[0].time_s == pytest.approx(2e-9, rel=1e-12)


def test_rows_of_other_kinds_are_not_kernels(tmp_path):
    path = _trace(tmp_path, '"KERNEL_DISPATCH",1,1,7,1,3,"k()",10,100,350',
                  '"MEMORY_COPY",1,1,7,2,0,"",11,400,900')
    assert [(k.name, k.time_s) for k in read_profile(path).kernels] == [("k()", pytest.approx(250e-9))]


@pytest.mark.parametrize(("start", "end", "message"), [
    ("500", "400", r"line 2 \(dispatch 1\): End_Timestamp 400 is before Start_Timestamp 500"),
    ("8.1E+14", "900", r"line 2 \(dispatch 1\): Start_Timestamp '8.1E\+14' is not a whole number"),
    ("", "900", r"line 2 \(dispatch 1\): Start_Timestamp '' is not a whole number"),
    ("100", "99999999999999999999999", r"End_Timestamp 99,999,999,999,999,999,999,999 is not a 64-bit"),
])
def test_a_broken_timestamp_is_refused_naming_the_line_and_dispatch(tmp_path, start, end, message):
    path = _trace(tmp_path, f'"KERNEL_DISPATCH",1,1,7,1,3,"k()",10,{start},{end}')
    with pytest.raises(DataFileError, match=message) as caught:
        read_profile(path)
    assert str(path) in str(caught.value)


def test_a_trace_without_dispatches_is_refused(tmp_path):
    with pytest.raises(DataFileError, match="holds no kernel dispatch"):
        read_profile(_trace(tmp_path, '"MEMORY_COPY",1,1,7,2,0,"",11,400,900'))
