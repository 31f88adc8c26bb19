"""rocprofv3 (ROCm's rocprofiler-sdk) CSV output read as a profile:

- the kernel trace (``rocprofv3 --kernel-trace --output-format csv``, ``*_kernel_trace.csv``):
  one row per kernel dispatch with "Kind", "Dispatch_Id", "Kernel_Name", "Start_Timestamp"
  and "End_Timestamp" (integer nanoseconds) columns. Each dispatch is a kernel timed by
  End − Start; the trace counts no FLOPs and no bytes, and the profile says so;
- the counter collection (``rocprofv3 --pmc …``, ``*_counter_collection.csv``): one row per
  counter of each dispatch, with no timestamps: refused, naming the file and the trace to
  export instead.

Timestamps are read as integers (a float cannot hold every nanosecond of a clock near
2⁵³, as these are)."""

from __future__ import annotations

import csv
from pathlib import Path

from explorer.core.files.errors import DataFileError
from explorer.core.model.profile import Profile, ProfiledKernel
from explorer.profiles.ncu import COUNTER_MAX
from explorer.profiles.trace_stream import Progress, reported

TRACE_COLUMNS = ("Dispatch_Id", "Kernel_Name", "Start_Timestamp", "End_Timestamp")
COUNTER_COLUMNS = ("Dispatch_Id", "Kernel_Name", "Counter_Name", "Counter_Value")
DISPATCH = "KERNEL_DISPATCH"  # the "Kind" of a kernel's row


def _header(text: str) -> list[str]:
    """The first line's cells (none where it is no readable CSV line: then no rocprofv3 file)."""
    first = text.lstrip("\ufeff").split("\n", 1)[0]
    try:
        return next(csv.reader([first]), [])
    except csv.Error:
        return []


def is_rocprofv3(text: str) -> bool:
    """Whether ``text`` is a rocprofv3 kernel trace or counter collection, by its header."""
    header = set(_header(text))
    return set(TRACE_COLUMNS) <= header or set(COUNTER_COLUMNS) <= header


def read_rocprofv3(path: str | Path, text: str, progress: Progress | None = None) -> Profile:
    """The dispatches of a rocprofv3 kernel trace (``progress``: told the share of its lines
    read, and may raise to stop); a counter collection is refused, naming the trace to open."""
    header = set(_header(text))
    if not set(TRACE_COLUMNS) <= header:
        raise DataFileError(path, "is a rocprofv3 counter collection: counters per dispatch but no "
                                  "kernel times; export the kernel trace too (rocprofv3 --kernel-trace "
                                  "--output-format csv) and open its *_kernel_trace.csv")
    # one row at a time, each distinct kernel name kept once: memory follows the dispatches
    names: dict[str, str] = {}
    rows = csv.DictReader(reported(text.lstrip("\ufeff").splitlines(), progress))
    try:
        kernels = tuple(_kernel(path, number, row, names) for number, row in enumerate(rows, start=2)
                        if (row.get("Kind") or DISPATCH) == DISPATCH)
    except csv.Error as exc:
        raise DataFileError(path, f"is not a readable CSV file: {exc}") from None
    if not kernels:
        raise DataFileError(path, "the rocprofv3 kernel trace holds no kernel dispatch")
    notes = ("a rocprofv3 kernel trace: each dispatch's time only, no FLOP or byte counter; "
             "a rocprof-compute workload counts both",)
    return Profile("rocprofv3 (kernel trace)", str(path), kernels, notes)


def _kernel(path, line: int, row: dict, names: dict[str, str]) -> ProfiledKernel:
    start, end = (_timestamp(path, line, row, column) for column in ("Start_Timestamp", "End_Timestamp"))
    if end < start:
        raise DataFileError(path, f"line {line} (dispatch {row.get('Dispatch_Id')}): End_Timestamp "
                                  f"{end:,} is before Start_Timestamp {start:,}")
    name = (row.get("Kernel_Name") or "").strip() or f"dispatch {row.get('Dispatch_Id')}"
    return ProfiledKernel(names.setdefault(name, name), (end - start) * 1e-9)


def _timestamp(path, line: int, row: dict, column: str) -> int:
    cell = (row.get(column) or "").strip()
    try:
        value = int(cell)
    except ValueError:
        raise DataFileError(path, f"line {line} (dispatch {row.get('Dispatch_Id')}): {column} "
                                  f"{cell[:40]!r} is not a whole number of nanoseconds") from None
    if not 0 <= value <= COUNTER_MAX:
        raise DataFileError(path, f"line {line} (dispatch {row.get('Dispatch_Id')}): {column} {value:,} "
                                  f"is not a 64-bit timestamp")
    return value
