"""The local CPU as the OS describes it: model, cores, SIMD features, caches, BLAS, threads.

Everything is read from the OS (``/proc/cpuinfo``, ``/sys``) and NumPy's own
build information; nothing is guessed from a name. The theoretical peak is
*derived* (cores × FLOP per cycle × clock) and says which assumptions it makes.
"""

from __future__ import annotations

import os
import platform
import re
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from explorer.core.files.errors import DataFileError
from explorer.core.files.reading import read_bytes
from explorer.kernels.cpu_roofs import CpuFlags, core_rates

SIMD_FLAGS = ("sse2", "avx", "avx2", "fma", "avx512f", "avx512_bf16", "avx512_fp16",
              "avx512_vnni", "avx_vnni", "amx_bf16", "amx_int8", "amx_tile", "neon", "asimd", "asimddp",
              "bf16", "i8mm", "sve", "sve2")


class CacheKind(StrEnum):
    """What a level of cache holds, in the operating system's words (Linux's ``type``)."""

    DATA = "Data"
    INSTRUCTION = "Instruction"
    UNIFIED = "Unified"


@dataclass(frozen=True)
class CacheLevel:
    """One level of this machine's CPU cache, as the operating system reports it."""

    level: int
    kind: str  # a CacheKind, as the system wrote it
    size_bytes: int
    shared_by: int  # logical CPUs sharing one instance


class ClockSource(StrEnum):
    """Where the clock of a derived peak comes from: a ceiling, or only a clock."""

    MAXIMUM = "maximum"  # cpufreq's cpuinfo_max_freq: the highest clock the cores run at
    # /proc/cpuinfo's "cpu MHz": the clock now, or under a hypervisor the host's nominal one;
    # the cores may boost beyond it, so a peak derived from it is no ceiling.
    CURRENT = "current"


@dataclass(frozen=True)
class DerivedPeak:
    """A theoretical FLOP rate computed from what the OS reports, with its formula."""

    precision: str
    flops_per_s: float
    formula: str
    derived: bool = True
    unit: str = "vector"  # "matrix": AMX tiles


@dataclass(frozen=True)
class CpuInfo:
    """This machine's CPU as the operating system reports it: model, cores, caches, vector units."""

    model: str
    architecture: str
    logical_cpus: int
    physical_cores: int
    simd: tuple[str, ...]
    caches: tuple[CacheLevel, ...]
    max_clock_hz: float | None
    blas: str
    threads: int
    peaks: tuple[DerivedPeak, ...] = field(default=())
    clock_source: ClockSource | None = None  # None: no clock, so no peak

    @property
    def last_level_cache_bytes(self) -> int:
        """Total last-level cache (all instances), or 32 MiB if the OS does not say."""
        unified = [c for c in self.caches if c.kind != CacheKind.INSTRUCTION]
        if not unified:
            return 32 << 20
        top = max(c.level for c in unified)
        level = next(c for c in unified if c.level == top)
        instances = max(1, self.logical_cpus // max(1, level.shared_by))
        return level.size_bytes * instances

    @property
    def l2_bytes_per_core(self) -> int:
        l2 = [c for c in self.caches if c.level == 2 and c.kind != CacheKind.INSTRUCTION]
        return l2[0].size_bytes if l2 else 1 << 20

    def to_dict(self) -> dict:
        return {
            "model": self.model,
            "architecture": self.architecture,
            "logical_cpus": self.logical_cpus,
            "physical_cores": self.physical_cores,
            "simd": list(self.simd),
            "caches": [{"level": c.level, "kind": c.kind, "size_bytes": c.size_bytes,
                        "shared_by": c.shared_by} for c in self.caches],
            "max_clock_hz": self.max_clock_hz,
            "clock_source": self.clock_source,
            "blas": self.blas,
            "threads": self.threads,
            "derived_peaks": [{"precision": p.precision, "unit": p.unit, "flops_per_s": p.flops_per_s,
                               "formula": p.formula, "derived": True} for p in self.peaks],
        }


def _read(path: str | Path) -> str | None:
    try:  # the one reader: /proc/cpuinfo of a many-core machine is some hundred KB
        return read_bytes(path, 4 << 20).decode("utf-8", errors="replace")
    except DataFileError:
        return None


def _cpuinfo_fields(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        if ":" in line:
            key, value = line.split(":", 1)
            out.setdefault(key.strip(), value.strip())
    return out


def _size(text: str) -> int:
    match = re.match(r"^\s*(\d+)\s*([KMG]?)", text)
    if not match:
        return 0
    scale = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[match.group(2)]
    return int(match.group(1)) * scale


def _cpu_list_count(text: str) -> int:
    count = 0
    for part in text.strip().split(","):
        if "-" in part:
            low, high = part.split("-")
            count += int(high) - int(low) + 1
        elif part:
            count += 1
    return count


def _caches(sys_root: Path) -> tuple[CacheLevel, ...]:
    out = []
    for index in sorted((sys_root / "cpu0" / "cache").glob("index*")):
        level, kind, size = (_read(index / name) for name in ("level", "type", "size"))
        shared = _read(index / "shared_cpu_list") or "0"
        if level and kind and size:
            out.append(CacheLevel(int(level), kind.strip(), _size(size), _cpu_list_count(shared)))
    return tuple(out)


def _blas() -> str:
    try:
        import numpy as np

        config = np.show_config(mode="dicts")
        blas = config["Build Dependencies"]["blas"]
        return f"{blas.get('name', '?')} {blas.get('version', '')}".strip()
    except Exception:  # an old NumPy without dict mode: say so rather than fail
        return "unknown (NumPy does not report its BLAS)"


def _threads(logical: int) -> int:
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        value = os.environ.get(name, "")
        if value.isdigit() and int(value) > 0:
            return int(value)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else logical


def flop_per_cycle(simd: tuple[str, ...], precision: str) -> tuple[int, str]:
    """FLOP per cycle per core of ``precision`` from the flags alone (``cpu_roofs``)."""
    rate = next(r for r in core_rates(CpuFlags(frozenset(simd))) if r.precision == precision)
    return rate.per_cycle, rate.how + rate.note


def cpu_model(proc_cpuinfo: str = "/proc/cpuinfo") -> str:
    """The local CPU's model, as ``describe_cpu`` names it, read alone (the caches, clock
    and BLAS that a description also reads are a dozen more files)."""
    return _model(_cpuinfo_fields(_read(proc_cpuinfo) or ""))


def _model(fields: dict[str, str]) -> str:
    return fields.get("model name") or fields.get("Model") or platform.processor() or "unknown CPU"


def describe_cpu(proc_cpuinfo: str = "/proc/cpuinfo",
                 sys_cpu: str = "/sys/devices/system/cpu") -> CpuInfo:
    """Describe the local CPU; never raises (unknown fields are reported as unknown)."""
    fields = _cpuinfo_fields(_read(proc_cpuinfo) or "")
    logical = os.cpu_count() or 1
    model = _model(fields)
    flags = set((fields.get("flags") or fields.get("Features") or "").split())
    simd = tuple(f for f in SIMD_FLAGS if f in flags)
    cores_per_socket = fields.get("cpu cores")
    siblings = fields.get("siblings")
    physical = logical
    if cores_per_socket and siblings and cores_per_socket.isdigit() and siblings.isdigit():
        physical = max(1, logical * int(cores_per_socket) // max(1, int(siblings)))
    sys_root = Path(sys_cpu)
    clock, source = _clock(fields, _read(sys_root / "cpu0" / "cpufreq" / "cpuinfo_max_freq"))
    peaks = []
    if clock:
        said = ("the highest clock cpufreq reports; sustained vector clocks can be lower"
                if source == ClockSource.MAXIMUM else
                "the clock /proc/cpuinfo reports, with no cpufreq maximum: boost may run faster")
        for rate in core_rates(CpuFlags.from_fields(fields)):
            peaks.append(DerivedPeak(
                rate.precision, physical * rate.per_cycle * clock,
                f"{physical} cores × {rate.how} × {clock / 1e9:.2f} GHz{rate.note} ({said})", unit=rate.unit))
    return CpuInfo(model=model, architecture=platform.machine(), logical_cpus=logical,
                   physical_cores=physical, simd=simd, caches=_caches(sys_root),
                   max_clock_hz=clock, blas=_blas(), threads=_threads(logical), peaks=tuple(peaks),
                   clock_source=source)


def _clock(fields: dict[str, str], max_khz: str | None) -> tuple[float | None, ClockSource | None]:
    """The clock a peak is derived at (Hz) and where it was read."""
    if max_khz and max_khz.strip().isdigit():
        return int(max_khz) * 1e3, ClockSource.MAXIMUM
    if fields.get("cpu MHz"):
        return float(fields["cpu MHz"]) * 1e6, ClockSource.CURRENT
    return None, None
