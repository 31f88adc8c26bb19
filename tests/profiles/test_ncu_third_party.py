"""Real Nsight Compute CSV exports from public repositories (tests/data/third_party/ncu/),
each read and matched to the figures written by hand from the file (expected.yaml beside
each): kernel count, time, FLOPs by precision, DRAM bytes; or refused, naming why."""

from pathlib import Path

import pytest
import yaml

from explorer.core.files.datafile import DataFileError
from explorer.profiles import ncu
from explorer.profiles.reading import read_profile

ROOT = Path(__file__).resolve().parents[1] / "data" / "third_party" / "ncu"
CASES = [(folder / name, figures) for folder in sorted(ROOT.iterdir()) if folder.is_dir()
         for name, figures in yaml.safe_load((folder / "expected.yaml").read_text()).items()]


def test_every_csv_there_has_its_figures_written_down():
    assert {path for path, _ in CASES} == set(ROOT.glob("*/*.csv"))
    assert len(CASES) >= 6


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
    ("", "count", 1.0), ("%", "percent", 1.0), ("byte/second", "rate", 1.0), ("Gbyte/s", "rate", 1.0),
    ("GB/s", "rate", 1.0), ("inst/cycle", "rate", 1.0), ("cycle/nsecond", "rate", 1.0),
    ("byte/cycle", "rate", 1.0), ("Ghz", "frequency", 1e9), ("Mhz", "frequency", 1e6),
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
