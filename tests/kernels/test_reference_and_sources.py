"""Matching a GPU name to the catalogue, and CUDA sources that compile."""

import shutil
import subprocess

import pytest

from explorer.kernels import cuda_sources
from explorer.kernels.reference import match_device


@pytest.mark.parametrize(
    ("name", "ident"),
    [
        ("NVIDIA H200", "h200-sxm"),
        ("NVIDIA H100 80GB HBM3", "h100-sxm"),
        ("NVIDIA A100-SXM4-80GB", "a100-80gb-sxm"),
        ("NVIDIA A100-SXM4-40GB", "a100-40gb-sxm"),
        ("Tesla T4", "t4"),
        ("Tesla V100-SXM2-32GB", "v100-sxm2"),
        ("NVIDIA L4", "l4"),
        ("NVIDIA GeForce RTX 4090", "rtx-4090"),
        ("NVIDIA B200", "b200"),
        ("NVIDIA L40S", "l40s"),
        ("NVIDIA A100-PCIE", None),  # which memory size is unknown: no guess
    ],
)
def test_match_device(catalog, name, ident):
    match = match_device(name, catalog)
    assert (match.id if match else None) == ident


ARGUMENTS = {"fp32": "float*, unsigned long long, float, float",
             "fp64": "double*, unsigned long long, double, double",
             "fp16": "__half2*, unsigned long long, float, float"}
KERNEL_NAMES = {"fp32": "fma_chain", "fp64": "fma_chain", "fp16": "fma_chain_h2"}


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed on this machine")
@pytest.mark.parametrize(("source", "dtypes", "plain"), [
    (cuda_sources.SOURCE, ("fp32", "fp64"), ("copy_f4", "triad_f4")),
    (cuda_sources.FP16_SOURCE, ("fp16",), ()),
])
def test_cuda_sources_compile_to_ptx(tmp_path, source, dtypes, plain):
    """Every kernel the suites use compiles (templates instantiated for every chain length)."""
    instantiations = [
        f"template __global__ void {cuda_sources.template_name(d, k)}({ARGUMENTS[d]});"
        for d in dtypes for k in cuda_sources.CHAIN_LENGTHS
    ]
    path = tmp_path / "kernels.cu"
    path.write_text(source + "\n" + "\n".join(instantiations) + "\n")
    result = subprocess.run(
        ["nvcc", "-ptx", "-std=c++17", "-arch=sm_80", str(path), "-o", str(tmp_path / "k.ptx")],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    ptx = (tmp_path / "k.ptx").read_text()
    for name in (*plain, *(KERNEL_NAMES[d] for d in dtypes)):
        assert name in ptx
    assert "cuda_fp16" not in cuda_sources.SOURCE  # fp32/fp64 need no toolkit headers
    assert cuda_sources.template_name("fp64", 8) == "fma_chain<double, 8>"
    if "fp64" in dtypes:  # the chain compiles to fused multiply-adds, K per element
        assert ptx.count("fma.rn.f64") >= sum(cuda_sources.CHAIN_LENGTHS)


@pytest.mark.parametrize(("name", "ident"), [("NVIDIA H100 PCIe", "h100-pcie"),
                                             ("NVIDIA H100 NVL", "h100-nvl"),
                                             ("NVIDIA H200 NVL", "h200-nvl")])
def test_other_form_factors_get_their_own_datasheet_not_the_sxm_one(catalog, name, ident):
    hw = match_device(name, catalog)
    assert hw is not None and hw.id == ident
