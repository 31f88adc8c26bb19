"""rocprof-compute (formerly Omniperf) workloads read as a profile: a workload folder, or
its ``pmc_perf.csv`` (one row per kernel dispatch, one column per counter, summed over
the cache channels in the ``*_sum`` columns). Each dispatch is counted the way
rocprof-compute's own roofline counts it (``src/utils/roofline_calc.py``, ``calc_ai``):

- time: ``End_Timestamp`` − ``Start_Timestamp`` (nanoseconds);
- FLOPs by precision: 64 lanes × (ADD + MUL + 2 × FMA + TRANS) vector instructions of
  each of F16, F32 and F64 (``SQ_INSTS_VALU_*``), plus 512 per matrix-core ``MOPS`` count
  (``SQ_INSTS_VALU_MFMA_MOPS_{F16,BF16,F32,F64}``; ``I8``: int8 operations);
- bytes at HBM from the L2's requests to memory: on MI300 (``TCC_EA0_*``) a bubble read is
  128 bytes, a 32-byte read 32, any other read 64, a 64-byte write 64, any other write 32;
  on MI100/MI200 (``TCC_EA_*``) the same without bubbles; at the L2 64 bytes per request
  from the L1 (``TCP_TCC_{READ,WRITE,ATOMIC_WITH_RET,ATOMIC_WITHOUT_RET}_REQ``); at the L1
  64 bytes per access (``TCP_TOTAL_CACHE_ACCESSES``).

A folder's ``sysinfo.csv`` names the GPU; its ``roofline.csv`` (the peaks rocprof-compute
measured) is summed up in the profile's notes.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

from explorer.core.files.errors import DataFileError
from explorer.core.files.reading import read_text
from explorer.core.model.profile import Profile, ProfiledKernel
from explorer.profiles.ncu import BEYOND_COUNTER, COUNTER_MAX, MAX_PROFILE_BYTES
from explorer.profiles.trace_stream import Progress, reported

HEADER = "Dispatch_ID"  # the first column of pmc_perf.csv
PMC = "pmc_perf.csv"
LANES, MFMA_FLOPS = 64, 512
VALU = {"fp16": "F16", "fp32": "F32", "fp64": "F64"}
MFMA = {"fp16": "F16", "bf16": "BF16", "fp32": "F32", "fp64": "F64", "int8": "I8"}
L2_REQUESTS = ("TCP_TCC_READ_REQ_sum", "TCP_TCC_WRITE_REQ_sum", "TCP_TCC_ATOMIC_WITH_RET_REQ_sum",
               "TCP_TCC_ATOMIC_WITHOUT_RET_REQ_sum")
PEAKS = (("HBMBw", "HBM", "GB/s"), ("L2Bw", "L2", "GB/s"), ("FP32Flops", "FP32", "GFLOP/s"),
         ("MFMAF16Flops", "MFMA F16", "GFLOP/s"), ("MFMABF16Flops", "MFMA BF16", "GFLOP/s"))


def is_rocprof(path: str | Path, text: str | None = None) -> bool:
    """A workload folder, or a CSV whose header starts with ``Dispatch_ID``."""
    if text is None:
        return Path(path).is_dir()
    return text.lstrip("\ufeff").startswith(HEADER + ",")


def read_rocprof(path: str | Path, text: str | None = None, progress: Progress | None = None) -> Profile:
    """The profile of a workload folder or of its pmc_perf.csv (``text``: its contents;
    ``progress``: told the share of its lines read, and may raise to stop)."""
    folder = Path(path) if Path(path).is_dir() else None
    csv_path = folder / PMC if folder is not None else Path(path)
    if folder is not None and not csv_path.is_file():
        raise DataFileError(path, f"a rocprof-compute workload folder holds {PMC}; this one does not")
    text = read_text(csv_path, MAX_PROFILE_BYTES) if text is None else text
    rows = csv.DictReader(reported(text.lstrip("\ufeff").splitlines(), progress))
    try:
        columns = set(rows.fieldnames or ())  # (the header, read here)
    except csv.Error as exc:
        raise DataFileError(csv_path, f"is not a readable CSV file: {exc}") from None
    for column in ("Kernel_Name", "Start_Timestamp", "End_Timestamp"):
        if columns and column not in columns:
            raise DataFileError(csv_path, f"the header has no {column} column: not a rocprof-compute "
                                          f"{PMC}")
    # one row (thousands of counters) at a time: a 64 MB file held as dicts took 15× the file
    kernels, dispatches, disagreeing = [], 0, 0
    try:
        for row in rows:
            dispatches += 1
            seconds, hbm = _duration(csv_path, row), _hbm_bytes(row, _counter(csv_path, row))
            disagreeing += hbm < 0  # HBM bytes as counted: negative when the counters disagree
            if seconds > 0:
                kernels.append(_kernel(csv_path, row, seconds, hbm))
    except csv.Error as exc:
        raise DataFileError(csv_path, f"is not a readable CSV file: {exc}") from None
    if not dispatches:
        raise DataFileError(csv_path, "the file holds no kernel dispatches")
    if not kernels:
        raise DataFileError(csv_path, "no dispatch has an end after its start: the timestamps were "
                                      "written rounded (like 8.1097E+14), so no kernel's time can be read")
    notes = []
    if len(kernels) < dispatches:
        notes.append(f"{dispatches - len(kernels)} dispatch(es) without a readable time (a timestamp "
                     "missing, or the end not after the start) left out")
    if disagreeing:
        notes.append(f"{disagreeing} dispatch(es) with HBM request counters that disagree (fewer requests "
                     "than their 32-byte or bubble parts): their HBM bytes taken as 0, not placed")
    if "TCC_EA0_RDREQ_sum" not in columns and "TCC_EA_RDREQ_sum" not in columns:
        notes.append("no HBM request counters (TCC_EA*_RDREQ): profile with the roofline counters")
    if folder is not None:
        notes.extend(_peaks(folder / "roofline.csv"))
    gpu = _gpu(folder) if folder is not None else ""
    return Profile(f"rocprof-compute ({gpu})" if gpu else "rocprof-compute", str(path), tuple(kernels),
                   tuple(notes), device=gpu if gpu != getattr(folder, "name", None) else "")


def _rows(path, text: str) -> list[dict]:
    try:
        return list(csv.DictReader(text.lstrip("\ufeff").splitlines()))
    except csv.Error as exc:
        raise DataFileError(path, f"is not a readable CSV file: {exc}") from None


def _number(path, row: dict, column: str) -> float:
    """A counter's value (0 when the column is absent or empty)."""
    text = (row.get(column) or "").strip()
    if not text:
        return 0.0
    try:
        value = float(text)
    except ValueError:
        raise DataFileError(path, f"{text!r} is not a number", f"dispatch {row.get(HEADER)}",
                            column) from None
    if not math.isfinite(value) or value < 0:
        raise DataFileError(path, f"must be a finite number of at least 0, got {text!r}",
                            f"dispatch {row.get(HEADER)}", column)
    if value > COUNTER_MAX:
        raise DataFileError(path, f"{BEYOND_COUNTER}, got {text!r}", f"dispatch {row.get(HEADER)}", column)
    return value


def _duration(path, row: dict) -> float:
    """Seconds from start to end; 0 (unreadable) when either is missing or they are equal."""
    if not all((row.get(c) or "").strip() for c in ("Start_Timestamp", "End_Timestamp")):
        return 0.0
    start, end = (_number(path, row, column) for column in ("Start_Timestamp", "End_Timestamp"))
    return max(end - start, 0.0) * 1e-9


def _counter(path, row: dict):
    """A dispatch's counters by column (0 when absent)."""
    return lambda column: _number(path, row, column)


def _kernel(path, row: dict, seconds: float, hbm: int) -> ProfiledKernel:
    count = _counter(path, row)

    flops: dict[str, int] = {}
    for precision, suffix in VALU.items():
        instructions = sum(count(f"SQ_INSTS_VALU_{op}_{suffix}") for op in ("ADD", "MUL", "TRANS"))
        flops[precision] = round(LANES * (instructions + 2 * count(f"SQ_INSTS_VALU_FMA_{suffix}")))
    for precision, suffix in MFMA.items():
        matrix = MFMA_FLOPS * count(f"SQ_INSTS_VALU_MFMA_MOPS_{suffix}")
        flops[precision] = flops.get(precision, 0) + round(matrix)
    moved = {"dram": max(0, hbm), "l2": round(64 * sum(count(c) for c in L2_REQUESTS)),
             "l1": round(64 * count("TCP_TOTAL_CACHE_ACCESSES_sum"))}
    name = (row.get("Kernel_Name") or "").removesuffix(" (.kd)").removesuffix(" [clone .kd]").strip()
    return ProfiledKernel(name or f"dispatch {row.get(HEADER)}", seconds,
                          {p: f for p, f in flops.items() if f}, {lv: b for lv, b in moved.items() if b})


def _hbm_bytes(row: dict, count) -> int:
    if "TCC_EA0_RDREQ_sum" in row:  # MI300: 128-byte reads counted as bubbles
        bubble, small = count("TCC_BUBBLE_sum"), count("TCC_EA0_RDREQ_32B_sum")
        reads = 128 * bubble + 32 * small + 64 * (count("TCC_EA0_RDREQ_sum") - bubble - small)
        large = count("TCC_EA0_WRREQ_64B_sum")
        return round(reads + 64 * large + 32 * (count("TCC_EA0_WRREQ_sum") - large))
    small, large = count("TCC_EA_RDREQ_32B_sum"), count("TCC_EA_WRREQ_64B_sum")
    reads = 32 * small + 64 * (count("TCC_EA_RDREQ_sum") - small)
    return round(reads + 64 * large + 32 * (count("TCC_EA_WRREQ_sum") - large))


def _gpu(folder: Path) -> str:
    """The GPU a workload folder was profiled on (its sysinfo.csv), else the folder's name."""
    try:
        rows = _rows(folder / "sysinfo.csv", read_text(folder / "sysinfo.csv", 1 << 20))
    except (DataFileError, OSError):
        return folder.name
    info = rows[0] if rows else {}
    return ", ".join(v for v in (info.get("gpu_model"), info.get("gpu_arch")) if v) or folder.name


def _peaks(path: Path) -> list[str]:
    """rocprof-compute's measured peaks (roofline.csv, its first device) as one note."""
    if not path.is_file():
        return []
    try:
        first = _rows(path, read_text(path, 1 << 20))[0]
        parts = [f"{label} {float(first[column]):,.0f} {unit}" for column, label, unit in PEAKS
                 if (first.get(column) or "").strip()]
    except (DataFileError, OSError, IndexError, ValueError):
        return ["roofline.csv could not be read: its measured peaks are not shown"]
    return [f"rocprof-compute measured peaks (roofline.csv, device 0): {', '.join(parts)}"] if parts else []
