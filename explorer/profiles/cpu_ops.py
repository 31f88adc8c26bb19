"""A PyTorch profiler trace of a run on the CPU (``ProfilerActivity.CPU`` only): no GPU
kernels, so the ops are the kernels. Ops nest (``aten::linear`` calls ``aten::t`` and
``aten::addmm``, which calls ``aten::resolve_conj``): each op keeps its own time (its
duration less the ops directly inside it), so no time is counted twice, and the work its
recorded shapes say (``profiles.shapes``: products' FLOPs and attention's; bytes with each
input read once and the result written once; a view or an allocation moves none) unless an
op inside it does the work. The time between ops (Python) is in no op: a note says how
much of the profiled span that is.
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer.core.files.errors import DataFileError
from explorer.core.model.profile import ProfiledKernel
from explorer.profiles.events import args_of
from explorer.profiles.shapes import DTYPE_BYTES, PRECISIONS, op_work, weight_shape

CPU_OP = "cpu_op"


def _span(path, event: dict, index: int) -> tuple[float, float]:
    """(start, duration) of an op, in µs, checked."""
    out = []
    for key in ("ts", "dur"):
        value = event.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 1e18:
            raise DataFileError(path, f"{key} must be a number of at least 0, got {value!r}",
                                f"event {index}", key)
        out.append(float(value))
    return out[0], out[1]


@dataclass(eq=False)
class _Op:
    index: int
    start: float
    end: float
    self_us: float  # its duration less its direct children's
    parent: _Op | None = None


def _nested(spans: list[tuple[float, float, int]]) -> list[_Op]:
    """One thread's ops (start, duration, index), each with the op it runs inside."""
    ops: list[_Op] = []
    stack: list[_Op] = []
    for start, dur, index in sorted(spans, key=lambda s: (s[0], -s[1])):
        while stack and start >= stack[-1].end:
            stack.pop()
        op = _Op(index, start, start + dur, dur, stack[-1] if stack else None)
        if op.parent is not None:
            op.parent.self_us -= dur
        stack.append(op)
        ops.append(op)
    return ops


def _work(event: dict, list_type: str | None) -> tuple[str, int | None, int, tuple[int, ...]]:
    """(precision, FLOPs, bytes, a product's weight shape) of an op from its recorded shapes."""
    args = args_of(event)
    types = args.get("Input type")
    first = types[0] if isinstance(types, list) and types else None
    precision = PRECISIONS.get(first, "unknown") if isinstance(first, str) else "unknown"
    name, dims = str(event["name"]), args.get("Input Dims")
    return (precision, *op_work(name, dims, types, list_type, args.get("Concrete Inputs")),
            weight_shape(name, dims, types) or ())


def _enclosing(inner) -> set[int]:
    """The ops (by id) around any of ``inner``; each walk stops at an op already marked."""
    marked: set[int] = set()
    for op in inner:
        parent = op.parent
        while parent is not None and id(parent) not in marked:
            marked.add(id(parent))
            parent = parent.parent
    return marked


def _kernels(ops: list[_Op], events: list, list_type: str | None) -> list[ProfiledKernel]:
    """Each op with its own time and the work its shapes say, counted once: a product or
    attention (FLOPs) keeps its work unless one inside it does the FLOPs (``aten::linear``'s
    go to the ``aten::addmm`` inside), and the copies inside it are part of it; any other
    op's bytes count unless an op inside it, or a product around it, counts them."""
    work = {id(op): _work(events[op.index], list_type) for op in ops}
    outer_of_flops = _enclosing(op for op in ops if work[id(op)][1])
    outer_of_bytes = _enclosing(op for op in ops if work[id(op)][2])
    products = {id(op) for op in ops if work[id(op)][1] and id(op) not in outer_of_flops}
    in_product: set[int] = set()
    for op in ops:  # parents come before the ops inside them
        if op.parent is not None and (id(op.parent) in products or id(op.parent) in in_product):
            in_product.add(id(op))
    out = []
    for op in sorted(ops, key=lambda o: o.index):
        precision, flops, moved, shape = work[id(op)]
        own = id(op) in products or (not flops and id(op) not in outer_of_bytes and id(op) not in in_product)
        out.append(ProfiledKernel(events[op.index]["name"], max(op.self_us, 0.0) * 1e-6,
                                  {precision: flops} if own and flops else {},
                                  {"dram": moved} if own and moved else {}, shape=shape if own else ()))
    return out


def _commonest_type(events: list, threads: dict) -> str | None:
    """The type most ops' first input has: a tensor list's elements are taken to have it (the
    profiler records a list's shapes, not its type)."""
    counts: dict[str, int] = {}
    for spans in threads.values():
        for _, _, index in spans:
            types = events[index].get("args", {}).get("Input type") if isinstance(
                events[index].get("args"), dict) else None
            first = types[0] if isinstance(types, list) and types else None
            if isinstance(first, str) and first in DTYPE_BYTES:
                counts[first] = counts.get(first, 0) + 1
    return max(counts, key=counts.__getitem__) if counts else None


def cpu_kernels(path, events: list) -> tuple[list[ProfiledKernel], list[str]]:
    """The innermost CPU ops of ``events`` as kernels, and notes on how they were read
    (both empty when the trace holds no CPU op)."""
    threads: dict[tuple, list[tuple[float, float, int]]] = {}
    for index, event in enumerate(events):
        if not isinstance(event, dict) or event.get("ph") != "X" or event.get("cat") != CPU_OP:
            continue
        if not isinstance(event.get("name"), str) or not event["name"]:
            raise DataFileError(path, "an op needs a name", f"event {index}", "name")
        start, dur = _span(path, event, index)
        key = (str(event.get("pid")), str(event.get("tid")))
        threads.setdefault(key, []).append((start, dur, index))
    list_type = _commonest_type(events, threads)
    kernels, covered, span = [], 0.0, 0.0
    for spans in threads.values():
        ops = _nested(spans)
        kernels += _kernels(ops, events, list_type)
        covered += sum(op.end - op.start for op in ops if op.parent is None)
        span = max(span, max(op.end for op in ops) - ops[0].start)
    if not kernels:
        return [], []
    shaped = sum(1 for k in kernels if k.bytes)
    notes = [f"a CPU run: its {len(kernels):,} ops are its kernels, each with its own time (less the "
             "ops inside it) and the work of the deepest op that does it",
             f"work of {shaped:,} op(s) from their recorded shapes (record_shapes): products' FLOPs, "
             "and bytes with each input read once and the result written once, an estimate"
             if shaped else "no op recorded its shapes (record_shapes=True): compared by time only"]
    if list_type:
        notes.append(f"a tensor list's elements (aten::cat's inputs) are taken as {list_type}, the type most "
                     "ops' inputs have: the profiler records a list's shapes, not its type")
    if span > 0:
        notes.append(f"{max(0.0, 1 - covered / span):.0%} of the profiled span ({span / 1e3:,.1f} ms) is in "
                     "no op: Python and other work between ops, which no kernel time counts")
    return kernels, notes
