"""A profile beside the prediction of the same workload: each kernel assigned to a class of
the predicted ops by its name (``resources/profiles/kernel-names.yaml``), and per class the
bound, the expected time and the measured time of one step (the profile may hold several:
``steps``). Where the profile recorded a product's shapes (a PyTorch trace with
``record_shapes``), its kernels are also matched to the predicted ops of that shape: the
query projection's, the MLP's, the output head's, each with its own times."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from explorer.core.analysis.analysis import Analysis
from explorer.core.analysis.expected import Expected, OpClass, class_times, op_class
from explorer.core.files.datafile import DataFileError, Fields, read_entries
from explorer.core.hardware.hardware import Hardware
from explorer.core.model.applicability import Phase
from explorer.core.model.ops import Op
from explorer.core.model.profile import Profile, ProfiledKernel
from explorer.core.model.quantization import value_bytes
from explorer.core.units import format_si, format_time
from explorer.paths import resource_path

SCHEMA = 1
CLASSES = {"products": OpClass.GEMM, "attention": OpClass.ATTENTION, "memory": OpClass.MEMORY,
           "communication": OpClass.LINK}


@dataclass(frozen=True)
class Pattern:
    """A kernel-name pattern and the class of ops it matches."""

    id: str  # its class (the file's entries are told apart by order)
    op_class: str
    regex: re.Pattern[str]


@dataclass(frozen=True)
class Row:
    """One class of ops: its roofline bound, expected and measured times."""

    op_class: str
    bound_s: float
    expected_s: float | None
    measured_s: float
    kernels: tuple[str, ...]


@dataclass(frozen=True)
class OpRow:
    """The products of weights with one shape: the predicted ops of that shape (``ops``, by
    name: several when two share it, as a query and an output projection can) and the
    profiled kernels the trace recorded that shape for. ``fused``: a kernel that does the
    work of several adjacent predicted ops at once (an engine's fused query, key and value
    projection, its gate and up projection), its N their N summed."""

    ops: tuple[str, ...]
    shape: tuple[int, ...]  # (K, N) as the profile recorded it
    bound_s: float
    expected_s: float | None
    measured_s: float
    kernels: tuple[str, ...]
    fused: bool = False

    @property
    def name(self) -> str:
        """The row's name: its ops, "(fused)" after those one kernel does together."""
        return " + ".join(self.ops) + (" (fused)" if self.fused else "")


@dataclass(frozen=True)
class Comparison:
    """A profile against the prediction, class by class, with the kernels no pattern matched."""

    rows: tuple[Row, ...]
    unmatched: tuple[ProfiledKernel, ...]
    steps: int
    products: tuple[OpRow, ...] = ()  # matched by shape, where the profile recorded shapes
    # (K, N) → one step's time of the profiled products of that shape matched to no predicted op
    unshaped: tuple[tuple[tuple[int, ...], float], ...] = ()


def _read_pattern(fields: Fields) -> Pattern:
    name = fields.text("class", choices=CLASSES)
    text = fields.text("pattern")
    try:
        regex = re.compile(text, re.IGNORECASE)
    except re.error as exc:
        raise fields.error("pattern", f"is not a regular expression: {exc}") from None
    return Pattern(f"{name}:{text}", CLASSES[name], regex)


def read_patterns(path: str | Path | None = None) -> list[Pattern]:
    """The patterns of ``path``, or the bundled ones (read once: a chart asks on every frame)."""
    return read_entries(path, "patterns", SCHEMA, _read_pattern) if path else list(_bundled())


@lru_cache(maxsize=1)
def _bundled() -> tuple[Pattern, ...]:
    return tuple(read_entries(resource_path("profiles", "kernel-names.yaml"), "patterns", SCHEMA,
                              _read_pattern))


def class_of(name: str, patterns: list[Pattern] | None = None) -> str | None:
    """The class of op a kernel's ``name`` matches (None: no pattern); the bundled patterns by
    default, each name matched once (a chart asks for every kernel on every frame)."""
    if patterns is None:
        return _bundled_class(name)
    return next((p.op_class for p in patterns if p.regex.search(name)), None)


def kernel_class(kernel: ProfiledKernel, patterns: list[Pattern] | None = None) -> str | None:
    """The class of ``kernel`` by its name, else by the op that launched it (cuBLAS's
    ``nvjet_*`` kernels name no product, their ``aten::addmm`` does)."""
    return class_of(kernel.name, patterns) or (class_of(kernel.op, patterns) if kernel.op else None)


@lru_cache(maxsize=8192)
def _bundled_class(name: str) -> str | None:
    return class_of(name, list(_bundled()))


def compare(profile: Profile, a: Analysis, e: Expected | None, steps: int | None = None,
            patterns: list[Pattern] | None = None) -> Comparison:
    """Per class of op: one step's bound and expected time (``a``, ``e``) and the measured
    time of the profile's kernels of that class, divided by ``steps`` (by default the
    steps the profile marks) and by the GPUs they ran on (each device's own time)."""
    steps = profile.steps if steps is None else steps
    if steps < 1:
        raise DataFileError(profile.source, f"a profile covers at least one step, not {steps}")
    measured: dict[str, list[ProfiledKernel]] = {c: [] for c in CLASSES.values()}
    unmatched: list[ProfiledKernel] = []
    for kernel in profile.folded(share=0.0):
        op_class = kernel_class(kernel, patterns)
        (measured[op_class] if op_class else unmatched).append(kernel)
    bound = class_times(a, a.time_s)
    rows = tuple(Row(c, bound[c], e.parts[c] if e is not None else None,
                     sum(k.time_s for k in measured[c]) / steps / profile.devices,
                     tuple(k.name for k in measured[c]))
                 for c in CLASSES.values() if bound[c] > 0 or measured[c])
    return Comparison(rows, tuple(unmatched), steps, by_shape(profile, a, e, steps),
                      unmatched_shapes(profile, a, steps))


def _model_tokens(name: str) -> set[str]:
    """The model numbers a device's name holds ("H100", "MI300X", "RTX4090", "GTX1080", "A6000",
    "GB200", "RTXPRO6000"), upper case."""
    spaced = re.sub(r"(?i)\bRTX\s+PRO\s+(\d{4})", r"RTXPRO\1", name)
    spaced = re.sub(r"(?i)\b(RTX|GTX)\s+(\d{3,4})", r"\1\2", spaced)
    model = (r"(?i)(?<![\w])(MI\d{3}[A-Z]?|RTXPRO\d{4}|[RG]TX\d{3,4}|G[BH]\d{3}|A\d{4}|[A-Z]\d{1,3}[A-Z]?)"
             r"(?![\w])")
    return {t.upper() for t in re.findall(model, spaced)}


def _vendor(name: str) -> str:
    lowered = name.lower()
    if any(w in lowered for w in ("nvidia", "tesla", "geforce", "quadro")):
        return "nvidia"
    if any(w in lowered for w in ("amd", "radeon", "instinct")):
        return "amd"
    return ""


def device_mismatch(profile_device: str, hardware: Hardware | None) -> str:
    """A warning where the GPU the profile names is not ``hardware`` ("" where they agree or
    the profile names none): an MI300X's kernels beside an H100's roofs say nothing of
    either, nor an H100 PCIe's (2 TB/s) beside an H100 SXM's (3.35 TB/s)."""
    if not profile_device or hardware is None:
        return ""
    theirs, ours = _model_tokens(profile_device), _model_tokens(hardware.name)
    vendors = _vendor(profile_device), _vendor(hardware.name)
    forms = _form(profile_device), _form(hardware.name)
    differs = ((all(vendors) and vendors[0] != vendors[1]) or (theirs and ours and not theirs & ours)
               or (all(forms) and forms[0] != forms[1]))
    if not differs:
        return ""
    return (f"the profile ran on {profile_device}, not on {hardware.name} (the device compared): its "
            "times say how that device ran, not this one")


def _form(name: str) -> str:
    """The board a data-centre GPU's name says it is on ("PCIE", "SXM", "NVL"), else ""."""
    found = re.search(r"(?i)(?<![a-z])(pcie|sxm|nvl)", name)
    return found.group(1).upper() if found else ""


def weight_shapes(a: Analysis) -> dict[tuple[int, int], list[int]]:
    """(K, N) → the indices of ``a``'s products of weights with that shape: K is the op's
    depth, N its weights over K (its bias, N more values, rounds away)."""
    out: dict[tuple[int, int], list[int]] = {}
    for i, o in enumerate(a.ops):
        depth = int(o.depth) if np.ndim(o.depth) == 0 else 0
        if op_class(o) != OpClass.GEMM or depth <= 0 or not o.weight_bytes:
            continue
        values = float(o.weight_bytes) / value_bytes(a.model, a.params, o)
        out.setdefault((depth, int(values // depth)), []).append(i)
    return out


def matched_keys(keys: Iterable[tuple[int, int]], shape: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    """The predicted (K, N) a profiled product of ``shape`` may be: K the same, N within 1 %
    (a bias or a scale widens a predicted op's N by a few values, and a recorded shape does
    not tell a product with a bias from one without: Qwen's query projection, biased, and
    its output projection, not, are both 1,024 × 1,024 in a trace)."""
    if len(shape) != 2:
        return ()
    k, n = shape
    return tuple(key for key in keys if key[0] == k and abs(key[1] - n) <= 0.01 * n)


def fused_ops(a: Analysis, shape: tuple[int, ...],
              predicted: dict[tuple[int, int], list[int]] | None = None) -> tuple[int, ...]:
    """The indices of the adjacent predicted products of weights a profiled product of
    ``shape`` does together (an engine fuses the query, key and value projections into one
    product, the gate and up projections into another): two or more ops next to each other
    in the model's order, each of depth K, whose N sum to the kernel's N (within 1 %, as
    ``matched_keys``). () where there are none, and where the shape matches one op alone."""
    predicted = weight_shapes(a) if predicted is None else predicted
    if len(shape) != 2 or matched_keys(predicted, shape):
        return ()
    k, n = shape
    shape_of = {i: key for key, indices in predicted.items() for i in indices}
    for start in sorted(i for i, key in shape_of.items() if key[0] == k):
        run, width = [start], shape_of[start][1]
        while run[-1] + 1 in shape_of and shape_of[run[-1] + 1][0] == k and width < 0.99 * n:
            run.append(run[-1] + 1)
            width += shape_of[run[-1]][1]
        if len(run) > 1 and abs(width - n) <= 0.01 * n:
            return tuple(run)
    return ()


def ops_of_shape(a: Analysis, shape: tuple[int, ...]) -> list[Op]:
    """The predicted products of weights a profiled product of ``shape`` is matched to, as
    ``by_shape`` matches them: those of its shape, else the adjacent ones it fuses (none in
    training)."""
    if a.params.phase == Phase.TRAIN:
        return []
    predicted = weight_shapes(a)
    alone = [i for key in matched_keys(predicted, shape) for i in predicted[key]]
    return [a.ops[i] for i in alone or fused_ops(a, shape, predicted)]


def by_shape(profile: Profile, a: Analysis, e: Expected | None,
             steps: int | None = None) -> tuple[OpRow, ...]:
    """Per shape of the workload's products of weights, one step's bound and expected time
    and the measured time of the kernels the profile recorded that shape for; predicted
    shapes a profiled one cannot tell apart (``matched_keys``) share one row. A kernel that
    fuses adjacent ops (``fused_ops``: Qwen's q, k and v in SGLang) is compared with those
    ops together, in a row of its own, and the ops it fuses leave the rows of their shape
    (the output projection, as wide as the query's, is then compared alone). None in
    training, whose backward products have the forward's shapes transposed (fc1's gradient
    is as wide as fc2)."""
    if a.params.phase == Phase.TRAIN:
        return ()
    steps = profile.steps if steps is None else steps
    predicted = weight_shapes(a)
    measured: dict[tuple[tuple[int, int], ...], list[ProfiledKernel]] = {}
    fused: dict[tuple[int, ...], list[ProfiledKernel]] = {}
    for kernel in profile.kernels:
        keys = matched_keys(predicted, kernel.shape)
        if not keys:
            run = fused_ops(a, kernel.shape, predicted)
            if run:
                fused.setdefault(run, []).append(kernel)
            continue
        joined = [group for group in measured if set(group) & set(keys)]  # a predicted shape in one row
        kernels = [kernel, *(k for group in joined for k in measured.pop(group))]
        measured[tuple(sorted({*keys, *(key for group in joined for key in group)}))] = kernels
    claimed = {i for run in fused for i in run}
    groups: list[tuple[list[int], list[ProfiledKernel], bool]] = []
    for keys, kernels in measured.items():
        ops = [i for key in keys for i in predicted[key]]
        groups.append(([i for i in ops if i not in claimed] or ops, kernels, False))
    groups += [(list(run), kernels, True) for run, kernels in fused.items()]
    rows = []
    for ops, kernels, together in sorted(groups, key=lambda g: min(g[0])):  # the model's order
        names = tuple(dict.fromkeys(a.ops[i].name for i in sorted(ops)))
        bound = sum(float(a.time_s[i]) * a.ops[i].count for i in ops)
        expected = sum(float(e.op_time_s[i]) * a.ops[i].count for i in ops) if e is not None else None
        kernel_names = tuple(dict.fromkeys(k.name for k in kernels))
        seconds = sum(k.time_s for k in kernels) / steps / profile.devices
        rows.append(OpRow(names, kernels[0].shape, bound, expected, seconds, kernel_names, together))
    return tuple(rows)


def unmatched_shapes(profile: Profile, a: Analysis,
                     steps: int | None = None) -> tuple[tuple[tuple[int, ...], float], ...]:
    """The products' shapes (K, N) the profile recorded that ``by_shape`` matched to no
    predicted op, each with one step's time of its kernels, longest first (none in
    training, whose shapes ``by_shape`` does not match)."""
    if a.params.phase == Phase.TRAIN:
        return ()
    steps = profile.steps if steps is None else steps
    predicted = weight_shapes(a)
    times: dict[tuple[int, ...], float] = {}
    for kernel in profile.kernels:
        if len(kernel.shape) == 2 and not matched_keys(predicted, kernel.shape) \
                and not fused_ops(a, kernel.shape, predicted):
            times[kernel.shape] = times.get(kernel.shape, 0.0) + kernel.time_s / steps / profile.devices
    return tuple(sorted(times.items(), key=lambda item: -item[1]))


# How far past a device's roof an estimate may go before it is no measurement: a nominal
# bandwidth is rounded, and data an estimate counts once may be served by a cache.
ROOF_MARGIN = 1.25


def beyond_roof(kernel: ProfiledKernel, hardware: Hardware, estimated: str) -> str:
    """A note where ``kernel``'s bytes or FLOPs, worked out from shapes (``estimated``: the
    profile's words for what is estimated, "bytes from shapes"), would have it move data
    faster than ``hardware``'s main memory or compute faster than its fastest peak of the
    kernel's precision, by more than ``ROOF_MARGIN``: the estimate is wrong (vLLM's KV-cache
    write, given the whole cache's bytes), not the device. "" where it is within the roofs
    or counted, not estimated."""
    if kernel.time_s <= 0:
        return ""
    notes = []
    bandwidth = hardware.bandwidth_bytes_per_s
    rate = kernel.bytes.get("dram", 0) / kernel.time_s
    if "bytes" in estimated and bandwidth > 0 and rate > ROOF_MARGIN * bandwidth:
        notes.append(f"{format_si(kernel.bytes['dram'], 'B')} in {format_time(kernel.time_s)}, "
                     f"{format_si(rate, 'B/s')}, {rate / bandwidth:,.0f}× the "
                     f"{format_si(bandwidth, 'B/s')} of its memory")
    if "FLOPs" in estimated and kernel.flops:
        precision = max(kernel.flops, key=lambda p: kernel.flops[p])
        peak = hardware.peak(precision)
        if peak is not None and kernel.flops_per_s > ROOF_MARGIN * peak.flops_per_s:
            notes.append(f"{format_si(kernel.flops_per_s, 'FLOP/s')}, "
                         f"{kernel.flops_per_s / peak.flops_per_s:,.0f}× its {peak.label}")
    if not notes:
        return ""
    name = kernel.name if len(kernel.name) <= 120 else kernel.name[:119] + "…"
    return (f"{name} ({kernel.launches:,} launch(es)): its estimate from shapes, "
            f"{'; '.join(notes)} on {hardware.name}, is beyond the device's roof: not a measurement, "
            "not placed on the chart")


def beyond_roofs(profile: Profile, hardware: Hardware | None) -> tuple[tuple[ProfiledKernel, str], ...]:
    """Each of ``profile``'s kernels (its launches summed, each product shape apart) whose
    estimate is beyond ``hardware``'s roofs (``beyond_roof``), with its note."""
    if hardware is None or not profile.estimated:
        return ()
    found = ((k, beyond_roof(k, hardware, profile.estimated)) for k in profile.folded(0.0, by_shape=True))
    return tuple((k, note) for k, note in found if note)
