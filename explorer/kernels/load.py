"""How busy other programs kept the machine while a kernel was timed.

A measurement taken while another program used the cores (or the GPU) reports a rate the
machine does not have: a ceiling drawn from it would be wrong. ``LoadSource.start()`` before
the timed case and ``stop()`` after give the foreign load over that window:

- CPU (Linux): CPU time of all processes minus our own, from ``/proc/stat`` and
  ``/proc/self/stat``, in cores (1.0: one core kept busy the whole time). The kernel counts
  in ticks of 10 ms, so a window under ``MIN_WINDOW_S`` is too short to tell (None).
- GPU: other compute processes on the device through NVML (``nvidia-ml-py``, part of the
  ``gpu`` extra); without NVML, no source. In a container NVML lists host process ids, so
  our own id is not among them: then one listed process is ours (a timed case runs inside
  our context, so we are on the device), and the others are foreign. ``bench
  --no-load-check`` reads no load at all and says so in the results.
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass
from pathlib import Path

from explorer.core.files.errors import DataFileError
from explorer.core.files.reading import read_text
from explorer.core.hardware.hardware import GPU

MIN_WINDOW_S = 0.1
CPU_THRESHOLD_CORES = 0.1  # more foreign load than this marks a point contended


@dataclass(frozen=True)
class Foreign:
    """Foreign load over one window: ``cores`` busy with other programs (CPU) or the number of
    other processes on the GPU; ``busy`` when it is enough to distort a measurement."""

    cores: float
    busy: bool
    detail: str


def _text(path: Path) -> str:
    """A /proc file through the one reader (a /proc/stat of many cores is tens of KB)."""
    return read_text(path, 1 << 20)


class ProcStatLoad:
    """Foreign CPU load from /proc (Linux)."""

    def __init__(self, root: Path = Path("/proc")) -> None:
        self.root = root
        self.cpus = os.cpu_count() or 1

    @staticmethod
    def available(root: Path = Path("/proc")) -> bool:
        try:
            _text(root / "stat")
            _text(root / "self" / "stat")
        except DataFileError:
            return False
        return True

    def _sample(self) -> tuple[int, int, int]:
        """(busy ticks of all CPUs, all ticks of all CPUs, our own busy ticks): ours are this
        process's threads' and those of its children it has waited for (a benchmark that
        times fresh interpreters, as start-up's does, must not read them as foreign)."""
        fields = [int(v) for v in _text(self.root / "stat").splitlines()[0].split()[1:]]
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
        total = sum(fields[:8])  # user nice system idle iowait irq softirq steal (guest is in user)
        own = _text(self.root / "self" / "stat").rsplit(")", 1)[1].split()
        return total - idle, total, sum(int(v) for v in own[11:15])  # utime, stime, cutime, cstime

    def start(self):
        return self._sample(), time.monotonic()

    def stop(self, token) -> Foreign | None:
        (busy0, total0, own0), started = token
        busy1, total1, own1 = self._sample()
        if time.monotonic() - started < MIN_WINDOW_S or total1 <= total0:
            return None  # too short for 10 ms ticks to tell
        per_cpu = (total1 - total0) / self.cpus  # ticks that passed, per CPU
        cores = max(0.0, (busy1 - busy0) - (own1 - own0)) / per_cpu
        return Foreign(cores, cores > CPU_THRESHOLD_CORES,
                       f"other programs used {cores:.2f} cores while it ran")


class NvmlLoad:
    """Other processes on one GPU, through NVML."""

    def __init__(self, device: int = 0, pci_bus_id: str | None = None) -> None:
        import pynvml

        pynvml.nvmlInit()
        self._nvml = pynvml
        # CUDA's numbering follows CUDA_VISIBLE_DEVICES, NVML's does not: the bus id is shared.
        self._handle = (pynvml.nvmlDeviceGetHandleByPciBusId(pci_bus_id) if pci_bus_id
                        else pynvml.nvmlDeviceGetHandleByIndex(device))

    def start(self):
        return None

    def processes(self) -> list[int] | None:
        """The ids NVML lists for the compute processes on the device (None: NVML failed).
        Compute processes only: a desktop's display server is on every GPU with a screen."""
        try:
            return [p.pid for p in self._nvml.nvmlDeviceGetComputeRunningProcesses(self._handle)]
        except self._nvml.NVMLError:
            return None

    def stop(self, token) -> Foreign | None:
        listed = self.processes()
        if listed is None:
            return None
        count, detail = foreign_processes(listed, os.getpid())
        return Foreign(float(count), count > 0, detail)

    def close(self) -> None:
        """NVML counts its users: each ``nvmlInit`` is matched by a shutdown."""
        with contextlib.suppress(self._nvml.NVMLError):
            self._nvml.nvmlShutdown()


def foreign_processes(listed: list[int], own: int) -> tuple[int, str]:
    """How many of the processes NVML ``listed`` on the device, while one of our timed cases
    ran on it, belong to other programs, and a sentence saying so. Our id is listed when NVML
    and we share a process namespace; in a container NVML lists host ids, ours is missing,
    and one of the listed processes is us (our context holds the case's memory)."""
    unique = set(listed)
    if own in unique or not unique:  # (nothing listed: no other process either)
        others, note = max(0, len(unique) - 1), ""
    else:
        others = max(0, len(unique) - 1)
        note = " (NVML lists other process ids than ours, as in a container: one listed is ours)"
    if not others:
        return 0, "no other process on the GPU" + note
    return others, f"{others} other process(es) used the GPU while it ran" + note


def load_source(backend):
    """The foreign-load source for ``backend`` (None where none can be read here)."""
    if backend.device_kind == GPU:
        try:
            return NvmlLoad(backend.device.id, getattr(backend.device, "pci_bus_id", None))
        except Exception:  # nvidia-ml-py missing, or NVML cannot start: no source, said in notes
            return None
    return ProcStatLoad() if ProcStatLoad.available() else None
