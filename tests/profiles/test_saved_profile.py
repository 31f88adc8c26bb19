"""A profile kept in a session: its kernels by name (launches summed), at most
MAX_SAVED_KERNELS rows, written and read back exactly, every field of it checked."""

import re

import pytest
import yaml

from explorer.core.files.datafile import DataFileError
from explorer.core.model.profile import (
    MAX_SAVED_KERNELS,
    OTHER,
    Profile,
    ProfiledKernel,
    kept,
    profile_to_dict,
)
from explorer.core.model.session import Session, load_session

GEMM = ProfiledKernel("sm90_xmma_gemm_bf16", 2e-3, {"fp16": 4_000_000_000},
                      {"dram": 50_000_000, "l2": 90_000_000}, tensor_instructions=12)
NORM = ProfiledKernel("rms_norm_kernel", 1e-5, {"fp32": 1_000}, {"dram": 4_000})


def _profile(*kernels) -> Profile:
    return Profile("PyTorch profiler (Kineto trace)", "/somewhere/else/run.json", tuple(kernels), ("a note",),
                   "bytes from shapes")


def test_a_session_file_keeps_the_kernels_by_name_and_reads_them_back_exactly(tmp_path):
    profile = _profile(GEMM, NORM, GEMM)
    session = Session(profile=kept(profile))
    path = tmp_path / "s.yaml"
    session.save(path)
    back = load_session(path)
    assert back == session
    gemm = back.profile.kernels[0]
    assert (gemm.name, gemm.launches, gemm.time_s) == ("sm90_xmma_gemm_bf16", 2, 4e-3)
    assert gemm.flops == {"fp16": 8_000_000_000} and gemm.bytes == {"dram": 100_000_000, "l2": 180_000_000}
    assert gemm.tensor_instructions == 24
    assert back.profile.source == "run.json" and back.profile.notes == ("a note",)  # the name, not the path
    assert back.profile.estimated == "bytes from shapes"
    assert back.profile.time_s == pytest.approx(profile.time_s)


def test_beyond_the_limit_the_smallest_kernels_fold_into_other_and_the_time_stays():
    kernels = [ProfiledKernel(f"k{i}", (i + 1) * 1e-6) for i in range(MAX_SAVED_KERNELS + 100)]
    saved = kept(_profile(*kernels))
    assert len(saved.kernels) == MAX_SAVED_KERNELS
    other = next(k for k in saved.kernels if k.name == OTHER)
    assert other.launches == 101  # the 101 smallest, together the largest row: first
    assert saved.kernels[0] == other and saved.kernels[1].name == f"k{MAX_SAVED_KERNELS + 99}"
    assert saved.time_s == pytest.approx(_profile(*kernels).time_s)


@pytest.mark.parametrize("change, message", [
    (lambda k: k.update(time_s=-1), "field 'profile.kernels[0].time_s': expected seconds from 0 to 1e+08"),
    (lambda k: k.update(flops={"fp7": 3}), "field 'profile.kernels[0].flops.fp7': expected one of fp64"),
    (lambda k: k.update(bytes={"dram": 1.5}), "'profile.kernels[0].bytes.dram': expected a whole number"),
    (lambda k: k.update(launches=True), "'profile.kernels[0].launches': expected a whole number"),
    (lambda k: k.update(name="x" * 3000), "expected a kernel's name (at most 2000 characters)"),
    (lambda k: k.update(colour="red"), "profile.kernels[0].colour"),
])
def test_a_damaged_profile_in_a_session_is_named(tmp_path, change, message):
    data = Session(profile=kept(_profile(GEMM))).to_dict()
    change(data["profile"]["kernels"][0])
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(DataFileError, match=re.escape(message)):
        load_session(path)


@pytest.mark.parametrize("steps", [1, 3])
def test_the_steps_a_profile_covers_are_kept(tmp_path, steps):
    from dataclasses import replace

    session = Session(profile=kept(replace(_profile(GEMM), steps=steps)))
    path = tmp_path / "s.yaml"
    session.save(path)
    assert load_session(path).profile.steps == steps
    assert ("steps" in session.to_dict()["profile"]) == (steps != 1)  # one step is the default, not written


def test_the_device_a_profile_ran_on_is_kept_and_named_on_the_chart(tmp_path, catalog, models):
    from dataclasses import replace

    from explorer.chart.elements import ElementKind, Page
    from explorer.chart.model import build_chart
    from explorer.document import Document

    profile = replace(_profile(GEMM), device="NVIDIA H100 80GB HBM3")
    session = Session(model="llama-3-8b", hardware=("h100-sxm",), profile=kept(profile))
    path = tmp_path / "s.yaml"
    session.save(path)
    assert load_session(path).profile.device == "NVIDIA H100 80GB HBM3"
    chart = build_chart(Document(catalog, models, load_session(path)), Page.screen(1366, 768))
    keys = " ".join(t.text for t in chart.texts if t.kind == ElementKind.KEY)
    assert "run, on NVIDIA H100 80GB HBM3: 1 of 1 kernels" in keys
    data = session.to_dict()
    data["profile"]["device"] = "x" * 3000
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(DataFileError, match=re.escape("profile.device")):
        load_session(path)


@pytest.mark.parametrize("steps", [0, -2, 1.5, "two"])
def test_a_damaged_step_count_is_named(tmp_path, steps):
    data = Session(profile=kept(_profile(GEMM))).to_dict()
    data["profile"]["steps"] = steps
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(DataFileError, match=re.escape("profile.steps")):
        load_session(path)


def test_too_many_kernels_are_refused(tmp_path):
    data = Session(profile=kept(_profile(GEMM))).to_dict()
    data["profile"]["kernels"] *= MAX_SAVED_KERNELS + 1
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(DataFileError, match=f"a session keeps at most {MAX_SAVED_KERNELS} kernels"):
        load_session(path)


def test_the_saved_form_leaves_out_what_a_kernel_does_not_have():
    assert profile_to_dict(_profile(ProfiledKernel("k", 1e-3)))["kernels"] == [
        {"name": "k", "time_s": 1e-3, "launches": 1}]


def test_whatever_a_reader_produced_is_saved_in_a_form_that_reopens(tmp_path):
    many = [ProfiledKernel(f"x{i}", 1e-9 * (i + 1)) for i in range(600)]
    huge = ProfiledKernel("k" * 2500, 2e9, {"fp32": 10**25}, {"dram": -5})
    odd = [huge, ProfiledKernel("   ", 1e-3), *many]
    profile = Profile("PyTorch profiler (Kineto trace)", "/", tuple(odd))
    session = Session(profile=kept(profile))
    session.save(tmp_path / "s.yaml")
    back = load_session(tmp_path / "s.yaml")
    assert back == session and kept(back.profile) == back.profile  # kept once is kept for good
    longest = back.profile.kernels[0]
    assert len(longest.name) == 2000 and longest.bytes == {"dram": 0} and back.profile.source == "profile"
    assert any(k.name == "kernel" for k in back.profile.kernels)


def test_launches_fold_a_cache_s_bytes_only_where_every_launch_counted_them():
    """Two launches of one kernel, one counted at L2 and one not at all: the L2 intensity
    would count the FLOPs of both over the bytes of one, so the fold keeps no L2 bytes."""
    from explorer.core.model.profile import Profile, ProfiledKernel

    counted = ProfiledKernel("gemm", 1e-3, {"fp16": 10**9}, {"dram": 10**6, "l2": 4 * 10**6})
    bare = ProfiledKernel("gemm", 1e-3, {"fp16": 10**9}, {})
    for kernels in ((counted, bare), (bare, counted)):
        [gemm] = Profile("test", "t.csv", kernels).folded(0.0)
        assert gemm.bytes == {"dram": 10**6} and gemm.total_flops == 2 * 10**9


def test_a_kernel_s_launching_op_and_the_gpus_a_profile_ran_on_are_kept(tmp_path):
    """An nvjet kernel is classed by its op (aten::addmm): a session keeps the op, and the
    two GPUs a trace's kernels ran on, so a profile read back compares as it did."""
    nvjet = ProfiledKernel("nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NNT", 1e-3, op="aten::addmm")
    profile = Profile("PyTorch profiler (Kineto trace)", "run.json", (nvjet, nvjet, NORM), devices=2)
    session = Session(profile=kept(profile))
    path = tmp_path / "s.yaml"
    session.save(path)
    back = load_session(path).profile
    assert back is not None and back.devices == 2
    assert back.kernels[0].op == "aten::addmm" and back.kernels[0].launches == 2 and back.kernels[1].op == ""
    folded = Profile("t", "s", (nvjet, NORM)).folded(share=0.5)
    assert [(k.name, k.op) for k in folded] == [(nvjet.name, "aten::addmm"), (OTHER, "")]
