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
    profiled kernels the trace recorded that shape for."""

    ops: tuple[str, ...]
    shape: tuple[int, ...]  # (K, N) as the profile recorded it
    bound_s: float
    expected_s: float | None
    measured_s: float
    kernels: tuple[str, ...]


@dataclass(frozen=True)
class Comparison:
    """A profile against the prediction, class by class, with the kernels no pattern matched."""

    rows: tuple[Row, ...]
    unmatched: tuple[ProfiledKernel, ...]
    steps: int
    products: tuple[OpRow, ...] = ()  # matched by shape, where the profile recorded shapes


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
    return Comparison(rows, tuple(unmatched), steps, by_shape(profile, a, e, steps))


def _model_tokens(name: str) -> set[str]:
    """The model numbers a device's name holds ("H100", "MI300X", "RTX4090"), upper case."""
    spaced = re.sub(r"(?i)\bRTX\s+(\d{4})", r"RTX\1", name)
    return {t.upper() for t in re.findall(r"(?i)(?<![\w])(MI\d{3}[A-Z]?|RTX\d{4}|[A-Z]\d{1,3}[A-Z]?)(?![\w])",
                                            spaced)}


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
    either."""
    if not profile_device or hardware is None:
        return ""
    theirs, ours = _model_tokens(profile_device), _model_tokens(hardware.name)
    vendors = _vendor(profile_device), _vendor(hardware.name)
    differs = (all(vendors) and vendors[0] != vendors[1]) or (theirs and ours and not theirs & ours)
    if not differs:
        return ""
    return (f"the profile ran on {profile_device}, not on {hardware.name} (the device compared): its "
            "times say how that device ran, not this one")


def weight_shapes(a: Analysis) -> dict[tuple[int, int], list[int]]:
    """(K, N) → the indices of ``a``'s products of weights with that shape: K is the op's
    depth, N its weights over K (its bias, N more values, rounds away)."""
    out: dict[tuple[int, int], list[int]] = {}
    for i, o in enumerate(a.ops):
        depth = int(o.depth) if np.ndim(o.depth) == 0 else 0
        if op_class(o) != OpClass.GEMM or depth <= 0 or not o.weight_bytes:
            continue
        values = float(o.weight_bytes) / a.params.weight_bytes
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


def ops_of_shape(a: Analysis, shape: tuple[int, ...]) -> list[Op]:
    """The predicted products of weights a profiled product of ``shape`` is matched to, as
    ``by_shape`` matches them (none in training)."""
    if a.params.phase == Phase.TRAIN:
        return []
    predicted = weight_shapes(a)
    return [a.ops[i] for key in matched_keys(predicted, shape) for i in predicted[key]]


def by_shape(profile: Profile, a: Analysis, e: Expected | None,
             steps: int | None = None) -> tuple[OpRow, ...]:
    """Per shape of the workload's products of weights, one step's bound and expected time
    and the measured time of the kernels the profile recorded that shape for; predicted
    shapes a profiled one cannot tell apart (``matched_keys``) share one row. None in
    training, whose backward products have the forward's shapes transposed (fc1's gradient
    is as wide as fc2)."""
    if a.params.phase == Phase.TRAIN:
        return ()
    steps = profile.steps if steps is None else steps
    predicted = weight_shapes(a)
    measured: dict[tuple[tuple[int, int], ...], list[ProfiledKernel]] = {}
    for kernel in profile.kernels:
        keys = matched_keys(predicted, kernel.shape)
        if not keys:
            continue
        joined = [group for group in measured if set(group) & set(keys)]  # a predicted shape in one row
        kernels = [kernel, *(k for group in joined for k in measured.pop(group))]
        measured[tuple(sorted({*keys, *(key for group in joined for key in group)}))] = kernels
    rows = []
    for keys in sorted(measured, key=lambda ks: min(predicted[k][0] for k in ks)):  # the model's order
        ops = [i for key in keys for i in predicted[key]]
        names = tuple(dict.fromkeys(a.ops[i].name for i in sorted(ops)))
        bound = sum(float(a.time_s[i]) * a.ops[i].count for i in ops)
        expected = sum(float(e.op_time_s[i]) * a.ops[i].count for i in ops) if e is not None else None
        kernel_names = tuple(dict.fromkeys(k.name for k in measured[keys]))
        seconds = sum(k.time_s for k in measured[keys]) / steps / profile.devices
        rows.append(OpRow(names, measured[keys][0].shape, bound, expected, seconds, kernel_names))
    return tuple(rows)
