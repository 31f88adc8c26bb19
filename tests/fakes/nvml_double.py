"""NVML's energy counter as Hopper's behaves (``nvidia-ml-py``'s names): millijoules since
the driver loaded, at a steady power, updated only every ``PERIOD_S`` (about 100 ms)."""

from __future__ import annotations

import time

PERIOD_S, POWER_W = 0.1, 300.0


class NVMLError(Exception):
    pass


def nvmlInit() -> None:
    """Nothing to start."""


def nvmlShutdown() -> None:
    """Nothing to stop."""


def nvmlDeviceGetHandleByIndex(index: int) -> str:
    return f"gpu{index}"


def nvmlDeviceGetHandleByPciBusId(bus: str) -> str:
    return f"gpu at {bus}"


def nvmlDeviceGetTotalEnergyConsumption(handle) -> int:
    updated = int(time.monotonic() / PERIOD_S) * PERIOD_S  # the last update before now
    return int(updated * POWER_W * 1e3)
