"""Nsight Compute CSV exports read as a profile, in both layouts ncu writes:

- the raw page (``ncu --csv --page raw``): a header row ("ID", …, "Kernel Name", …, then
  one column per metric), a row of units, then one row per kernel launch;
- the long layout (``--page details``, ``--metrics``): one row per metric of each launch,
  with "ID", "Kernel Name", "Metric Name", "Metric Unit" and "Metric Value" columns.

Lines before the header (the application's own output, ncu's ``==PROF==`` progress) and
``==PROF==`` / ``==WARNING==`` / ``==ERROR==`` lines after it are skipped. Unless ncu ran
with ``--print-units base`` its values carry thousands separators and units scaled with a
decimal prefix (Kbyte = 10³ bytes, usecond = 10⁻⁶ s): both are undone.

What is read of each launch (one without its time is refused):

- time: ``gpu__time_duration.sum``;
- FLOPs: ``sm__sass_thread_inst_executed_op_{d,f,h}{add,mul,fma}_pred_on.sum``, an add or
  a multiply 1 FLOP, a fused multiply-add 2; half-precision instructions work on packed
  pairs, so they count twice that (add and mul 2, fma 4);
- bytes: DRAM ``dram__bytes_read.sum`` + ``dram__bytes_write.sum`` (or ``dram__bytes.sum``),
  L2 ``lts__t_bytes.sum``, L1 ``l1tex__t_bytes.sum``;
- tensor-core instructions: ``sm__inst_executed_pipe_tensor.sum``, counted but not turned
  into FLOPs (what one instruction does depends on the architecture and the shape): a
  profile says which kernels did such work.
"""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path

from explorer.core.files.errors import DataFileError
from explorer.core.files.reading import read_text
from explorer.core.model.profile import Profile, ProfiledKernel

# Hardware counters and nanosecond timestamps are 64-bit: a count beyond is no count (1e308
# is a float, but 64 × it, or 1e308 Kbyte in bytes, is not: round() of it raised)
COUNTER_MAX = 2**64 - 1
BEYOND_COUNTER = f"must be a count of at most {COUNTER_MAX:,} (64 bits)"
MAX_PROFILE_BYTES = 64 << 20  # tens of thousands of launches with dozens of metrics each
TIME = "gpu__time_duration.sum"
FLOP_METRICS = {  # metric → (precision, FLOPs per instruction)
    f"sm__sass_thread_inst_executed_op_{p}{op}_pred_on.sum": (precision, weight * (2 if p == "h" else 1))
    for p, precision in (("d", "fp64"), ("f", "fp32"), ("h", "fp16"))
    for op, weight in (("add", 1), ("mul", 1), ("fma", 2))
}
BYTE_METRICS = {"dram__bytes_read.sum": "dram", "dram__bytes_write.sum": "dram", "dram__bytes.sum": "dram",
                "lts__t_bytes.sum": "l2", "l1tex__t_bytes.sum": "l1"}
TENSOR = "sm__inst_executed_pipe_tensor.sum"
PREFIXES = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
# Recent releases write ns, us, ms; older ones nsecond, usecond, msecond.
SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0,
           "nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3, "second": 1.0}
_SCALED = re.compile(r"^([KMGTP]?)(byte|inst|)$")
LONG_COLUMNS = ("Metric Name", "Metric Unit", "Metric Value")


def read_ncu_csv(path: str | Path, text: str | None = None) -> Profile:
    """The profile in an Nsight Compute CSV export (``text``: its contents, already read)."""
    text = read_text(path, MAX_PROFILE_BYTES) if text is None else text
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID",')), None)
    if start is None:
        raise DataFileError(path, 'no Nsight Compute CSV header ("ID", …, "Kernel Name", …) was found: '
                                  "export with ncu --csv --page raw (or --page details)")
    body = [line for line in lines[start:] if not line.startswith("==")]
    try:
        rows = list(csv.reader(body))
    except csv.Error as exc:
        raise DataFileError(path, f"is not a readable CSV file: {exc}") from None
    header = rows[0]
    if "Kernel Name" not in header:
        raise DataFileError(path, 'the CSV header has no "Kernel Name" column: not an Nsight Compute export')
    long = all(column in header for column in LONG_COLUMNS)
    launches = _long_rows(path, header, rows[1:]) if long else _raw_rows(path, header, rows[1:])
    if not launches:
        raise DataFileError(path, "the export holds no kernel launches")
    kernels = tuple(_kernel(path, ident, name, metrics) for ident, (name, metrics) in launches.items())
    notes = []
    if start:
        notes.append(f"{start} line(s) before the CSV header skipped (the application's output, "
                     "ncu's progress)")
    tensor = sum(1 for k in kernels if k.tensor_instructions)
    if tensor:
        notes.append(f"{tensor} kernel(s) ran tensor-core instructions: their matrix work is not in these "
                     "FLOPs (an instruction's work depends on the architecture and shape)")
    layout = "details (one row per metric)" if long else "raw page"
    return Profile(f"Nsight Compute (CSV, {layout})", str(path), kernels, tuple(notes))


def _long_rows(path, header: list[str], rows: list[list[str]]) -> dict[str, tuple[str, dict]]:
    at = {column: header.index(column) for column in ("ID", "Kernel Name", *LONG_COLUMNS)}
    out: dict[str, tuple[str, dict]] = {}
    for number, row in enumerate(rows, start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) < len(header):
            raise DataFileError(path, f"row {number} has {len(row)} of the header's {len(header)} columns")
        ident, name = row[at["ID"]], row[at["Kernel Name"]]
        metric, unit, value = (row[at[c]] for c in LONG_COLUMNS)
        _, metrics = out.setdefault(ident, (name, {}))
        if metric in _WANTED and (reading := _value(path, ident, metric, unit, value)) is not None:
            metrics[metric] = reading
    return out


def _raw_rows(path, header: list[str], rows: list[list[str]]) -> dict[str, tuple[str, dict]]:
    id_at, name_at = header.index("ID"), header.index("Kernel Name")
    units = rows[0] if rows and not rows[0][id_at].strip() else None  # the units row, if written
    columns = [(i, metric) for i, metric in enumerate(header) if metric in _WANTED]
    out: dict[str, tuple[str, dict]] = {}
    for number, row in enumerate(rows[1:] if units else rows, start=3 if units else 2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) < len(header):
            raise DataFileError(path, f"row {number} has {len(row)} of the header's {len(header)} columns")
        ident = row[id_at]
        if ident in out:
            raise DataFileError(path, f"row {number} repeats kernel ID {ident}: a raw page has one row "
                                      "per launch")
        metrics = {metric: _value(path, ident, metric, units[i] if units and i < len(units) else "", row[i])
                   for i, metric in columns}
        out[ident] = (row[name_at], {m: v for m, v in metrics.items() if v is not None})
    return out


_WANTED = {TIME, TENSOR, *FLOP_METRICS, *BYTE_METRICS}


def _value(path, ident: str, metric: str, unit: str, text: str) -> float | None:
    """A metric's value in base units (s, byte, count); None when not measured ("n/a", "")."""
    text = text.strip()
    if text in ("", "n/a", "N/A"):
        return None
    try:
        number = float(text.replace(",", ""))
    except ValueError:
        raise DataFileError(path, f"{text!r} is not a number", f"kernel ID {ident}", metric) from None
    if not math.isfinite(number) or number < 0:
        raise DataFileError(path, f"must be a finite number of at least 0, got {text!r}",
                            f"kernel ID {ident}", metric)
    unit = unit.strip()
    if metric == TIME:
        if unit not in SECONDS:
            raise DataFileError(path, f"a time in an unknown unit {unit!r} (ns, us, ms, s, or "
                                      "nsecond, usecond, msecond, second)", f"kernel ID {ident}", metric)
        return number * SECONDS[unit]
    scaled = _SCALED.match(unit)
    if scaled is None:
        raise DataFileError(path, f"an unknown unit {unit!r} for a count or bytes", f"kernel ID {ident}",
                            metric)
    number *= PREFIXES[scaled.group(1)]
    if number > COUNTER_MAX:
        raise DataFileError(path, f"{BEYOND_COUNTER}, got {text!r}", f"kernel ID {ident}", metric)
    return number


def _kernel(path, ident: str, name: str, metrics: dict[str, float]) -> ProfiledKernel:
    if TIME not in metrics:
        raise DataFileError(path, f"{TIME} is missing: export it (ncu --metrics {TIME},…)",
                            f"kernel ID {ident}")
    flops: dict[str, int] = {}
    for metric, (precision, weight) in FLOP_METRICS.items():
        if metric in metrics:
            flops[precision] = flops.get(precision, 0) + round(metrics[metric] * weight)
    moved: dict[str, int] = {}
    split_dram = "dram__bytes_read.sum" in metrics or "dram__bytes_write.sum" in metrics
    for metric, level in BYTE_METRICS.items():
        if metric in metrics and not (metric == "dram__bytes.sum" and split_dram):
            moved[level] = moved.get(level, 0) + round(metrics[metric])
    return ProfiledKernel(name, metrics[TIME], flops, moved, 1, round(metrics.get(TENSOR, 0)))
