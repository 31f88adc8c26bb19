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
        ("NVIDIA L40S", None),
        ("NVIDIA A100-PCIE", None),  # which memory size is unknown: no guess
    ],
)
def test_match_device(catalog, name, ident):
    match = match_device(name, catalog)
    assert (match.id if match else None) == ident


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed on this machine")
def test_cuda_sources_compile_to_ptx(tmp_path):
    """Every kernel the suites instantiate compiles (templates instantiated explicitly)."""
    instantiations = []
    for dtype, kernel in cuda_sources.INTENSITY_KERNELS.items():
        arg = {"fp32": "float*, unsigned long long, float, float",
               "fp64": "double*, unsigned long long, double, double",
               "fp16": "__half2*, unsigned long long, float, float"}[dtype]
        for k in (1, 64, 2048):
            instantiations.append(f"template __global__ void {kernel}<{k}>({arg});")
    source = tmp_path / "kernels.cu"
    source.write_text(cuda_sources.SOURCE + "\n" + "\n".join(instantiations) + "\n")
    result = subprocess.run(
        ["nvcc", "-ptx", "-std=c++17", "-arch=sm_80", str(source), "-o", str(tmp_path / "k.ptx")],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    ptx = (tmp_path / "k.ptx").read_text()
    for name in ("copy_f4", "triad_f4", "fma_chain_f32", "fma_chain_f64", "fma_chain_h2"):
        assert name in ptx
    assert cuda_sources.template_name("fp16", 8) == "fma_chain_h2<8>"
