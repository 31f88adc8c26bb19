"""Real Nsight Compute CSV exports from public repositories (tests/data/third_party/ncu/),
each read and matched to the figures written by hand from the file (expected.yaml beside
each): kernel count, time, FLOPs by precision, DRAM bytes; or refused, naming why."""

import gc
from pathlib import Path

import pytest
import yaml

from explorer.core.files.datafile import DataFileError
from explorer.profiles import ncu
from explorer.profiles.reading import read_profile

ROOT = Path(__file__).resolve().parents[1] / "data" / "third_party" / "ncu"
CASES = [(folder / name, figures) for folder in sorted(ROOT.iterdir()) if folder.is_dir()
         for name, figures in yaml.safe_load((folder / "expected.yaml").read_text()).items()]


def test_every_export_there_has_its_figures_written_down():
    assert {path for path, _ in CASES} == {*ROOT.glob("*/*.csv"), *ROOT.glob("*/*.txt")}
    assert len(CASES) >= 14 and len({path.parent for path, _ in CASES}) >= 3


@pytest.mark.parametrize(("path", "figures"), CASES, ids=[p.name for p, _ in CASES])
def test_each_export_gives_the_figures_read_by_hand(path, figures):
    if "refused" in figures:
        with pytest.raises(DataFileError, match=figures["refused"]):
            read_profile(path)
        return
    profile = read_profile(path)
    assert profile.tool.startswith("Nsight Compute")
    assert len(profile.kernels) == figures["kernels"]
    assert profile.kernels[0].name.startswith(figures["name_starts"])
    assert profile.time_s == pytest.approx(figures["time_s"], rel=1e-12)
    flops: dict[str, int] = {}
    for kernel in profile.kernels:
        for precision, count in kernel.flops.items():
            flops[precision] = flops.get(precision, 0) + count
    assert flops == figures["flops"]
    dram = [k.bytes["dram"] for k in profile.kernels if "dram" in k.bytes]
    assert (sum(dram) if dram else None) == figures["dram_bytes"]
    assert profile.device == figures.get("device", "")


def test_nsight_compute_2019_s_names_on_a_pascal_gpu_are_read_as_today_s_and_said_so():
    """The 2019 raw page names its time gpu__time_duration and its DRAM bytes
    dram__read_bytes and dram__write_bytes (tests/data/third_party/ncu/microgpusim)."""
    profile = read_profile(ROOT / "microgpusim" / "nsight_vectoradd_100_32_metrics_all.csv")
    notes = " ".join(profile.notes)
    assert "Nsight Compute 2019's counter names" in notes
    assert "gpu__time_duration as gpu__time_duration.sum" in notes
    assert "no FLOP counter" in notes
    assert [k.bytes["dram"] for k in profile.kernels] == [7552 + 384, 3264 + 256, 2176 + 256]


def test_a_capture_without_a_duration_is_timed_by_its_cycles_and_clock():
    """NERSC's roofline metrics have no gpu__time_duration.sum: time = sm__cycles_elapsed.avg
    ÷ sm__cycles_elapsed.avg.per_second (ID 0: 8,382.70 cycles at 999,845,384.51 cycle/s)."""
    profile = read_profile(ROOT / "ml-operator-parameters" / "bert_flashattn_nsight.csv")
    assert profile.kernels[0].time_s == pytest.approx(8382.70 / 999845384.51, rel=1e-12)
    notes = " ".join(profile.notes)
    assert "10 kernel(s) timed as sm__cycles_elapsed.avg ÷ sm__cycles_elapsed.avg.per_second" in notes
    assert "6 kernel(s) ran tensor-core instructions with no tensor operation counter" in notes


def test_a_clock_in_cycles_a_nanosecond_is_read_per_second(tmp_path):
    text = (ROOT / "ml-operator-parameters" / "bert_flashattn_nsight.csv").read_text()
    changed = text.replace('"cycle/second","999,845,384.51"', '"cycle/nsecond","0.99984538451"')
    assert changed != text
    path = tmp_path / "scaled.csv"
    path.write_text(changed)
    assert read_profile(path).kernels[0].time_s == pytest.approx(8382.70 / 999845384.51, rel=1e-9)
    for unit, value in (("Ghz", "0.99984538451"), ("GHz", "0.99984538451"), ("ghz", "0.99984538451"),
                        ("Mhz", "999.84538451"), ("Kcycle/usecond", "0.99984538451")):
        path.write_text(text.replace('"cycle/second","999,845,384.51"', f'"{unit}","{value}"'))
        assert read_profile(path).kernels[0].time_s == pytest.approx(8382.70 / 999845384.51, rel=1e-9), unit
    # a rate of anything but cycles is no clock, and a clock of 0 times nothing
    for unit, value in (("byte/second", "999,845,384.51"), ("inst/second", "999,845,384.51"),
                        ("byte", "999,845,384.51"), ("cycle/second", "0")):
        path.write_text(text.replace('"cycle/second","999,845,384.51"', f'"{unit}","{value}"'))
        missing = (r"entry 'kernel ID 0': gpu__time_duration.sum is missing .*"
                   r"sm__cycles_elapsed.avg.per_second in cycles a second above 0")
        with pytest.raises(DataFileError, match=missing):
            read_profile(path)


def test_a_clock_in_no_unit_of_clocks_does_not_refuse_an_export_timed_otherwise(tmp_path):
    """An export with its durations reads whatever unit its clock is in: only a launch
    without one needs the clock (nsight162.csv has both)."""
    text = (ROOT / "ml-operator-parameters" / "nsight162.csv").read_text()
    changed = text.replace('"sm__cycles_elapsed.avg.per_second","cycle/second"',
                           '"sm__cycles_elapsed.avg.per_second","%"')
    assert changed != text
    path = tmp_path / "odd-clock.csv"
    path.write_text(changed)
    assert read_profile(path).time_s == pytest.approx(5.689984e-3, rel=1e-12)


def test_a_2019_name_beside_today_s_gives_way_in_either_layout(tmp_path):
    """Today's counter wins over a 2019 one of the same meaning, in whichever order the rows
    come, and the note names only the renamings that were made."""
    text = (ROOT / "ml-operator-parameters" / "nsight162.csv").read_text()
    rows = text.splitlines()
    first = next(r for r in rows if '"gpu__time_duration.sum","nsecond"' in r)
    old = first.replace('"gpu__time_duration.sum","nsecond","', '"gpu__time_duration","nsecond","9')
    for placed in ([old, first], [first, old]):
        changed = text.replace(first, "\n".join(placed))
        path = tmp_path / "both.csv"
        path.write_text(changed)
        profile = read_profile(path)
        assert profile.time_s == pytest.approx(5.689984e-3, rel=1e-12)
        assert not any("2019" in note for note in profile.notes)
    raw = (ROOT / "microgpusim" / "nsight_vectoradd_100_32_metrics_all.csv").read_text()
    only_time = raw.replace('"dram__read_bytes"', '"dram__read_bytes_old"').replace(
        '"dram__write_bytes"', '"dram__write_bytes_old"')
    path = tmp_path / "time-only.csv"
    path.write_text(only_time)
    notes = " ".join(read_profile(path).notes)
    assert "gpu__time_duration as gpu__time_duration.sum" in notes and "dram__read_bytes" not in notes


def test_a_sections_only_export_says_what_it_lacks():
    profile = read_profile(ROOT / "llm-perf-opt" / "v2-kernel_0003-wmma-gemm.SpeedOfLight.csv")
    notes = " ".join(profile.notes)
    assert "timed by the GPU Speed Of Light Throughput section's Duration" in notes
    assert "no byte counter" in notes and "rates, not bytes" in notes
    assert "no FLOP counter" in notes and "sm__ops_path_tensor_src_" in notes


@pytest.mark.parametrize(("unit", "kind", "factor"), [
    ("ns", "time", 1e-9), ("us", "time", 1e-6), ("ms", "time", 1e-3), ("s", "time", 1.0),
    ("nsecond", "time", 1e-9), ("usecond", "time", 1e-6), ("msecond", "time", 1e-3),
    ("second", "time", 1.0), ("byte", "bytes", 1.0), ("Kbyte", "bytes", 1e3), ("Mbyte", "bytes", 1e6),
    ("Gbyte", "bytes", 1e9), ("B", "bytes", 1.0), ("KB", "bytes", 1e3), ("MB", "bytes", 1e6),
    ("GB", "bytes", 1e9), ("KiB", "bytes", 1024.0), ("inst", "count", 1.0), ("Kinst", "count", 1e3),
    ("cycle", "count", 1.0), ("Kcycle", "count", 1e3), ("Mcycle", "count", 1e6), ("warp", "count", 1.0),
    ("", "count", 1.0), ("%", "percent", 1.0), ("byte/second", "rate", 1.0), ("Gbyte/s", "rate", 1e9),
    ("GB/s", "rate", 1e9), ("inst/cycle", "rate", 1.0), ("cycle/nsecond", "rate", 1e9),
    ("cycle/usecond", "rate", 1e6), ("cycle/second", "rate", 1.0), ("byte/cycle", "rate", 1.0),
    ("Ghz", "frequency", 1e9), ("Mhz", "frequency", 1e6), ("ghz", "frequency", 1e9),
    ("GHz", "frequency", 1e9),
])
def test_every_unit_spelling_ncu_writes_is_known(unit, kind, factor):
    assert ncu.unit_kind(unit) == (kind, pytest.approx(factor))


def test_a_throughput_is_not_taken_for_bytes(tmp_path):
    text = (ROOT / "llm-perf-opt" / "v2-kernel_0001-gemv.details.csv").read_text()
    changed = text.replace('"dram__bytes_read.sum","Mbyte","2.33"', '"dram__bytes_read.sum","Gbyte/s","2.33"')
    assert changed != text
    path = tmp_path / "rate.csv"
    path.write_text(changed)
    with pytest.raises(DataFileError, match=r"a rate .* where bytes were expected"):
        read_profile(path)


def test_a_raw_page_in_the_units_of_recent_releases_reads_the_same(tmp_path):
    """Derived from a real file (no licensed raw page of a recent release was found): the
    2019 raw page with its time unit spelt as releases since 2023 spell it ("ns")."""
    text = (ROOT / "microgpusim" / "nsight_vectoradd_100_32_metrics_all.csv").read_text()
    changed = text.replace('"nsecond"', '"ns"')
    assert changed.count('"ns"') == text.count('"nsecond"') > 0
    path = tmp_path / "recent.csv"
    path.write_text(changed)
    assert read_profile(path).time_s == pytest.approx(3 * 2720e-9, rel=1e-12)


def test_a_csv_profile_tells_its_progress_and_stops_when_told():
    """The import's bar and Cancel: a CSV reader reports the share of its lines read (at each
    200th of them, rounded up: nsight162.csv's 3,403 lines every 18) and stops where its
    progress raises, with the garbage collector on again after."""
    path = ROOT / "ml-operator-parameters" / "nsight162.csv"
    shares: list[float] = []
    read_profile(path, shares.append)
    assert len(path.read_text().splitlines()) == 3403
    assert shares == [n * 18 / 3403 for n in range(190)]

    class Stop(Exception):
        pass

    def stop(share: float) -> None:
        if share > 0:
            raise Stop

    others = (ROOT.parent / "rocprofiler-compute" / "dispatch_2-MI300X_A1",
              ROOT.parent / "rocprofiler-sdk" / "kernel_trace.csv")
    assert gc.isenabled()
    for profile in (path, *others):
        with pytest.raises(Stop):
            read_profile(profile, stop)
        assert gc.isenabled()
        told: list[float] = []
        read_profile(profile, told.append)
        assert told and told == sorted(told) and told[0] >= 0 and told[-1] < 1


def test_a_header_that_is_no_csv_is_refused_naming_the_file(tmp_path):
    """An unclosed quote in the header runs the field past csv's limit: each reader names the
    file (rocprof-compute's header, the first line of any other)."""
    for start in ("Dispatch_ID,", '"ID",'):
        path = tmp_path / "broken.csv"
        path.write_text(start + '"' + "x" * 140_000 + "\n1,2\n")
        with pytest.raises(DataFileError, match=r"broken.csv"):
            read_profile(path)


def test_blank_lines_before_a_raw_page_s_units_row_are_passed_over(tmp_path):
    text = (ROOT / "microgpusim" / "nsight_vectoradd_100_32_metrics_all.csv").read_text()
    header, rest = text.split("\n", 1)
    path = tmp_path / "blank.csv"
    path.write_text(header + "\n\n" + rest)
    assert read_profile(path).time_s == pytest.approx(3 * 2720e-9, rel=1e-12)
