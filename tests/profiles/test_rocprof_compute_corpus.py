"""Real rocprof-compute workloads from ROCm/rocprofiler-compute's tests
(tests/data/third_party/rocprofiler-compute/), each read and matched to the figures
written by hand from its pmc_perf.csv (expected.yaml beside them): dispatch count, time,
FLOPs, the first dispatch's HBM and L1 bytes, the GPU named by sysinfo.csv."""

from pathlib import Path

import pytest
import yaml

from explorer.profiles.reading import read_profile

ROOT = Path(__file__).resolve().parents[1] / "data" / "third_party" / "rocprofiler-compute"
EXPECTED = yaml.safe_load((ROOT / "expected.yaml").read_text())


def test_every_workload_there_has_its_figures_written_down():
    assert set(EXPECTED) == {p.name for p in ROOT.iterdir() if p.is_dir()}
    assert len(EXPECTED) >= 5


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_workload_gives_the_figures_read_by_hand(name):
    figures = EXPECTED[name]
    profile = read_profile(ROOT / name)
    assert profile.device == figures["device"]
    assert len(profile.kernels) == figures["kernels"]
    assert {k.name for k in profile.kernels} == {"vecCopy(double*, double*, double*, int, int)"}
    assert profile.time_s == pytest.approx(figures["time_ns"] * 1e-9, rel=1e-12)
    assert all(k.flops == figures["flops"] for k in profile.kernels)
    first = profile.kernels[0]
    assert first.bytes["dram"] == figures["first_dram"]
    assert first.bytes["l1"] == figures["first_l1"]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_pmc_perf_file_alone_reads_as_its_folder(name):
    folder, alone = read_profile(ROOT / name), read_profile(ROOT / name / "pmc_perf.csv")
    assert [(k.time_s, k.bytes) for k in alone.kernels] == [(k.time_s, k.bytes) for k in folder.kernels]
