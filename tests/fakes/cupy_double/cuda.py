"""``cupy.cuda`` of the double: one device (its properties an H100's, its memory the host's),
events that read ``time.perf_counter``, a stream whose work is done when issued."""

from __future__ import annotations

import time
from types import SimpleNamespace

PROPERTIES = {
    "name": b"NVIDIA H100 80GB HBM3", "multiProcessorCount": 132, "clockRate": 1_980_000,
    "memoryClockRate": 2_619_000, "memoryBusWidth": 5120, "l2CacheSize": 50 << 20,
    "totalGlobalMem": 80 << 30, "major": 9, "minor": 0, "pciBusID": 0x1B,
}


class _Runtime:
    """``cupy.cuda.runtime``: the calls the app and the scripts make."""

    def __init__(self) -> None:
        self.device = 0
        self.calls: list[str] = []

    def getDeviceCount(self) -> int:
        return 1

    def getDeviceProperties(self, device: int) -> dict:
        self._check(device)
        return dict(PROPERTIES)

    def driverGetVersion(self) -> int:
        return 12080

    def runtimeGetVersion(self) -> int:
        return 12080

    def getDevice(self) -> int:
        return self.device

    def memGetInfo(self) -> tuple[int, int]:
        return PROPERTIES["totalGlobalMem"] // 2, PROPERTIES["totalGlobalMem"]

    def deviceSynchronize(self) -> None:
        self.calls.append("deviceSynchronize")

    def _check(self, device: int) -> None:
        if device != 0:
            raise RuntimeError(f"cudaErrorInvalidDevice: the CuPy double has one device, not {device}")


runtime = _Runtime()


def reset() -> None:
    runtime.device, runtime.calls = 0, []


def is_available() -> bool:
    return True


class Device:
    def __init__(self, device: int = 0) -> None:
        runtime._check(device)
        self.id = device
        self.pci_bus_id = f"0000:{PROPERTIES['pciBusID']:02x}:00.0"
        self.attributes = {"MultiProcessorCount": PROPERTIES["multiProcessorCount"],
                           "L2CacheSize": PROPERTIES["l2CacheSize"]}

    def use(self) -> None:
        runtime.device = self.id

    def __enter__(self) -> Device:
        self._previous = runtime.device
        self.use()
        return self

    def __exit__(self, *_exc) -> None:
        runtime.device = self._previous  # as CuPy: the device current before the block


class Event:
    """A CUDA event: the host's time when recorded (the double's work is done when issued)."""

    def __init__(self, *_args, **_kwargs) -> None:
        self.at: float | None = None

    def record(self, stream=None) -> None:
        self.at = time.perf_counter()

    def synchronize(self) -> None:
        if self.at is None:
            raise RuntimeError("cudaErrorInvalidResourceHandle: the event was never recorded")


def get_elapsed_time(start: Event, stop: Event) -> float:
    """Milliseconds between two recorded events, as CUDA reports them."""
    if start.at is None or stop.at is None:
        raise RuntimeError("cudaErrorInvalidResourceHandle: an event was never recorded")
    return (stop.at - start.at) * 1e3


_STREAM = SimpleNamespace(synchronize=lambda: None)


def get_current_stream():
    return _STREAM
