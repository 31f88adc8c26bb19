"""A profile: the kernels a real run launched, each measured (time, FLOPs by precision,
bytes moved at each memory level), and what a chart places of them."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

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
    tool: str  # "Nsight Compute (CSV, raw page)", …
    source: str  # the file
    kernels: tuple[ProfiledKernel, ...]
    notes: tuple[str, ...] = ()

    @property
    def time_s(self) -> float:
        return sum(k.time_s for k in self.kernels)

    @cached_property
    def shown(self) -> tuple[ProfiledKernel, ...]:
        """``folded()`` at its default share, worked out once (a chart asks on every frame)."""
        return self.folded()

    def folded(self, share: float = FOLD_SHARE) -> tuple[ProfiledKernel, ...]:
        """The kernels by name (launches of one kernel summed), largest time first, those
        under ``share`` of the total time folded into one row called "other"."""
        by_name: dict[str, ProfiledKernel] = {}
        for k in self.kernels:
            by_name[k.name] = _sum(by_name[k.name], k, k.name) if k.name in by_name else k
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
    keys = lambda x, y: dict.fromkeys([*x, *y])  # noqa: E731 - both dicts' keys, in order
    return ProfiledKernel(name, a.time_s + b.time_s,
                          {p: a.flops.get(p, 0) + b.flops.get(p, 0) for p in keys(a.flops, b.flops)},
                          {lv: a.bytes.get(lv, 0) + b.bytes.get(lv, 0) for lv in keys(a.bytes, b.bytes)},
                          a.launches + b.launches, a.tensor_instructions + b.tensor_instructions)
