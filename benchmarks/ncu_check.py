"""The profile reader against the GPU's own counters: Nsight Compute profiles the app's
triad and fp32 matrix-product kernels (``ncu --csv --page raw --print-units base``), the
capture is read back with the app's Nsight Compute reader, and the DRAM bytes it counted
for the triad must come within ±3 % of the triad's three arrays, the FLOPs it counted for
the product within 1 % of 2·M·N·K (cuBLAS runs an fp32 product as FMAs; the epilogue's
few multiplies are the 1 %).

Prints ncu's capture itself, then ``==CHECK==`` lines (a line beginning with ``==`` is
skipped by the reader), so the log it writes is a capture ``roofline-explorer profile``
reads: keep one from a GPU run under tests/data. ncu is looked for on PATH, then where CUDA
and Nsight Compute install it (``NCU_PLACES``). Where it is truly absent, or may not read the
counters (a sandbox without profiling rights), the check is NOT RUN: it says so and exits
``NOT_RUN`` (3), never 0, so that a run without it is not taken for one that passed.

    python benchmarks/ncu_check.py             (benchmarks/gpu_probe.py --ncu runs it)
    python benchmarks/ncu_check.py --launch    (what ncu runs: each kernel once)
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

METRICS = ("gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
           "sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
           "sm__sass_thread_inst_executed_op_fmul_pred_on.sum",
           "sm__sass_thread_inst_executed_op_ffma_pred_on.sum")
BYTES_WITHIN, FLOPS_WITHIN = 0.03, 0.01
NOT_RUN = 3  # exit status: nothing was checked (0 passed, 1 failed)
# Where CUDA's toolkit and the standalone Nsight Compute install ncu (newest version last).
NCU_PLACES = ("/usr/local/cuda/bin/ncu", "/usr/local/cuda-*/bin/ncu", "/opt/nvidia/nsight-compute/*/ncu")
NO_RIGHTS = ("ERR_NVGPUCTRPERM", "LibraryNotLoaded", "Failed to initialize the profiler")


def find_ncu(places: tuple[str, ...] | None = None) -> tuple[str | None, list[str]]:
    """(ncu's path or None, the places looked in): PATH first, then each of ``places``
    (``NCU_PLACES``)."""
    looked = ["PATH"]
    found = shutil.which("ncu")
    if found:
        return found, looked
    for pattern in NCU_PLACES if places is None else places:
        looked.append(pattern)
        for candidate in sorted(glob.glob(pattern), key=_version_key, reverse=True):
            if os.access(candidate, os.X_OK) and Path(candidate).is_file():
                return candidate, looked
    return None, looked


def _version_key(path: str) -> list[int]:
    """A path's version numbers (cuda-12.8 after cuda-12.10 would be wrong as text)."""
    return [int(part) for part in re.findall(r"\d+", path)]


def launch(facts: Path, elements: int = 1 << 28, side: int = 2048) -> None:
    """Run the triad and an fp32 product once each and write their analytic counts."""
    from explorer.kernels.backends import open_backend
    from explorer.kernels.suites import gemm, stream

    backend = open_backend("cupy")
    # Three arrays of 1 GiB: what the L2 still holds written at the kernel's end (ncu does not
    # count it as DRAM traffic) is under 2 % of the triad's bytes on any current GPU.
    triad = stream._prepare(backend, "triad", "fp32", elements)
    m = n = k = side
    product = gemm.prepare_product(backend, "fp32", m, n, k)
    triad.launch()
    product.launch()
    backend.sync()
    moved = stream.KERNELS["triad"][0] * elements * 4
    facts.write_text(json.dumps({"triad_bytes": moved, "product_flops": 2 * m * n * k}))


def _within(counted: float, expected: float, share: float) -> bool:
    return abs(counted - expected) <= share * expected


def check(capture: str, facts: dict) -> list[str]:
    """The ``==CHECK==`` lines, each ending in ok or FAILED."""
    from explorer.profiles.ncu import read_ncu_csv

    profile = read_ncu_csv("ncu capture", capture)
    triad = [k for k in profile.kernels if "stream_triad" in k.name]
    products = sorted((k for k in profile.kernels if "stream_" not in k.name),
                      key=lambda k: -k.flops.get("fp32", 0))
    lines = []
    if not triad:
        lines.append("==CHECK== no stream_triad kernel in the capture: FAILED")
    else:
        dram = triad[0].bytes.get("dram", 0)
        verdict = "ok" if _within(dram, facts["triad_bytes"], BYTES_WITHIN) else "FAILED"
        lines.append(f"==CHECK== triad DRAM bytes {dram:,} counted, {facts['triad_bytes']:,} by its arrays "
                     f"(within ±{BYTES_WITHIN:.0%}): {verdict}")
    if not products or not products[0].flops.get("fp32"):
        lines.append("==CHECK== no kernel with fp32 FLOPs in the capture: FAILED")
    else:
        flops = products[0].flops["fp32"]
        verdict = "ok" if _within(flops, facts["product_flops"], FLOPS_WITHIN) else "FAILED"
        lines.append(f"==CHECK== product FLOPs {flops:,} counted ({products[0].name[:60]}), "
                     f"{facts['product_flops']:,} = 2·M·N·K (within ±{FLOPS_WITHIN:.0%}): {verdict}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launch", metavar="FACTS", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.launch:
        launch(Path(args.launch))
        return 0
    ncu, looked = find_ncu()
    if ncu is None:
        print(f"==CHECK== NOT RUN: ncu was not found (looked in {', '.join(looked)}): the profile reader "
              "was not checked against counters")
        return NOT_RUN
    print(f"==CHECK== ncu: {ncu}")
    with tempfile.TemporaryDirectory() as folder:
        facts = Path(folder) / "facts.json"
        command = [ncu, "--csv", "--page", "raw", "--print-units", "base", "--clock-control", "none",
                   "--kernel-name", "regex:triad|gemm", "--metrics", ",".join(METRICS), sys.executable,
                   str(Path(__file__).resolve()), "--launch", str(facts)]
        done = subprocess.run(command, capture_output=True, text=True, env={**os.environ}, check=False)
        print(done.stdout, end="")
        if any(sign in done.stdout + done.stderr for sign in NO_RIGHTS):
            print("==CHECK== NOT RUN: ncu may not read the counters here (no profiling rights in this "
                  "sandbox): nothing was checked")
            return NOT_RUN
        if done.returncode != 0 or not facts.exists():
            print(done.stderr[-2000:], file=sys.stderr)
            print(f"==CHECK== ncu or the kernels failed (exit {done.returncode}): FAILED")
            return 1
        lines = check(done.stdout, json.loads(facts.read_text()))
    print("\n".join(lines))
    return 1 if any(line.endswith("FAILED") for line in lines) else 0


if __name__ == "__main__":
    sys.exit(main())
