"""The energy a timed case used, where this machine lets it be read.

- CPU (Linux): the RAPL counters of the powercap interface,
  ``/sys/class/powercap/intel-rapl:N/energy_uj`` (microjoules since boot, one per package;
  AMD's Zen packages appear under the same name since Linux 5.8), each wrapping at its
  ``max_energy_range_uj``. Since Linux 5.10 they are readable by root only (CVE-2020-8694);
  a virtual machine usually has no powercap at all.
- GPU: NVML's total energy (``nvmlDeviceGetTotalEnergyConsumption``, millijoules since the
  driver loaded; Volta and newer), through ``nvidia-ml-py`` (the ``gpu`` extra).

``meter_for(backend)`` gives a meter (``start()`` before a case, ``stop(token)`` after:
the average power over the window, which a case's launches keep alike throughout) or an
``Unmeasurable`` that says why energy cannot be read here; nothing else changes then. A
meter learns its counter's step when it is made (``energy_window``) and reads no window
shorter than ``window_s``: NVML's counter moves about every 100 ms, so its windows last 1 s
at least; each power carries its uncertainty (``Power.uncertainty_w``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from explorer.core.analysis.energy import EnergyConstants, FitError, Sample, fit
from explorer.core.files.errors import DataFileError
from explorer.core.files.reading import read_text
from explorer.core.hardware.hardware import GPU
from explorer.kernels.energy_window import STEP_TIMEOUT_S, CounterStep, counter_step
from explorer.kernels.results import CACHE_SUITES

POWERCAP = Path("/sys/class/powercap")
# The shortest windows whatever the counter's step: RAPL updates about every millisecond,
# NVML's total energy about every 100 ms (Hopper), so less than a second is noise there.
RAPL_FLOOR_S, NVML_FLOOR_S = 0.05, 1.0
StepProbe = Callable[[Callable[[], float], float], CounterStep | None]  # (read J, resolution J)
SYSFS_PAGE = 4096  # a sysfs attribute reports a page's size whatever it holds, and holds less


@dataclass(frozen=True)
class Unmeasurable:
    """Why energy cannot be measured on this machine."""

    reason: str


@dataclass(frozen=True)
class Power:
    """What a meter read over one window: the joules over the seconds, from where, and the
    power's uncertainty (± watts: the counter's step over the window)."""

    joules: float
    seconds: float
    source: str
    uncertainty_w: float | None = None  # None: not known (a meter that does not say)

    @property
    def watts(self) -> float:
        return self.joules / self.seconds


def _number(path: Path) -> int:
    return int(read_text(path, SYSFS_PAGE).strip())


def _is_package(domain: Path) -> bool:
    """A CPU package's domain ("package-0"), not the platform's ("psys", which already holds
    the packages' energy on Intel client chips)."""
    try:
        return read_text(domain / "name", SYSFS_PAGE).strip().startswith("package")
    except DataFileError:
        return False


class RaplMeter:
    """Package energy of every CPU socket, from the powercap interface."""

    def __init__(self, domains: list[Path]) -> None:
        self.domains = domains
        self.ranges = [_number(d / "max_energy_range_uj") for d in domains]
        self.source = f"RAPL package energy ({len(domains)} package{'s' if len(domains) > 1 else ''})"
        self.step = CounterStep(1e-3, 0.0, 1e-6)  # until probed: RAPL's documented ~1 ms

    @property
    def window_s(self) -> float:
        return self.step.window_s(RAPL_FLOOR_S)

    @staticmethod
    def probe(root: Path = POWERCAP, step_probe: StepProbe = counter_step) -> RaplMeter | Unmeasurable:
        if not root.is_dir():
            return Unmeasurable(f"no RAPL energy counters: {root} is absent (a virtual machine, or a "
                                "kernel without the powercap driver)")
        domains = sorted(d for d in root.glob("intel-rapl:*") if d.name.count(":") == 1 and _is_package(d))
        if not domains:
            return Unmeasurable(f"no package energy domain under {root}")
        try:
            meter = RaplMeter(domains)
            meter.read()
        except DataFileError as error:
            if "Permission denied" in str(error):  # reading.read_bytes names the OS error
                return Unmeasurable(f"{domains[0] / 'energy_uj'} is readable by root only (Linux 5.10 "
                                    "and later): run as root, or let your user read it (sudo chmod o+r "
                                    f"{root}/intel-rapl:*/energy_uj)")
            return Unmeasurable(f"the RAPL counters cannot be read: {error}")
        except ValueError as error:
            return Unmeasurable(f"the RAPL counters hold no number: {error}")
        step = step_probe(lambda: sum(meter.read()) * 1e-6, 1e-6)
        if step is None:
            return Unmeasurable(f"the RAPL counters under {root} did not move: no energy to read")
        meter.step = step
        return meter

    def read(self) -> list[int]:
        return [_number(d / "energy_uj") for d in self.domains]

    def start(self):
        return self.read(), time.monotonic()

    def stop(self, token) -> Power | None:
        before, started = token
        after, seconds = self.read(), time.monotonic() - started
        if seconds < self.window_s:
            return None
        microjoules = sum((b - a) % (span + 1) for a, b, span in zip(before, after, self.ranges, strict=True))
        return _power(microjoules * 1e-6, seconds, self.source, self.step)


class NvmlMeter:
    """One GPU's total energy counter, through NVML."""

    source = "NVML total energy"

    def __init__(self, nvml, handle, step: CounterStep) -> None:
        self._nvml, self._handle, self.step = nvml, handle, step

    @property
    def window_s(self) -> float:
        return self.step.window_s(NVML_FLOOR_S)

    @staticmethod
    def probe(device: int = 0, pci_bus_id: str | None = None, importer=None,
              step_probe: StepProbe = counter_step) -> NvmlMeter | Unmeasurable:
        try:
            nvml = importer() if importer else __import__("pynvml")
        except ImportError:
            return Unmeasurable("nvidia-ml-py is not installed (pip install -e '.[gpu]'): NVML's energy "
                                "counter cannot be read")
        try:
            nvml.nvmlInit()
            handle = (nvml.nvmlDeviceGetHandleByPciBusId(pci_bus_id) if pci_bus_id
                      else nvml.nvmlDeviceGetHandleByIndex(device))
            nvml.nvmlDeviceGetTotalEnergyConsumption(handle)
        except Exception as error:  # NVMLError: no driver, a GPU before Volta, a MIG slice, …
            return Unmeasurable(f"NVML gives no energy counter for this GPU: {error}")
        try:  # millijoules: how often and by how much the counter moves, read now
            step = step_probe(lambda: nvml.nvmlDeviceGetTotalEnergyConsumption(handle) * 1e-3, 1e-3)
        except Exception as error:
            return Unmeasurable(f"NVML's energy counter failed while its step was read: {error}")
        if step is None:
            return Unmeasurable(f"NVML's energy counter did not move twice in {STEP_TIMEOUT_S:g} s: its "
                                "windows cannot be sized")
        return NvmlMeter(nvml, handle, step)

    def start(self):
        return self._nvml.nvmlDeviceGetTotalEnergyConsumption(self._handle), time.monotonic()

    def stop(self, token) -> Power | None:
        before, started = token
        try:
            after = self._nvml.nvmlDeviceGetTotalEnergyConsumption(self._handle)
        except self._nvml.NVMLError:
            return None
        seconds = time.monotonic() - started
        if seconds < self.window_s or after < before:
            return None
        return _power((after - before) * 1e-3, seconds, self.source, self.step)


def _power(joules: float, seconds: float, source: str, step: CounterStep) -> Power:
    return Power(joules, seconds, source, step.uncertainty_w(joules / seconds, seconds))


def describe_meter(meter: RaplMeter | NvmlMeter) -> str:
    """A run's note on where its powers come from, over what windows, and how sure they are."""
    return (f"power per point: {meter.source}, over windows of at least {meter.window_s:.3g} s (the "
            f"kernel repeated until filled, its timed launches included); the counter "
            f"{meter.step.describe()}: each power ± one step's energy over its window "
            f"(± {meter.step.seconds / meter.window_s:.1%} at most, beside each point)")


def meter_for(backend) -> RaplMeter | NvmlMeter | Unmeasurable:
    """The energy meter for ``backend``'s device, or why there is none."""
    if backend.device_kind == GPU:
        device = getattr(backend, "device", None)
        device_id = getattr(device, "id", None)
        if not isinstance(device_id, int):
            return Unmeasurable("the backend names no GPU to read energy from")
        return NvmlMeter.probe(device_id, getattr(device, "pci_bus_id", None))
    return RaplMeter.probe()


def metered(results) -> tuple[str, list]:
    """(precision, points) a run's energy is fitted to: its trusted points with a power
    whose bytes are main-memory traffic (the model's Q; not a cache's, nor a product's
    compulsory bytes), of one precision (ε_flop depends on it): the one with most points."""
    usable = [p for p in results.points if p.trusted and p.power_w is not None and p.dram_traffic
              and p.suite not in CACHE_SUITES and (p.flops or p.bytes)]
    if not usable:
        return "", []
    dtype = max(sorted({p.dtype for p in usable}), key=lambda d: sum(p.dtype == d for p in usable))
    return dtype, [p for p in usable if p.dtype == dtype]


def _read_within(points) -> str:
    """The powers' own uncertainty, as the fit's source states it ("" where none is known)."""
    shares = [p.power_uncertainty_w / p.power_w for p in points
              if p.power_uncertainty_w is not None and p.power_w]
    if not shares:
        return ""
    return f"; their powers read within ±{max(shares):.1%} (the counter's step over each window)"


def fitted(results) -> EnergyConstants | str:
    """The energy constants fitted to a run's ``metered`` points (each launch's joules: its
    power × its median time), or why there are none."""
    dtype, points = metered(results)
    if not points:
        return "no point streaming from main memory has a measured power"
    samples = [Sample(p.flops, p.bytes, p.time_median_s, p.power_w * p.time_median_s) for p in points]
    suites = ", ".join(sorted({p.suite for p in points}))
    try:
        return fit(samples, f"fitted to {len(points)} {dtype} kernels of this run ({suites})"
                            + _read_within(points))
    except FitError as error:
        return str(error)
