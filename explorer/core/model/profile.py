"""A profile: the kernels a real run launched, each measured (time, FLOPs by precision,
bytes moved at each memory level), what a chart places of them, and the form a session
keeps it in (its kernels by name, not the raw file; read back field by field)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from explorer.core.files.datafile import Fields, brief
from explorer.core.units import PRECISIONS

LEVELS = ("dram", "l2", "l1")  # main memory, the L2 cache, the L1 / texture cache
OTHER = "other"  # the kernels folded together, each under ``FOLD_SHARE`` of the time
FOLD_SHARE = 0.01


@dataclass(frozen=True)
class ProfiledKernel:
    """One kernel (or several folded into one row: ``launches``), as a profiler counted it."""

    name: str
    time_s: float
    flops: dict[str, int] = field(default_factory=dict)  # precision → FLOPs ("fp32", "fp64", "fp16")
    bytes: dict[str, int] = field(default_factory=dict)  # level → bytes (``LEVELS``)
    launches: int = 1
    tensor_instructions: int = 0  # tensor-core instructions: work not in ``flops`` (see ``ncu``)
    shape: tuple[int, ...] = ()  # (K, N) of a product of a weight matrix, from recorded shapes; () unknown
    op: str = ""  # the op that launched it, where a trace links them ("aten::addmm"); "" unknown

    def __hash__(self) -> int:  # (its dicts are never changed after reading)
        return hash((self.name, self.time_s, self.launches))

    @property
    def total_flops(self) -> int:
        return sum(self.flops.values())

    @property
    def flops_per_s(self) -> float:
        return self.total_flops / self.time_s if self.time_s > 0 else 0.0

    def intensity(self, level: str = "dram") -> float | None:
        """FLOPs per byte at ``level`` (None: no bytes counted there)."""
        moved = self.bytes.get(level)
        return self.total_flops / moved if moved else None


@dataclass(frozen=True)
class Profile:
    """A real run's kernels as a profiler recorded them, with the tool and the file they came from."""

    tool: str  # "Nsight Compute (CSV, raw page)", …
    source: str  # the file
    kernels: tuple[ProfiledKernel, ...]
    notes: tuple[str, ...] = ()
    estimated: str = ""  # what is worked out, not counted ("bytes from shapes"); "" when all is counted
    steps: int = 1  # the steps of the run its kernels cover, where the profile marks them (a trace's)
    device: str = ""  # the GPU (or CPU) it ran on, as the profile names it ("" where it does not)
    devices: int = 1  # the GPUs its kernels ran on (a trace of one process driving several)

    @property
    def time_s(self) -> float:
        return sum(k.time_s for k in self.kernels)

    @cached_property
    def shown(self) -> tuple[ProfiledKernel, ...]:
        """``folded()`` at its default share, by name and product shape (a chart places each
        shape's products where they ran), worked out once (a chart asks on every frame)."""
        return self.folded(by_shape=True)

    def folded(self, share: float = FOLD_SHARE, by_shape: bool = False) -> tuple[ProfiledKernel, ...]:
        """The kernels by name (launches of one kernel summed; by name and product shape with
        ``by_shape``), largest time first, those under ``share`` of the total time folded
        into one row called "other"."""
        by_name: dict[tuple[str, tuple[int, ...]], ProfiledKernel] = {}
        for k in self.kernels:
            key = (k.name, k.shape if by_shape else ())
            by_name[key] = _sum(by_name[key], k, k.name) if key in by_name else k
        total = self.time_s
        kept = sorted((k for k in by_name.values() if k.time_s >= share * total), key=lambda k: -k.time_s)
        small = [k for k in by_name.values() if k.time_s < share * total]
        if small:
            other = small[0]
            for k in small[1:]:
                other = _sum(other, k, OTHER)
            kept.append(_sum(other, ProfiledKernel(OTHER, 0.0, launches=0), OTHER))
        return tuple(kept)


def _sum(a: ProfiledKernel, b: ProfiledKernel, name: str) -> ProfiledKernel:
    def keys(x: dict[str, int], y: dict[str, int]) -> dict[str, None]:  # both dicts' keys, in order
        return dict.fromkeys([*x, *y])

    def empty(k: ProfiledKernel) -> bool:  # the zero-time kernel "other" starts from
        return k.time_s == 0 and not k.bytes and not k.flops

    def known(level: str) -> bool:  # a cache's bytes add up only where both counted them
        return level == "dram" or empty(a) or empty(b) or (level in a.bytes and level in b.bytes)

    return ProfiledKernel(name, a.time_s + b.time_s,
                          {p: a.flops.get(p, 0) + b.flops.get(p, 0) for p in keys(a.flops, b.flops)},
                          {lv: a.bytes.get(lv, 0) + b.bytes.get(lv, 0) for lv in keys(a.bytes, b.bytes)
                           if known(lv)},
                          a.launches + b.launches, a.tensor_instructions + b.tensor_instructions,
                          a.shape if a.shape == b.shape or empty(b) else b.shape if empty(a) else (),
                          "" if name == OTHER else a.op or b.op)  # (a kernel's ops are of one kind)


# -- a profile kept in a session --------------------------------------------------------------------
MAX_SAVED_KERNELS = 500  # kernels by name a session keeps; the smallest beyond fold into "other"
MAX_NAME = 2000  # characters of a kernel's name (C++ templates make long ones)
MAX_SECONDS = 1e8  # one kernel row's time: far above any profiled run
MAX_COUNT = 10**21  # FLOPs, bytes or launches of one kernel's row: far above any real run
KEYS = ("name", "time_s", "launches", "flops", "bytes", "tensor_instructions", "shape", "op")
MAX_DIM = 1 << 40  # one side of a product's weight matrix
MAX_STEPS = 1 << 20  # steps one profile covers
MAX_DEVICES = 1 << 16  # GPUs one profile's kernels ran on
FLOP_KEYS = (*PRECISIONS, "unknown")


def kept(profile: Profile, limit: int = MAX_SAVED_KERNELS) -> Profile:
    """``profile`` as a session keeps it, within what ``read_saved_profile`` accepts: its
    file's name (not where it lay), its kernels by name and product shape (launches summed; names cut to
    MAX_NAME characters, counts to MAX_COUNT, times under MAX_SECONDS), the ``limit`` − 1
    largest and the rest folded into "other" when there are more, largest first."""
    by_name = sorted((_bounded(k) for k in profile.folded(0.0, by_shape=True)), key=lambda k: -k.time_s)
    if len(by_name) > limit:
        rest = by_name[limit - 1:]
        other = rest[0]
        for k in rest[1:]:
            other = _sum(other, k, OTHER)
        folded = [*by_name[:limit - 1], _bounded(replace(other, name=OTHER))]
        by_name = sorted(folded, key=lambda k: -k.time_s)
    source = Path(profile.source).name or "profile"
    return replace(profile, source=source[:MAX_NAME], kernels=tuple(by_name),
                   notes=tuple(n[:MAX_NAME] for n in profile.notes[:100]),
                   estimated=profile.estimated[:MAX_NAME], device=profile.device[:MAX_NAME])


def _bounded(k: ProfiledKernel) -> ProfiledKernel:
    def count(n: int) -> int:
        return max(0, min(int(n), MAX_COUNT))

    return ProfiledKernel((k.name.strip() or "kernel")[:MAX_NAME], min(max(k.time_s, 0.0), MAX_SECONDS),
                          {p: count(n) for p, n in k.flops.items()},
                          {lv: count(n) for lv, n in k.bytes.items()}, count(k.launches),
                          count(k.tensor_instructions),
                          k.shape if len(k.shape) == 2 and all(0 < d <= MAX_DIM for d in k.shape) else (),
                          k.op[:MAX_NAME])


def profile_to_dict(profile: Profile) -> dict[str, Any]:
    """The saved form of ``kept(profile)`` (``read_saved_profile`` reads it back)."""
    def kernel(k: ProfiledKernel) -> dict[str, Any]:
        out: dict[str, Any] = {"name": k.name, "time_s": k.time_s, "launches": k.launches}
        if k.flops:
            out["flops"] = dict(k.flops)
        if k.bytes:
            out["bytes"] = dict(k.bytes)
        if k.tensor_instructions:
            out["tensor_instructions"] = k.tensor_instructions
        if k.shape:
            out["shape"] = list(k.shape)
        if k.op:
            out["op"] = k.op
        return out

    profile = kept(profile)
    out: dict[str, Any] = {"tool": profile.tool, "source": profile.source}
    if profile.steps != 1:
        out["steps"] = profile.steps
    if profile.device:
        out["device"] = profile.device
    if profile.devices != 1:
        out["devices"] = profile.devices
    if profile.notes:
        out["notes"] = list(profile.notes)
    if profile.estimated:
        out["estimated"] = profile.estimated
    out["kernels"] = [kernel(k) for k in profile.kernels]
    return out


def read_saved_profile(fields: Fields) -> Profile:
    """A profile a session kept (``profile_to_dict``), every field checked."""
    tool, source = fields.text("tool"), fields.text("source")
    notes = fields.raw("notes", required=False) or []
    if not isinstance(notes, list) or len(notes) > 100 or not all(
            isinstance(n, str) and len(n) <= MAX_NAME for n in notes):
        raise fields.error("notes", "expected a list of at most 100 sentences")
    estimated = fields.text("estimated", required=False) or ""
    if len(estimated) > MAX_NAME:
        raise fields.error("estimated", f"expected a few words (at most {MAX_NAME} characters)")
    kernels = fields.items("kernels")
    if len(kernels) > MAX_SAVED_KERNELS:
        raise fields.error("kernels", f"a session keeps at most {MAX_SAVED_KERNELS} kernels, "
                                      f"got {len(kernels):,}")
    steps = fields.integer("steps", required=False, minimum=1, maximum=MAX_STEPS, default=1)
    device = fields.text("device", required=False) or ""
    if len(device) > MAX_NAME:
        raise fields.error("device", f"expected a device's name (at most {MAX_NAME} characters)")
    devices = fields.integer("devices", required=False, minimum=1, maximum=MAX_DEVICES, default=1)
    profile = Profile(tool, source, tuple(_read_kernel(fields.child(raw, f"kernels[{i}]"))
                                          for i, raw in enumerate(kernels)), tuple(notes), estimated, steps,
                      device, devices)
    fields.finish()
    return profile


def _read_kernel(entry: Fields) -> ProfiledKernel:
    name = entry.text("name")
    if len(name) > MAX_NAME or not name.strip():
        raise entry.error("name", f"expected a kernel's name (at most {MAX_NAME} characters), "
                                  f"got {len(name):,}")
    time_s = entry.raw("time_s")
    if isinstance(time_s, bool) or not isinstance(time_s, int | float) or not 0 <= time_s <= MAX_SECONDS:
        raise entry.error("time_s", f"expected seconds from 0 to {MAX_SECONDS:g}, got {brief(time_s)}")
    kernel = ProfiledKernel(name, float(time_s), _counts(entry, "flops", FLOP_KEYS),
                            _counts(entry, "bytes", LEVELS),
                            entry.integer("launches", minimum=0, maximum=MAX_COUNT),
                            entry.integer("tensor_instructions", required=False, minimum=0, default=0,
                                          maximum=MAX_COUNT), _shape(entry), _op(entry))
    entry.finish()
    return kernel


def _op(entry: Fields) -> str:
    op = entry.text("op", required=False) or ""
    if len(op) > MAX_NAME:
        raise entry.error("op", f"expected an op's name (at most {MAX_NAME} characters), got {len(op):,}")
    return op


def _shape(entry: Fields) -> tuple[int, ...]:
    shape = entry.raw("shape", required=False)
    if shape is None:
        return ()
    if not isinstance(shape, list) or len(shape) != 2 or not all(
            isinstance(d, int) and not isinstance(d, bool) and 0 < d <= MAX_DIM for d in shape):
        raise entry.error("shape", f"expected a product's [K, N], two whole numbers from 1 to 2^40, "
                                   f"got {brief(shape)}")
    return tuple(shape)


def _counts(entry: Fields, name: str, keys: tuple[str, ...]) -> dict[str, int]:
    counts = entry.mapping(name, required=False)
    for key, value in counts.items():
        if key not in keys:
            raise entry.error(f"{name}.{key}", f"expected one of {', '.join(keys)}")
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
            raise entry.error(f"{name}.{key}", f"expected a whole number from 0 to 1e21, got {brief(value)}")
    return dict(counts)
