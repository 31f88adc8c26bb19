"""PyTorch profiler traces (Kineto's chrome-trace JSON, plain or gzipped) read as a profile.

Each GPU kernel (``"cat": "kernel"``, a complete event: ``ts`` and ``dur`` in µs) becomes a
kernel of the profile. Its FLOPs come from the CPU op that launched it (``"cat": "cpu_op"``,
matched by ``args["External id"]``) when the profiler recorded them (``with_flops=True``
writes ``args["flops"]``), else from the op's recorded shapes for a matrix product
(``profiles.shapes``), in the precision its first input has (``args["Input type"]``:
BFloat16, Half, float, double). A trace counts no bytes: with ``record_shapes=True`` an
op's bytes are estimated from its shapes (each input read once, the result written once)
and the kernel is placed on the chart at that intensity; without, its kernels are compared
by time only (``analyze --profile``). All of an op's work goes to its longest kernel.
A trace of a CPU run has no GPU kernels: its innermost ops are read as its kernels
(``profiles.cpu_ops``).

Only the kernels of the profiler's steps are read, and the profile covers that many steps
(``profiles.trace_runs``): where the trace marks them on the GPU (``"cat":
"gpu_user_annotation"`` named ``ProfilerStep#N``), the kernels that start inside one (the
window a schedule records opens while the GPU still runs earlier steps' kernels, which
belong to no recorded step: a note says how many were left out); where it marks them on the
CPU only, the kernels their launches name. Kernels of several GPUs are counted per GPU
(``Profile.devices``); a CUDA graph's capture alone is refused; a trace of an accelerator
the project does not model (MTIA, …) is refused by name.
"""

from __future__ import annotations

import contextlib
import zlib
from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from explorer.core.files.errors import DataFileError
from explorer.core.files.jsonfile import parse_json
from explorer.core.files.reading import decoded, open_regular, read_bytes
from explorer.core.model.profile import Profile, ProfiledKernel
from explorer.profiles.cpu_ops import cpu_kernels
from explorer.profiles.cupti_ranges import range_kernels
from explorer.profiles.events import args_of
from explorer.profiles.shapes import PRECISIONS, op_work, weight_shape
from explorer.profiles.trace_runs import (
    RUNTIME_CATEGORIES,
    STEP_PREFIX,
    Launch,
    by_device,
    categories,
    correlation_of,
    device_of,
    foreign_device,
    graphs,
    in_steps,
)
from explorer.profiles.trace_stream import Progress, Unstreamable, streamed

MAX_TRACE_BYTES = 256 << 20  # a trace as written, and once decompressed
KERNEL_CATEGORIES = ("kernel", "Kernel")
GZIP_MAGIC = b"\x1f\x8b"


def gunzipped(path: str | Path, data: bytes) -> bytes:
    """``data`` decompressed when it is gzip, refused beyond ``MAX_TRACE_BYTES`` (a small
    file can expand a thousandfold) or when it holds no JSON object."""
    if not data.startswith(GZIP_MAGIC):
        return data
    limit = MAX_TRACE_BYTES
    inflater = zlib.decompressobj(zlib.MAX_WBITS | 16)
    try:
        out = inflater.decompress(data, limit + 1)
    except zlib.error as exc:
        raise DataFileError(path, f"is not a readable gzip file: {exc}") from None
    if len(out) > limit or inflater.unconsumed_tail:
        raise DataFileError(path, f"expands beyond {limit >> 20} MB: refused (is it the right file?)")
    if not out.lstrip(b" \t\r\n").startswith(b"{"):
        raise DataFileError(path, f"is gzip-compressed but holds no JSON object once expanded "
                                  f"({len(out) / 2**20:.1f} MB): not a PyTorch profiler trace")
    return out


def is_trace(path: str | Path, chunk: int = 1 << 20) -> bool:
    """Whether ``path`` is read as a Kineto trace: gzip-compressed (the only compressed
    format read here, so refused as what it holds, not as a CSV), or a JSON object that
    names ``traceEvents`` within ``MAX_TRACE_BYTES`` (a header of megabytes, such as a
    many-GPU ``deviceProperties``, may come first). Read in chunks, and only while the
    file is a JSON object."""
    key = b'"traceEvents"'
    try:
        with open_regular(path) as handle:
            data = handle.read(chunk)
            if data.startswith(GZIP_MAGIC):
                return True
            if not data.lstrip(b" \t\r\n").removeprefix(b"\xef\xbb\xbf").lstrip().startswith(b"{"):
                return False
            seen, tail = 0, b""
            while data and seen <= MAX_TRACE_BYTES:
                if key in tail + data:
                    return True
                seen, tail = seen + len(data), data[-len(key):]
                data = handle.read(chunk)
    except (DataFileError, OSError):
        return False
    return False


def is_json_object(text: str) -> bool:
    """Text that a JSON object starts (a trace without traceEvents: named so, not as a CSV)."""
    return text.lstrip("\ufeff \t\r\n").startswith("{")


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


@dataclass(frozen=True)
class OpWork:
    """What a CPU op's kernels did, from the profiler: FLOPs (counted by the profiler, or
    from shapes for a matrix product; None: neither) and bytes from shapes (0: unknown)."""

    flops: int | None
    precision: str
    moved: int
    counted: bool  # FLOPs from the profiler's own count (with_flops), not from shapes
    shape: tuple[int, ...] = ()  # (K, N) of a product of a weight matrix (``shapes.weight_shape``)


def _op_work(path, events: list, ops: Iterable[int]) -> tuple[dict[Any, OpWork], dict[Any, str]]:
    """External id → the work of each CPU op whose FLOPs or shapes were recorded, and
    External id → the name of the CPU op with that id (the op a kernel's launch is under),
    of the CPU ops (``ops``: their places in ``events``, from ``_sorted``). The work from
    shapes is worked out once for each op name and shapes (a streamed trace's equal shapes
    are one object: ``trace_stream.slim``)."""
    out: dict[Any, OpWork] = {}
    names: dict[Any, str] = {}
    known: dict[tuple, tuple[int | None, int, str]] = {}
    shapes: dict[tuple, tuple[int, ...]] = {}
    made: dict[tuple, OpWork] = {}  # (an op's work, once for each op name, shapes and count)
    for index in ops:
        event = events[index]
        args = event.get("args")
        if not isinstance(args, dict):
            continue
        ident = _external_id(args)
        if ident is None:
            continue
        named = event.get("name")
        if isinstance(named, str):
            names[ident] = named
        types, dims, concrete = args.get("Input type"), args.get("Input Dims"), args.get("Concrete Inputs")
        name = str(event.get("name", ""))
        key = (name, id(dims), id(types), id(concrete))  # (the events hold these objects: no id is reused)
        if key not in known:
            first = types[0] if isinstance(types, list) and types else None
            precision = PRECISIONS.get(first, "unknown") if isinstance(first, str) else "unknown"
            known[key] = (*op_work(name, dims, types, concrete=concrete), precision)
        from_shapes, moved, precision = known[key]
        counted = "flops" in args
        flops = round(_number(path, args, "flops", index)) if counted else from_shapes
        if flops is not None or moved:
            if key not in shapes:
                shapes[key] = weight_shape(name, dims, types) or ()
            done = (key, counted, flops)
            work = made.get(done)
            if work is None:
                work = made[done] = OpWork(flops, precision, moved, counted, shapes[key])
            out[ident] = work
    return out, names


def _with_work(kernel: ProfiledKernel, work: OpWork) -> ProfiledKernel:
    flops = {work.precision: work.flops} if work.flops else {}
    return ProfiledKernel(kernel.name, kernel.time_s, flops, {"dram": work.moved} if work.moved else {},
                          shape=work.shape, op=kernel.op)


def _sorted(events: list) -> tuple[array, array, list[dict]]:
    """In one pass: (the places in ``events`` of the CPU ops and of the kernels; the events
    ``trace_runs`` reads: CUDA runtime and driver calls and the profiler's steps)."""
    ops, kernels = array("q"), array("q")  # (8 bytes an event)
    marks: list[dict] = []
    for index, event in enumerate(events):
        if not isinstance(event, dict):
            continue
        category = event.get("cat")
        if category == "cpu_op":
            ops.append(index)
        elif category in KERNEL_CATEGORIES:
            kernels.append(index)
        named = event.get("name")
        if category in RUNTIME_CATEGORIES or (isinstance(named, str) and named.startswith(STEP_PREFIX)):
            marks.append(event)
    return ops, kernels, marks


def _notes(placed: list[OpWork]) -> list[str]:
    counted = sum(1 for w in placed if w.counted)
    shaped = sum(1 for w in placed if w.flops is not None and not w.counted)
    moved = sum(1 for w in placed if w.moved)
    notes = []
    if counted:
        notes.append(f"FLOPs of {counted} op(s) from the profiler's own count (with_flops), each given to "
                     "the op's longest kernel")
    if shaped:
        notes.append(f"FLOPs of {shaped} matrix product(s) and attention op(s) from their recorded shapes "
                     "(2 per multiply-add; attention under a causal mask counts the pairs it keeps)")
    if moved:
        notes.append(f"bytes of {moved} op(s) from their recorded shapes (record_shapes): each input read "
                     "once and the result written once, an estimate, not a count; each op's on its longest "
                     "kernel")
    else:
        notes.append("a trace counts no bytes and no op recorded its shapes (record_shapes=True): its "
                     "kernels are compared by time, not placed on the chart")
    return notes


GPU_CATEGORIES = ("cuda_runtime", "cuda_driver", "gpu_memcpy", "gpu_memset", "gpu_user_annotation")


def _ran_on_a_gpu(doc: dict, events: list) -> bool:
    """Whether the trace says a GPU took part (its properties, CUDA calls): then its CPU ops'
    times are launch times, not the work's, and are not read as a CPU run."""
    return bool(doc.get("deviceProperties")) or any(
        isinstance(e, dict) and e.get("cat") in GPU_CATEGORIES for e in events)


def _without_kernels(path, doc: dict, events: list) -> Profile:
    """A trace with no kernel events: CUPTI's counter ranges, or a run on the CPU."""
    ranges = range_kernels(path, events)
    if ranges:
        return Profile("PyTorch profiler (CUPTI counter ranges)", str(path), tuple(ranges),
                       (f"{len(ranges)} kernel(s) from CUPTI's range profiler: counted as Nsight "
                        "Compute counts them",))
    if _ran_on_a_gpu(doc, events):
        raise DataFileError(path, 'holds no GPU kernels ("cat": "kernel") although a GPU took part: was '
                                  "the profiler run with ProfilerActivity.CUDA?")
    ops, notes = cpu_kernels(path, events)
    if not ops:
        raise DataFileError(path, 'holds no GPU kernels ("cat": "kernel") and no CPU ops ("cat": '
                                  '"cpu_op"): was the profiler run with ProfilerActivity.CUDA or CPU?')
    shaped = any(k.bytes for k in ops)
    return Profile("PyTorch profiler (Kineto trace, CPU ops)", str(path), tuple(ops), tuple(notes),
                   "FLOPs and bytes from shapes" if shaped else "")


def _device(doc: dict) -> str:
    """The GPUs the trace's ``deviceProperties`` name (each once), "" where it names none."""
    properties = doc.get("deviceProperties")
    names = [d.get("name") for d in properties if isinstance(d, dict)] if isinstance(properties, list) else []
    return ", ".join(dict.fromkeys(n.strip() for n in names if isinstance(n, str) and n.strip()))


def _whole(path: str | Path, data: bytes | None) -> Any:
    """The trace parsed at once (its bytes, or the file's): for a trace given as bytes, or
    one the stream cannot read, whose error this words."""
    raw = read_bytes(path, MAX_TRACE_BYTES) if data is None else data
    data = gunzipped(path, raw)
    if raw.startswith(GZIP_MAGIC):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DataFileError(path, f"is not a trace: its gzip holds binary data (byte {exc.start:,} once "
                                      "expanded is not UTF-8 text), not a PyTorch profiler trace's JSON"
                                ) from None
    else:
        text = decoded(path, data)
    return parse_json(text, path)


def read_kineto(path: str | Path, data: bytes | None = None, progress: Progress | None = None) -> Profile:
    """The profile in a PyTorch profiler trace (``data``: its bytes, already read). The file
    is read as a stream (``trace_stream``), keeping only the events and fields read here;
    ``progress`` is told the share of the file read as it goes (and may raise to stop)."""
    doc, named = None, None
    if data is None:
        with contextlib.suppress(Unstreamable):
            doc, named = streamed(path, MAX_TRACE_BYTES, progress)
    if doc is None:
        doc = _whole(path, data)
    events = doc.get("traceEvents") if isinstance(doc, dict) else None
    if not isinstance(events, list):
        raise DataFileError(path, 'has no "traceEvents" list: not a PyTorch profiler trace')
    foreign = foreign_device(doc, categories(events) if named is None else named)
    if foreign:
        raise DataFileError(path, f"ran on {foreign}, an accelerator the project does not model (it reads "
                                  "NVIDIA and AMD GPUs' kernels, and CPU runs): refused")
    cpu_ops, launched, marks = _sorted(events)
    work, ops = _op_work(path, events, cpu_ops)
    kernels: list[Launch] = []
    for index in launched:
        event = events[index]
        if event.get("ph") != "X":
            continue
        name = event.get("name")
        if not isinstance(name, str) or not name:
            raise DataFileError(path, "a kernel needs a name", f"event {index}", "name")
        args = args_of(event)
        seconds = _number(path, event, "dur", index) * 1e-6
        op = _external_id(args)
        kernels.append(Launch(op, ProfiledKernel(name, seconds, op=ops.get(op, "")), event.get("ts"),
                              correlation_of(event), device_of(event)))
    graph_notes = graphs(path, marks, kernels)  # (they read no other events)
    if not kernels:
        return _without_kernels(path, doc, events)
    kernels, outside, steps = in_steps(marks, kernels)
    devices, device_notes = by_device(kernels)
    longest: dict[Any, int] = {}
    for i, launch in enumerate(kernels):
        op = launch.op
        if op in work and (op not in longest or launch.kernel.time_s > kernels[longest[op]].kernel.time_s):
            longest[op] = i
    placed = [_with_work(k.kernel, work[k.op]) if longest.get(k.op) == i else k.kernel
              for i, k in enumerate(kernels)]
    used = [work[op] for op in longest]
    notes = [*outside, *device_notes, *graph_notes, *_notes(used)]
    estimated = " and ".join(part for part, made in (
        ("FLOPs", any(w.flops is not None and not w.counted for w in used)),
        ("bytes", any(w.moved for w in used))) if made)
    profile = Profile("PyTorch profiler (Kineto trace)", str(path), tuple(placed), tuple(notes),
                      f"{estimated} from shapes" if estimated else "", steps, _device(doc), devices)
    _release(events)
    return profile


def _release(events: list, chunk: int = 10_000) -> None:
    """Free a read trace's events a chunk at a time: freed at once, the 850,000 of a 250 MB
    trace take a third of a second in one step that holds Python's lock, and the window,
    whose GUI thread waits for it while the trace is read in the background, stops as long."""
    while events:
        del events[-chunk:]
