"""The full GPU suite, plus references in the same process, with ratios against each.

- Bandwidth: our STREAM triad and copy (CuPy elementwise kernels) versus the float4
  raw-kernel triad and copy (``cuda_sources``), same arrays and byte convention.
  Goal: ours ≥ 0.95 of the raw kernel.
- GEMM: our square products versus ``torch.matmul`` of the same shape and precision,
  where PyTorch is installed (TF32 allowed only for the tf32 case). Goal: ≥ 0.95.
- Every measured point as a fraction of the datasheet (the catalogue entry matched by
  the device name, or ``--compare ID``).

Writes ``benchmarks/results/gpu-<device>-<date>.json`` (a results file the app can load)
and ``...-references.json`` (the ratios). With ``--results FILE`` it judges points already
measured (``bench``'s) instead of running the preset again. Without CuPy or a GPU it says
why and exits 0.

    python benchmarks/gpu_suite.py [--preset full|quick] [--results FILE] [--out FILE]
                                   [--compare ID] [--rounds 9] [--no-load-check]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import sys
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from common import describe, interleaved_ratio

from explorer.core.files.atomic import write_text_atomic
from explorer.core.files.datafile import DataFileError
from explorer.core.hardware.catalog import load_catalog
from explorer.kernels import cuda_sources, gpuinfo
from explorer.kernels.backends import CupyBackend
from explorer.kernels.reference import Reference, match_device
from explorer.kernels.results import load_results
from explorer.kernels.runner import OFF, drive, run
from explorer.kernels.suites import gemm, stream
from explorer.kernels.timing import TimingPlan, measure

RESULTS = Path(__file__).parent / "results"
PLAN = TimingPlan(warmup=3, min_regions=9, max_regions=30, target_s=0.3)


def median_s(launch: Callable[[], object], backend) -> Callable[[], float]:
    """A timing of ``launch`` with ``backend``'s timer: its median seconds per launch."""
    return lambda: measure(launch, backend.timer, PLAN).median_s


def raw_launch(function, kernel: str, blocks: int, target, b, c, n4):
    """One launch of the float4 reference kernel writing into ``target``."""
    if kernel == "triad":
        return lambda: function((blocks,), (256,), (target, b, c, np.float32(3.0), n4))
    return lambda: function((blocks,), (256,), (b, target, n4))


@contextmanager
def torch_fp32_mode(torch, allow_tf32: bool):
    """PyTorch's fp32 products in TF32 or plain FP32, restored afterwards: the matmul
    precision (where this PyTorch has it) and both legacy flags, cuBLAS and cuDNN, set
    alike so no path is left in the other mode."""
    matmul, cudnn = torch.backends.cuda.matmul, torch.backends.cudnn
    get_precision = getattr(torch, "get_float32_matmul_precision", None)
    previous = (get_precision() if get_precision else None, matmul.allow_tf32, cudnn.allow_tf32)
    try:
        if get_precision:
            torch.set_float32_matmul_precision("high" if allow_tf32 else "highest")
        matmul.allow_tf32 = cudnn.allow_tf32 = allow_tf32
        yield
    finally:
        if previous[0] is not None:
            torch.set_float32_matmul_precision(previous[0])
        matmul.allow_tf32, cudnn.allow_tf32 = previous[1:]


def torch_timer(torch, a, b, c, allow_tf32: bool):
    """Seconds per ``torch.matmul`` (CUDA events, median of 9 after 3 warm-ups)."""

    def seconds() -> float:
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        with torch_fp32_mode(torch, allow_tf32):
            for _ in range(3):
                torch.matmul(a, b, out=c)
            times = []
            for _ in range(9):
                start.record()
                torch.matmul(a, b, out=c)
                stop.record()
                stop.synchronize()
                times.append(start.elapsed_time(stop) * 1e-3)
        return float(np.median(times))

    return seconds


def bandwidth_references(backend, rounds: int) -> list[dict]:
    cp = backend.xp
    n = backend.streaming_bytes() // 12 // 4 * 4
    module = cuda_sources.module(cp)
    triad_f4, copy_f4 = module.get_function("triad_f4"), module.get_function("copy_f4")
    blocks = backend.gpu.sm_count * 8
    out = []
    for kernel, moved in (("triad", 3), ("copy", 2)):
        ours = stream._prepare(backend, kernel, "fp32", n)
        (target,) = ours.outputs
        b, c = backend.random(n, "fp32"), backend.random(n, "fp32")
        function = triad_f4 if kernel == "triad" else copy_f4
        raw = raw_launch(function, kernel, blocks, target, b, c, np.uint64(n // 4))
        raw()
        cp.cuda.get_current_stream().synchronize()
        expected = b + np.float32(3.0) * c if kernel == "triad" else b
        assert bool(cp.allclose(target, expected)), f"raw {kernel} computed the wrong result"
        ratio = interleaved_ratio(median_s(ours.launch, backend), median_s(raw, backend), rounds)
        seconds = median_s(raw, backend)()
        print(describe(f"{kernel}: ours / float4 raw kernel", ratio, "goal >= 0.95"))
        out.append({"kernel": kernel, "ratio_median": ratio.median, "ratio_p20": ratio.p20,
                    "ratio_p80": ratio.p80, "clean_rounds": ratio.clean, "rounds": ratio.rounds,
                    "reference_bytes_per_s": moved * n * 4 / seconds, "goal": 0.95})
        ours.close()
        backend.release()
    return out


def gemm_references(backend, rounds: int, size: int) -> list[dict]:
    try:
        import torch
    except ImportError:
        print("GEMM versus torch.matmul skipped: PyTorch is not installed")
        return []
    if not torch.cuda.is_available():
        print("GEMM versus torch.matmul skipped: this PyTorch has no CUDA")
        return []
    dtypes = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16,
              "bf16": torch.bfloat16}
    out = []
    for dtype, torch_dtype in dtypes.items():
        try:  # one precision that fails keeps the ratios the others measured
            row = _gemm_reference(backend, torch, dtype, torch_dtype, size, rounds)
        except Exception as exc:
            print(f"GEMM {dtype} reference failed: {_failure(exc)}")
            row = {"dtype": dtype, "size": size, "error": _failure(exc)}
        if row is not None:
            out.append(row)
    return out


def _failure(exc: Exception) -> str:
    """"TypeName: the message's first line", for a reference that failed."""
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"


def _gemm_reference(backend, torch, dtype: str, torch_dtype, size: int, rounds: int) -> dict | None:
    """Our ``size``³ product of ``dtype`` over torch.matmul's, interleaved (None: ours cannot
    run it here; torch's rate is printed)."""
    reason = gemm.supported(backend, dtype)
    ours = None if reason else gemm.prepare_product(backend, dtype, size, size, size)
    a = torch.rand(size, size, device="cuda", dtype=torch_dtype) + 0.5
    b = torch.rand(size, size, device="cuda", dtype=torch_dtype) + 0.5
    c = torch.empty(size, size, device="cuda", dtype=torch_dtype)
    reference = torch_timer(torch, a, b, c, allow_tf32=dtype == "tf32")
    if ours is None:
        rate = 2 * size**3 / reference() / 1e12
        print(f"{dtype}: ours skipped ({reason}); torch.matmul {rate:.1f} TFLOP/s")
        return None
    try:
        ratio = interleaved_ratio(median_s(ours.launch, backend), reference, rounds)
    finally:
        ours.close()
        backend.release()
    print(describe(f"GEMM {dtype} {size}³: ours / torch.matmul", ratio, "goal >= 0.95"))
    return {"dtype": dtype, "size": size, "ratio_median": ratio.median, "ratio_p20": ratio.p20,
            "ratio_p80": ratio.p80, "clean_rounds": ratio.clean, "rounds": ratio.rounds,
            "goal": 0.95, "torch": torch.__version__}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", choices=("quick", "full"), default="full")
    parser.add_argument("--compare", metavar="ID")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--results", metavar="FILE.json",
                        help="judge the points of a results file already measured (by `bench`) "
                             "instead of running the preset again")
    parser.add_argument("--out", metavar="FILE.json",
                        help="where the references go (default benchmarks/results/gpu-<device>-"
                             "<date>-references.json); rewritten after each group, so a killed "
                             "run keeps the groups before")
    parser.add_argument("--no-load-check", action="store_true",
                        help="read no foreign load while the preset runs (said in its notes)")
    args = parser.parse_args()
    info = gpuinfo.detect_gpu(0)
    if isinstance(info, gpuinfo.Unavailable):
        print(f"skipped: {info.reason}")
        return 0
    backend = CupyBackend(0)
    catalog = load_catalog()
    try:
        hardware = catalog[args.compare] if args.compare else match_device(info.name, catalog)
    except KeyError as exc:
        print(f"error: {exc}")
        return 2
    reference = Reference.from_hardware(hardware) if hardware else None
    print(f"{backend.label}; datasheet: {hardware.id if hardware else 'none matched'}")
    stem = f"gpu-{re.sub(r'[^a-z0-9]+', '-', info.name.lower()).strip('-')}-{dt.date.today()}"
    out = Path(args.out) if args.out else RESULTS / f"{stem}-references.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    results = _suite_results(args, backend, reference, out.parent / f"{stem}.json")
    fractions = _fractions(results, hardware, reference) if results and hardware else []
    report = {"device": info.to_dict(), "datasheet": hardware.id if hardware else None,
              "results": args.results, "references": {}, "fractions_of_datasheet": fractions}
    write_text_atomic(out, json.dumps(report, indent=1) + "\n")  # the fractions first
    for name, measure_references in (
            ("bandwidth", lambda: bandwidth_references(backend, args.rounds)),
            ("gemm", lambda: gemm_references(backend, args.rounds, 8192))):
        try:
            report["references"][name] = measure_references()
        except Exception as exc:  # report the failure, keep what was measured
            print(f"{name} references failed: {_failure(exc)}")
            report["references"][name] = {"error": _failure(exc)}
        write_text_atomic(out, json.dumps(report, indent=1) + "\n")
    print(f"wrote {out}")
    return 0


def _suite_results(args, backend, reference, target: Path):
    """The points to judge: a results file already measured, or a run of the preset (saved
    to ``target`` before any reference runs: a failing reference must not lose it)."""
    if args.results:
        try:
            return load_results(args.results)
        except DataFileError as exc:
            print(f"no points to judge: {exc}")
            return None

    def progress(p):
        if p.point is not None:
            q = p.point
            print(f"  {q.suite}/{q.kernel} {q.dtype} {q.param or ''}: "
                  f"{q.flops_per_s / 1e12:.2f} TFLOP/s, {q.bytes_per_s / 1e9:.1f} GB/s"
                  + (f"  [{q.suspect or q.check}]" if not q.trusted else ""), flush=True)

    results = drive(run(backend, [args.preset], args.preset, reference=reference,
                        load=OFF if args.no_load_check else "auto"), progress)
    for note in results.notes:
        print(f"note: {note}")
    results.save(target)
    print(f"wrote {target}")
    return results


def _fractions(results, hardware, reference) -> list[dict]:
    """Every point as a share of the datasheet's roof, and the best of each."""
    fractions = []
    for q in results.points:
        peak = reference.flops_per_s.get(q.dtype)
        fractions.append({"suite": q.suite, "kernel": q.kernel, "dtype": q.dtype, "param": q.param,
                          "of_peak": q.flops_per_s / peak if peak and q.flops else None,
                          "of_bandwidth": q.bytes_per_s / reference.bandwidth_bytes_per_s})
    best_bw = results.best_bandwidth()
    if best_bw:
        print(f"best bandwidth {best_bw.value / 1e12:.2f} TB/s = "
              f"{best_bw.value / hardware.bandwidth_bytes_per_s:.2f} of the datasheet")
    for dtype, ceiling in results.best_flops().items():
        peak = reference.flops_per_s.get(dtype)
        if peak:
            print(f"best {dtype} {ceiling.value / 1e12:.1f} TFLOP/s = {ceiling.value / peak:.2f} "
                  "of the datasheet")
    return fractions


if __name__ == "__main__":
    sys.exit(main())
