"""Finding the local GPU through CuPy, without ever raising.

``detect_gpu`` returns a ``GpuInfo`` or an ``Unavailable`` whose reason a person can
act on. CuPy is imported here, lazily: ``import cupy`` succeeds without a driver, and
the first device call then raises ``CUDARuntimeError`` (a ``RuntimeError``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import asdict, dataclass
from types import ModuleType

INSTALL_HINT = "CuPy is not installed: pip install 'roofline-explorer[gpu]'"


@dataclass(frozen=True)
class Unavailable:
    reason: str

    def __bool__(self) -> bool:
        return False


@dataclass(frozen=True)
class GpuInfo:
    index: int
    name: str
    sm_count: int
    clock_hz: float | None
    memory_clock_hz: float | None
    memory_bus_bits: int | None
    l2_bytes: int
    memory_bytes: int
    compute_capability: str
    driver_version: str
    runtime_version: str
    cupy_version: str

    @property
    def theoretical_bandwidth(self) -> float | None:
        """Derived: 2 transfers per memory clock × bus width; datasheets are the reference."""
        if not (self.memory_clock_hz and self.memory_bus_bits):
            return None
        return 2 * self.memory_clock_hz * self.memory_bus_bits / 8

    def to_dict(self) -> dict:
        return {**asdict(self), "theoretical_bandwidth_derived": self.theoretical_bandwidth}


def _version(number: int) -> str:
    """CUDA encodes versions as 1000 × major + 10 × minor."""
    return f"{number // 1000}.{number % 1000 // 10}"


def _prop(props: dict, attributes: dict, prop_key: str, attribute_key: str):
    value = props.get(prop_key)
    if value in (None, 0):
        value = attributes.get(attribute_key)
    return value


def import_cupy(importer: Callable[[str], ModuleType] = importlib.import_module
                ) -> ModuleType | Unavailable:
    try:
        return importer("cupy")
    except ImportError:
        return Unavailable(INSTALL_HINT)
    except Exception as exc:  # a broken CuPy install: say what it said
        return Unavailable(f"CuPy is installed but failed to import: {exc}")


def detect_gpu(device: int = 0, importer: Callable[[str], ModuleType] = importlib.import_module
               ) -> GpuInfo | Unavailable:
    """The GPU numbered ``device``, or why it cannot be used."""
    cp = import_cupy(importer)
    if isinstance(cp, Unavailable):
        return cp
    try:
        count = cp.cuda.runtime.getDeviceCount()
    except Exception as exc:
        text = str(exc)
        if any(word in text for word in ("InsufficientDriver", "NoDevice", "driver", "Driver")):
            return Unavailable(f"no CUDA driver or GPU found ({text}); install the NVIDIA driver, "
                               "or use the numpy backend")
        return Unavailable(f"CUDA is not usable: {text}")
    if count == 0:
        return Unavailable("no CUDA driver or GPU found (0 devices); use the numpy backend")
    if not 0 <= device < count:
        return Unavailable(f"there is no GPU number {device}: this machine has {count} "
                           f"(numbered 0 to {count - 1})")
    try:
        props = cp.cuda.runtime.getDeviceProperties(device)
        with cp.cuda.Device(device) as dev:
            attributes = dev.attributes
            cp.cuda.runtime.memGetInfo()  # creates the context: fails on a busy or broken GPU
        name = props.get("name", b"?")
        clock_khz = _prop(props, attributes, "clockRate", "ClockRate")
        memory_khz = _prop(props, attributes, "memoryClockRate", "MemoryClockRate")
        return GpuInfo(
            index=device,
            name=name.decode() if isinstance(name, bytes) else str(name),
            sm_count=int(_prop(props, attributes, "multiProcessorCount", "MultiProcessorCount")),
            clock_hz=clock_khz * 1e3 if clock_khz else None,
            memory_clock_hz=memory_khz * 1e3 if memory_khz else None,
            memory_bus_bits=_prop(props, attributes, "memoryBusWidth", "GlobalMemoryBusWidth"),
            l2_bytes=int(_prop(props, attributes, "l2CacheSize", "L2CacheSize")),
            memory_bytes=int(props["totalGlobalMem"]),
            compute_capability=f"{props['major']}.{props['minor']}",
            driver_version=_version(cp.cuda.runtime.driverGetVersion()),
            runtime_version=_version(cp.cuda.runtime.runtimeGetVersion()),
            cupy_version=cp.__version__,
        )
    except Exception as exc:
        return Unavailable(f"GPU {device} is present but unusable: {exc}")
