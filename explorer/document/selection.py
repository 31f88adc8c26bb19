"""What the user has selected: an op of the workload or a roof of a shown device."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OpRef:
    """A selected op of the workload, by name (``down_proj``)."""

    name: str


@dataclass(frozen=True)
class RoofRef:
    """A selected roof: a shown device's compute roof (by label, ``bf16 matrix``) or its
    bandwidth roof (by memory level, ``HBM3``)."""

    device: str
    kind: str  # "compute" or "bandwidth"
    label: str


Selection = OpRef | RoofRef | None
