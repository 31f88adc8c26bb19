"""KV offload for the serving plan: sequences beyond the devices' KV-cache wall keep their
cache in host memory (a given amount a device) and every decode step reads each of them
over the device's host link (the catalogue's link of tier ``host``, one direction), not
overlapped with the step: an upper bound on its time. An inference pipeline runs its
stages in turn, each waiting for its own layers' caches: the read counts once a stage."""

from __future__ import annotations

import math
from dataclasses import dataclass

from explorer.core.analysis.memory import weights_and_kv
from explorer.core.hardware.hardware import Hardware, Link, Tier
from explorer.core.model.models import ModelSpec
from explorer.core.model.parameters import MAX_BATCH
from explorer.core.model.workload import WorkloadError, WorkloadParams
from explorer.core.units import format_bytes


@dataclass(frozen=True)
class Offload:
    device_wall: int  # sequences whose cache the devices hold (every replica)
    wall: int  # with those host memory holds
    seconds: float  # one offloaded sequence's cache over the link, every stage in turn
    link: Link

    @classmethod
    def of(cls, model: ModelSpec, paged: WorkloadParams, hardware: Hardware, wall: int,
           host_bytes: float, full: WorkloadParams | None = None) -> Offload:
        """The offload of ``host_bytes`` a device, each step reading a cache of ``paged``'s
        context and host memory sized for ``full``'s (the last token's; default ``paged``);
        a ``WorkloadError`` where the device has no host link or the memory holds no
        sequence's cache."""
        link = hardware.link(Tier.HOST)
        if link is None:
            raise WorkloadError(f"the catalogue gives {hardware.name} no host link: its KV cache cannot be "
                                "offloaded (leave KV offload at none)")
        per_sequence = weights_and_kv(model, full or paged)[1]  # one sequence's cache on one device
        if host_bytes < per_sequence:
            raise WorkloadError(f"{format_bytes(host_bytes)} of host memory a device holds no sequence's "
                                f"{format_bytes(per_sequence)} of KV cache: offload at least that much")
        extra = int(host_bytes // per_sequence) * paged.split.batch_share
        read = weights_and_kv(model, paged)[1]  # a cache at the middle of its output, every step
        seconds = read / link.per_direction_bytes_per_s * paged.split.pp
        return cls(wall, min(MAX_BATCH, wall + extra), seconds, link)

    def step_s(self, batch: int, share: int) -> float:
        """What a decode step of ``batch`` sequences waits for the offloaded caches (each
        replica's beyond its share of the wall)."""
        local, on_device = math.ceil(batch / share), self.device_wall // share
        return max(0, local - on_device) * self.seconds
