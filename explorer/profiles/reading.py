"""A profile from whichever file the user gives: a PyTorch profiler trace (JSON, gzipped
or not), an Nsight Compute CSV export, a rocprof-compute workload (its folder or its
pmc_perf.csv) or a rocprofv3 kernel trace (CSV), told apart by content, not by name."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from explorer.core.files.reading import read_text
from explorer.core.model.profile import Profile
from explorer.profiles.kineto import is_json_object, is_trace, read_kineto
from explorer.profiles.ncu import MAX_PROFILE_BYTES, read_ncu_csv
from explorer.profiles.rocprof import is_rocprof, read_rocprof
from explorer.profiles.rocprofv3 import is_rocprofv3, read_rocprofv3
from explorer.profiles.trace_stream import Progress


def read_profile(path: str | Path, progress: Progress | None = None) -> Profile:
    """``progress``: told the share of the file read as it goes (a CSV's lines, a trace's
    bytes), and may raise to stop."""
    with uncollected():
        if is_rocprof(path):  # a workload folder
            return read_rocprof(path, progress=progress)
        if is_trace(path):
            return read_kineto(path, progress=progress)
        text = read_text(path, MAX_PROFILE_BYTES)
        if is_json_object(text):  # JSON without traceEvents: no CSV either, and said so
            return read_kineto(path, text.encode("utf-8"))
        if is_rocprof(path, text):
            return read_rocprof(path, text, progress)
        if is_rocprofv3(text):
            return read_rocprofv3(path, text, progress)
        return read_ncu_csv(path, text, progress)


@contextmanager
def uncollected() -> Iterator[None]:
    """No garbage collection while a trace is read. The read keeps hundreds of thousands of
    objects that form no reference cycles; each full collection meanwhile walks them all,
    0.4 s apiece for a 250 MB trace, holding Python's lock, so that the window, whose GUI
    thread waits for the lock, stops as long while the read runs in the background (issue
    59). The collector is as it was afterwards (off stays off)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
