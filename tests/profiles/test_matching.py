"""A profile beside the prediction: kernels told apart by name, per class the bound, the
expected time and the measured time of one step, unmatched kernels listed."""

import io
import json

import pytest

from explorer.commands import main as cli
from explorer.core.analysis.analysis import analyze
from explorer.core.analysis.expected import OpClass, class_times, expected_for
from explorer.core.analysis.profile_match import class_of, compare, read_patterns
from explorer.core.files.datafile import DataFileError
from explorer.core.model.profile import Profile, ProfiledKernel
from explorer.core.model.workload import WorkloadParams


@pytest.mark.parametrize("name, op_class", [
    ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1", OpClass.GEMM),
    ("Cijk_Alik_Bljk_BBS_BH_MT128x128x32_MI32x32x8x1", OpClass.GEMM),
    ("void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>",
     OpClass.GEMM),
    ("void flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4>>", OpClass.ATTENTION),
    ("void vllm::paged_attention_v2_kernel<__nv_bfloat16>", OpClass.ATTENTION),
    ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", OpClass.LINK),
    ("void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>", OpClass.LINK),
    ("void vllm::rms_norm_kernel<c10::BFloat16>", OpClass.MEMORY),
    ("void vllm::act_and_mul_kernel<c10::BFloat16, &vllm::silu_kernel>", OpClass.MEMORY),
    ("mystery", None),
])
def test_kernel_names_tell_their_class(name, op_class):
    assert class_of(name, read_patterns()) == op_class


def test_each_class_gets_its_bound_expected_and_measured_time_of_one_step(models, catalog):
    a = analyze(models["llama-3-8b"], WorkloadParams(batch=8), catalog["h100-sxm"])
    e = expected_for(a)
    kernels = [ProfiledKernel("sm90_xmma_gemm_bf16", 6e-3), ProfiledKernel("sm90_xmma_gemm_bf16", 6e-3),
               ProfiledKernel("flash_fwd_kernel", 1e-4), ProfiledKernel("mystery", 5e-5)]
    comparison = compare(Profile("test", "p.csv", tuple(kernels)), a, e, steps=2)
    rows = {r.op_class: r for r in comparison.rows}
    bound = class_times(a, a.time_s)
    assert rows[OpClass.GEMM].bound_s == pytest.approx(bound[OpClass.GEMM])
    assert rows[OpClass.GEMM].expected_s == pytest.approx(e.parts[OpClass.GEMM])
    assert rows[OpClass.GEMM].measured_s == pytest.approx(6e-3)  # 12 ms over 2 steps
    assert rows[OpClass.ATTENTION].measured_s == pytest.approx(5e-5)
    assert rows[OpClass.MEMORY].measured_s == 0 and rows[OpClass.MEMORY].bound_s > 0
    assert [k.name for k in comparison.unmatched] == ["mystery"]
    assert sum(bound.values()) == pytest.approx(a.totals.time_s)  # the classes add up to the step
    with pytest.raises(DataFileError, match="at least one step"):
        compare(Profile("test", "p.csv", tuple(kernels)), a, e, steps=0)


def test_a_broken_pattern_file_is_refused(tmp_path):
    path = tmp_path / "names.yaml"
    path.write_text("schema: 1\npatterns:\n- {class: products, pattern: 'gemm('}\n")
    with pytest.raises(DataFileError, match="is not a regular expression"):
        read_patterns(path)
    path.write_text("schema: 1\npatterns:\n- {class: tensor, pattern: gemm}\n")
    with pytest.raises(DataFileError, match="expected one of products"):
        read_patterns(path)


def test_analyze_with_a_profile_adds_the_comparison(tmp_path):
    from tests.profiles.test_ncu import raw_page

    path = tmp_path / "p.csv"
    path.write_text(raw_page())
    out, err = io.StringIO(), io.StringIO()
    argv = ["analyze", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--profile", str(path)]
    assert cli.run(cli.parse_args([*argv, "--json"]), out, err) == 0, err.getvalue()
    doc = json.loads(out.getvalue())["profile"]
    gemm = next(c for c in doc["classes"] if c["class"] == OpClass.GEMM)
    assert gemm["kernels"] == ["hgemm_kernel"] and gemm["measured_s"] == pytest.approx(2.5e-3)
    assert gemm["measured_over_bound"] == pytest.approx(2.5e-3 / gemm["bound_s"])
    assert doc["steps"] == 1
    out = io.StringIO()
    assert cli.run(cli.parse_args([*argv, "--profile-steps", "4"]), out, err) == 0
    assert "its time over 4 steps" in out.getvalue() and "measured faster than the bound" in out.getvalue()
