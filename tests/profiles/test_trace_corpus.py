"""Every PyTorch-profiler trace of the conformance corpus (tests/data/third_party/<repo>/,
one expected.yaml beside each repository's traces) read and matched to the figures counted
by hand from its JSON: kernels kept, their time, the steps, FLOPs by precision and a byte
figure; or refused, naming why."""

from pathlib import Path

import pytest
import yaml

from explorer.core.files.errors import DataFileError
from explorer.profiles.reading import read_profile

ROOT = Path(__file__).resolve().parents[1] / "data" / "third_party"
FOLDERS = ("HolisticTraceAnalysis", "TraceLens")
CASES = [(ROOT / folder / name, figures) for folder in FOLDERS
         for name, figures in yaml.safe_load((ROOT / folder / "expected.yaml").read_text()).items()]


def test_every_trace_there_has_its_figures_written_down():
    assert {path for path, _ in CASES} == {p for folder in FOLDERS for p in (ROOT / folder).glob("*.json.gz")}
    assert len(CASES) >= 13


@pytest.mark.parametrize(("path", "figures"), CASES, ids=[p.name for p, _ in CASES])
def test_each_trace_gives_the_figures_counted_by_hand(path, figures):
    if "refused" in figures:
        with pytest.raises(DataFileError, match=figures["refused"]) as caught:
            read_profile(path)
        assert path.name in str(caught.value)
        return
    profile = read_profile(path)
    assert profile.tool.startswith("PyTorch profiler")
    assert ("CPU ops" in profile.tool) == figures.get("cpu", False)
    assert len(profile.kernels) == figures["kernels"]
    assert profile.time_s == pytest.approx(figures["time_us"] * 1e-6, rel=1e-9)
    assert profile.steps == figures["steps"]
    flops: dict[str, int] = {}
    for kernel in profile.kernels:
        for precision, count in kernel.flops.items():
            flops[precision] = flops.get(precision, 0) + count
    assert flops == figures["flops"]
    if "dram_bytes" in figures:
        dram = [k.bytes["dram"] for k in profile.kernels if "dram" in k.bytes]
        assert (sum(dram) if dram else None) == figures["dram_bytes"]
    if "kernel_bytes" in figures:
        named = figures["kernel_bytes"]
        chosen = [k for k in profile.kernels if k.name.startswith(named["name_starts"])]
        assert chosen and sum(k.bytes["dram"] for k in chosen) == named["dram"]
