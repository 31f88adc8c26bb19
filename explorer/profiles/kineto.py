"""PyTorch profiler traces (Kineto's chrome-trace JSON, plain or gzipped) read as a profile.

Each GPU kernel (``"cat": "kernel"``, a complete event: ``ts`` and ``dur`` in µs) becomes a
kernel of the profile. Its FLOPs come from the CPU op that launched it (``"cat": "cpu_op"``,
matched by ``args["External id"]``) when the profiler recorded them (``with_flops=True``
writes ``args["flops"]``): all of an op's FLOPs go to its longest kernel, in the precision
its first input has (``args["Input type"]``: BFloat16, Half, float, double). A trace has no
byte counts unless CUPTI counters were requested, so its kernels have none: they are
compared by time (``analyze --profile``), and placed on the chart only with bytes.
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any

from explorer.core.files.errors import DataFileError
from explorer.core.files.jsonfile import parse_json
from explorer.core.files.reading import decoded, open_regular, read_bytes
from explorer.core.profile import Profile, ProfiledKernel

MAX_TRACE_BYTES = 256 << 20  # a trace as written, and once decompressed
KERNEL_CATEGORIES = ("kernel", "Kernel")
PRECISIONS = {"c10::BFloat16": "bf16", "c10::Half": "fp16", "float": "fp32", "double": "fp64"}


def gunzipped(path: str | Path, data: bytes) -> bytes:
    """``data`` decompressed when it is gzip, refused beyond ``MAX_TRACE_BYTES`` (a small
    file can expand a thousandfold)."""
    if not data.startswith(b"\x1f\x8b"):
        return data
    limit = MAX_TRACE_BYTES
    inflater = zlib.decompressobj(zlib.MAX_WBITS | 16)
    try:
        out = inflater.decompress(data, limit + 1)
    except zlib.error as exc:
        raise DataFileError(path, f"is not a readable gzip file: {exc}") from None
    if len(out) > limit or inflater.unconsumed_tail:
        raise DataFileError(path, f"expands beyond {limit >> 20} MB: refused (is it the right file?)")
    return out


def is_trace(path: str | Path, head: int = 1 << 20) -> bool:
    """Whether ``path`` looks like a Kineto trace: its first ``head`` bytes (decompressed
    first, when gzip) name ``traceEvents``. Only that much is read."""
    try:
        with open_regular(path) as handle:
            start = handle.read(head)
    except (DataFileError, OSError):
        return False
    if start.startswith(b"\x1f\x8b"):
        try:
            start = zlib.decompressobj(zlib.MAX_WBITS | 16).decompress(start, head)
        except zlib.error:
            return False
    return b'"traceEvents"' in start


def _number(path, event: dict, key: str, index: int) -> float:
    value = event.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 1e18:
        raise DataFileError(path, f"{key} must be a number of at least 0, got {value!r}", f"event {index}",
                            key)
    return float(value)


def _external_id(args: dict):
    """An event's ``External id`` (None when missing or not a number or text)."""
    ident = args.get("External id")
    return ident if isinstance(ident, int | str) and not isinstance(ident, bool) else None


def _op_flops(path, events: list) -> dict[Any, tuple[int, str]]:
    """External id → (FLOPs, precision) of the CPU ops that recorded FLOPs."""
    out = {}
    for index, event in enumerate(events):
        args = event.get("args") if isinstance(event, dict) else None
        if not isinstance(args, dict) or event.get("cat") != "cpu_op" or "flops" not in args:
            continue
        flops = _number(path, args, "flops", index)
        types = args.get("Input type")
        first = types[0] if isinstance(types, list) and types else None
        precision = PRECISIONS.get(first, "unknown") if isinstance(first, str) else "unknown"
        if _external_id(args) is not None:
            out[_external_id(args)] = (round(flops), precision)
    return out


def read_kineto(path: str | Path, data: bytes | None = None) -> Profile:
    """The profile in a PyTorch profiler trace (``data``: its bytes, already read)."""
    data = gunzipped(path, read_bytes(path, MAX_TRACE_BYTES) if data is None else data)
    doc = parse_json(decoded(path, data), path)
    events = doc.get("traceEvents") if isinstance(doc, dict) else None
    if not isinstance(events, list):
        raise DataFileError(path, 'has no "traceEvents" list: not a PyTorch profiler trace')
    flops = _op_flops(path, events)
    kernels: list[tuple[Any, ProfiledKernel]] = []
    for index, event in enumerate(events):
        if not isinstance(event, dict) or event.get("ph") != "X" or event.get("cat") not in KERNEL_CATEGORIES:
            continue
        name = event.get("name")
        if not isinstance(name, str) or not name:
            raise DataFileError(path, "a kernel needs a name", f"event {index}", "name")
        args = event.get("args") if isinstance(event.get("args"), dict) else {}
        seconds = _number(path, event, "dur", index) * 1e-6
        kernels.append((_external_id(args), ProfiledKernel(name, seconds)))
    if not kernels:
        raise DataFileError(path, 'holds no GPU kernels ("cat": "kernel"): was the profiler run with '
                                  "ProfilerActivity.CUDA?")
    longest: dict[Any, int] = {}
    for i, (op, kernel) in enumerate(kernels):
        if op in flops and (op not in longest or kernel.time_s > kernels[longest[op]][1].time_s):
            longest[op] = i
    placed = [ProfiledKernel(k.name, k.time_s, {flops[op][1]: flops[op][0]}) if longest.get(op) == i else k
              for i, (op, k) in enumerate(kernels)]
    notes = ["a trace counts no bytes: its kernels are compared by time, not placed on the chart"]
    if flops:
        notes.append(f"FLOPs of {len(longest)} op(s) from the profiler's own count (with_flops), each "
                     "given to the op's longest kernel")
    return Profile("PyTorch profiler (Kineto trace)", str(path), tuple(placed), tuple(notes))
