"""Little's law for memory: bandwidth = bytes in flight / latency.

A memory answers a request only after its latency (about 400 ns for HBM on an A100,
measured unloaded). To stream at its peak bandwidth the chip must keep
``peak × latency`` bytes requested and not yet answered; with fewer, the bandwidth it
sees is ``bytes in flight / latency``. This is why a GPU runs tens of thousands of
threads: their outstanding loads are the bytes in flight.

The latencies are unloaded (a pointer chase on an idle chip). Under load queues make the
latency longer, so ``peak × latency`` is a lower bound on the bytes in flight a chip needs,
and the sharp knee of ``min(peak, in flight / latency)`` is an idealisation.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from explorer.core.hardware.hardware import Hardware


class NoLatencyError(ValueError):
    """The device's main memory has no measured latency to apply Little's law with."""


def latency_of(hardware: Hardware) -> float:
    """The main memory's latency in seconds, or NoLatencyError naming the device."""
    latency = hardware.main_memory.latency_s
    if latency is None:
        raise NoLatencyError(
            f"{hardware.name} has no measured memory latency in the catalogue, so Little's law "
            f"cannot be applied to it (devices with one: those whose memory lists 'latency')")
    return latency


def effective_bandwidth(peak_bytes_per_s: ArrayLike, latency_s: float, in_flight_bytes: ArrayLike) -> Any:
    """``min(peak, in_flight / latency)``; NumPy arrays in, arrays out."""
    if latency_s <= 0:
        raise ValueError(f"latency must be positive, got {latency_s!r}")
    return np.minimum(peak_bytes_per_s, np.asarray(in_flight_bytes, dtype=float) / latency_s)


def bytes_in_flight_needed(peak_bytes_per_s: float, latency_s: float) -> float:
    """Bytes that must be outstanding to reach the peak: ``peak × latency``."""
    return peak_bytes_per_s * latency_s
