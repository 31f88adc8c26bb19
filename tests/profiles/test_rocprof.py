"""rocprof-compute workloads as profiles: rocprof-compute's own sample folders (tests/data,
MIT) read to the counter, a pmc_perf.csv written here with FLOPs known by construction,
and broken or mutated files refused by name."""

import random
import re
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.core.files.datafile import DataFileError
from explorer.profiles.reading import read_profile
from explorer.profiles.rocprof import read_rocprof
from tests.profiles.mutations import mutated
from tests.timeouts import no_block, no_hang

SAMPLES = Path(__file__).parents[1] / "data" / "rocprofiler-compute"


def test_an_mi200_workload_folder_gives_each_dispatch_its_time_and_bytes():
    profile = read_profile(SAMPLES / "vcopy-MI200")
    assert profile.tool == "rocprof-compute (MI200, gfx90a)" and profile.device == "MI200, gfx90a"
    first, second, _ = profile.kernels
    assert first.name == "vecCopy(double*, double*, double*, int, int)"
    # End − Start in ns; HBM: 64-byte reads and 64-byte writes (TCC_EA_*)
    assert first.time_s == pytest.approx(20_480e-9) and second.time_s == pytest.approx(16_320e-9)
    assert first.bytes == {"dram": 64 * 131_086 + 64 * 131_072, "l2": 64 * (131_072 + 131_072),
                           "l1": 64 * 524_288}
    assert second.bytes["dram"] == 64 * 131_086 + 64 * 91_072
    assert first.flops == {}  # a copy: no arithmetic counted
    assert any("HBM 1,389 GB/s" in note for note in profile.notes)  # roofline.csv's measured peak


def test_an_mi300x_workload_counts_bubble_reads_at_128_bytes():
    profile = read_profile(SAMPLES / "dispatch_0_1-MI300X_A1" / "pmc_perf.csv")
    first = profile.kernels[0]
    assert first.time_s == pytest.approx((716_295_853_087_727 - 716_295_853_072_008) * 1e-9)
    # 65,536 bubbles × 128 + (65,777 − 65,536 − 0) × 64 reads, 131,072 × 64 writes: 8 MiB each way
    assert first.bytes["dram"] == 128 * 65_536 + 64 * 241 + 64 * 131_072
    assert first.bytes["dram"] == pytest.approx(2 * 8 * 1_048_576, rel=0.001)


def test_timestamps_written_rounded_are_refused_with_the_reason():
    with pytest.raises(DataFileError, match=r"written rounded \(like 8.1097E\+14\)"):
        read_profile(SAMPLES / "vcopy-MI300X_A1")


HEADER = ("Dispatch_ID,GPU_ID,Kernel_Name,SQ_INSTS_VALU_ADD_F32,SQ_INSTS_VALU_MUL_F32,SQ_INSTS_VALU_FMA_F32,"
          "SQ_INSTS_VALU_TRANS_F32,SQ_INSTS_VALU_FMA_F64,SQ_INSTS_VALU_FMA_F16,SQ_INSTS_VALU_MFMA_MOPS_BF16,"
          "SQ_INSTS_VALU_MFMA_MOPS_I8,TCC_EA_RDREQ_sum,TCC_EA_RDREQ_32B_sum,TCC_EA_WRREQ_sum,"
          "TCC_EA_WRREQ_64B_sum,Start_Timestamp,End_Timestamp")


def pmc_text() -> str:
    return "\n".join([HEADER,
                      '0,1,"gemm_kernel(float*) (.kd)",10,5,7,1,2,3,4,1,100,20,50,30,1000,3000',
                      '1,1,"gemm_kernel(float*) (.kd)",0,0,0,0,0,0,1,0,10,0,0,0,5000,6000'])


def test_flops_are_counted_as_rocprof_compute_counts_them(tmp_path):
    path = tmp_path / "counters.txt"  # told by its content, not its name
    path.write_text(pmc_text())
    profile = read_profile(path)
    first = profile.kernels[0]
    assert first.flops == {"fp32": 64 * (10 + 5 + 1 + 2 * 7), "fp64": 64 * 2 * 2, "fp16": 64 * 2 * 3,
                           "bf16": 512 * 4, "int8": 512}
    assert first.time_s == pytest.approx(2e-6)
    assert first.bytes == {"dram": 32 * 20 + 64 * 80 + 64 * 30 + 32 * 20}
    assert [k.name for k in profile.folded()] == ["gemm_kernel(float*)"]  # launches of a name summed
    assert profile.folded()[0].launches == 2


@pytest.mark.parametrize("change, message", [
    (lambda t: t.replace(",10,5,", ",ten,5,", 1), "entry 'dispatch 0': field 'SQ_INSTS_VALU_ADD_F32': 'ten'"),
    (lambda t: t.replace(",10,5,", ",-10,5,", 1), "'SQ_INSTS_VALU_ADD_F32': must be a finite number"),
    (lambda t: t.replace(",Start_Timestamp", ",Begin"), "the header has no Start_Timestamp column"),
    (lambda t: t.split("\n")[0], "holds no kernel dispatches"),
])
def test_a_broken_file_is_refused_naming_the_dispatch_and_counter(tmp_path, change, message):
    path = tmp_path / "pmc_perf.csv"
    path.write_text(change(pmc_text()))
    with pytest.raises(DataFileError, match=re.escape(message)):
        read_profile(path)


HUGE = ["1e308", "1.7976931348623157e308", "1e20"]


@pytest.mark.parametrize("huge", HUGE)
@pytest.mark.parametrize("column, old", [("TCC_EA_RDREQ_sum", ",100,20,50,"),
                                         ("SQ_INSTS_VALU_FMA_F32", ",5,7,1,"),
                                         ("SQ_INSTS_VALU_MFMA_MOPS_BF16", ",3,4,1,")])
def test_a_finite_but_huge_count_is_refused_naming_the_dispatch_and_column(tmp_path, column, old, huge):
    """1e308 is a float, but 64 × it (bytes, FLOPs) is not: no 64-bit counter holds it."""
    from tests.cli.test_cli import run
    cells = old.split(",")
    cells[2 if column != "TCC_EA_RDREQ_sum" else 1] = huge
    folder = tmp_path / "workload"
    folder.mkdir()
    (folder / "pmc_perf.csv").write_text(pmc_text().replace(old, ",".join(cells), 1))
    message = (f"{folder / 'pmc_perf.csv'}: entry 'dispatch 0': field '{column}': must be a count "
               f"of at most 18,446,744,073,709,551,615 (64 bits), got {huge!r}")
    for path in (folder, folder / "pmc_perf.csv"):
        with pytest.raises(DataFileError) as caught:
            read_profile(path)
        assert str(caught.value) == message
        code, _, err = run("profile", str(path))
        assert code == 1 and "Traceback" not in err and message in err


def test_a_folder_without_its_counters_is_refused(tmp_path):
    shutil.copy(SAMPLES / "vcopy-MI200" / "sysinfo.csv", tmp_path / "sysinfo.csv")
    with pytest.raises(DataFileError, match=r"a rocprof-compute workload folder holds pmc_perf\.csv"):
        read_profile(tmp_path)


@settings(deadline=None, max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_mutated_files_load_or_are_refused(tmp_path, data):
    """Lines dropped, doubled or swapped, cells cut or replaced: a profile or a DataFileError
    naming the file, within a second."""
    rng = random.Random(data.draw(st.integers(0, 2 ** 32)))
    text = mutated(rng, pmc_text().splitlines(), [",10,", ",1000,", '"', ",100,"],
                   [",,", ",1e400,", ",nan,", ",x,", ",-1,", '"', ",", ",1e308,", ",-1e308,", ",1e-320,",
                    f",{'9' * 400},", ",inf,"])
    path = tmp_path / "pmc_perf.csv"
    path.write_text(text)
    try:
        with no_hang(1.0), no_block():
            read_rocprof(path)
    except DataFileError as exc:
        assert str(path) in str(exc)


@pytest.mark.parametrize("change, note", [
    # fewer reads than their 32-byte part
    (lambda t: t.replace(",100,20,", ",0,200,", 1), "HBM request counters that disagree"),
    (lambda t: t.replace(",1000,3000", ",,3000", 1), "without a readable time"),  # no start
])
def test_counters_that_cannot_be_read_are_left_out_and_said(tmp_path, change, note):
    path = tmp_path / "pmc_perf.csv"
    path.write_text(change(pmc_text()))
    profile = read_profile(path)
    assert any(note in n for n in profile.notes)
    assert all(b >= 0 for k in profile.kernels for b in k.bytes.values())
    assert all(k.time_s < 1 for k in profile.kernels)  # an empty start is no start at 0


def test_a_field_too_long_for_csv_is_refused_by_name(tmp_path):
    path = tmp_path / "pmc_perf.csv"
    path.write_text(pmc_text().replace('"gemm_kernel(float*) (.kd)"', '"' + "x" * 200_000, 1))
    with pytest.raises(DataFileError, match="is not a readable CSV file"):
        read_profile(path)
