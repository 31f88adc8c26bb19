"""Measured points, empirical ceilings, and the versioned JSON results file.

A results file is validated on load like every other data file: a wrong or missing
field is reported with the file, the point and the field.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from explorer.core.files.atomic import write_text_atomic
from explorer.core.files.datafile import Fields, brief, check_schema, read_text
from explorer.core.files.jsonfile import parse_json
from explorer.kernels.cases import PRESETS, Preset

# 2: foreign load and contention per point; 3: power per point; 4: the power's uncertainty
# (1 to 3 still read)
SCHEMA = 4
MAX_RESULTS_BYTES = 32 << 20  # a full run is a few hundred KB
BANDWIDTH_SUITES = ("stream", "parallelism")
COMPUTE_SUITES = ("gemm", "decode-batch", "intensity", "attention")
CACHE_SUITES = ("cache",)  # bandwidth from a cache level: its own roof, never main memory's
COUNT_MAX = 2**64 - 1  # a count or size beyond 64 bits is no measurement (and floats would overflow)


@dataclass(frozen=True)
class Point:
    """One measured kernel: what ran, its size, the FLOPs and bytes it counts and the time
    measured (its FLOP/s and bytes/s follow from them)."""

    suite: str
    kernel: str
    dtype: str
    size: dict[str, int]
    param: dict[str, int]
    flops: int
    bytes: int
    time_median_s: float
    time_p20_s: float
    time_p80_s: float
    check: str | None = None  # None: the result matched its reference
    suspect: str | None = None  # why the rate cannot be real, if it cannot
    convention: str = ""
    dram_traffic: bool = True
    foreign_load: float | None = None  # cores (CPU) or processes (GPU) of other programs; None: unknown
    contended: str | None = None  # why other programs may have slowed it, if they did
    power_w: float | None = None  # average power while it ran (``kernels.energy``); None: not measured
    power_uncertainty_w: float | None = None  # ± on power_w: the energy counter's step over its window

    @property
    def intensity(self) -> float:
        return self.flops / self.bytes

    @property
    def flops_per_s(self) -> float:
        return self.flops / self.time_median_s

    @property
    def bytes_per_s(self) -> float:
        return self.bytes / self.time_median_s

    @property
    def trusted(self) -> bool:
        """A point a ceiling may come from: checked, plausible and measured on a quiet machine."""
        return self.check is None and self.suspect is None and self.contended is None

    @property
    def doubt(self) -> str | None:
        """Why the point is not trusted, in full (None when it is)."""
        return self.check or self.suspect or self.contended

    @property
    def flag(self) -> str:
        """Why the point is not trusted, in a word or two ("" when it is)."""
        return ("check failed" if self.check else "suspect" if self.suspect
                else "contended" if self.contended else "")

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "intensity": self.intensity, "flops_per_s": self.flops_per_s,
                "bytes_per_s": self.bytes_per_s}


@dataclass(frozen=True)
class Ceiling:
    """The best rate a suite measured, with the kernel and precision that reached it."""

    value: float
    suite: str
    kernel: str
    dtype: str


@dataclass(frozen=True)
class Results:
    """A kernel run's results file: the machine, the timer, the suites and their points."""

    machine: dict[str, Any]
    timer: str
    preset: Preset
    suites: tuple[str, ...]
    points: tuple[Point, ...]
    skipped: tuple[dict[str, str], ...] = ()
    reference: str = ""
    cancelled: bool = False
    created: str = ""
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "preset", Preset(self.preset))  # a string is read as its Preset

    # -- empirical ceilings --------------------------------------------------------------------
    def best_bandwidth(self) -> Ceiling | None:
        """Best sustained bandwidth: the highest median rate of a trusted bandwidth kernel
        whose working set streams from main memory (4× the last-level cache: never a smoke
        run's, whose sets stay in cache, nor one saved before that was marked)."""
        candidates = [p for p in self.points if p.trusted and p.suite in BANDWIDTH_SUITES
                      and p.dram_traffic and self.preset != Preset.SMOKE]
        if not candidates:
            return None
        best = max(candidates, key=lambda p: p.bytes_per_s)
        return Ceiling(best.bytes_per_s, best.suite, best.kernel, best.dtype)

    def cache_bandwidths(self) -> dict[int, Ceiling]:
        """Best trusted bandwidth from each measured cache level (0: a GPU's shared memory,
        2: L2, 3: L3; ``cache_label`` names them)."""
        out: dict[int, Ceiling] = {}
        for p in self.points:
            level = p.param.get("level")
            if p.trusted and p.suite in CACHE_SUITES and level is not None and (
                    level not in out or p.bytes_per_s > out[level].value):
                out[level] = Ceiling(p.bytes_per_s, p.suite, p.kernel, p.dtype)
        return dict(sorted(out.items()))

    def best_flops(self) -> dict[str, Ceiling]:
        """Highest trusted FLOP/s per precision among the compute kernels."""
        out: dict[str, Ceiling] = {}
        for p in self.points:
            if not p.trusted or p.suite not in COMPUTE_SUITES or p.flops == 0:
                continue
            if p.dtype not in out or p.flops_per_s > out[p.dtype].value:
                out[p.dtype] = Ceiling(p.flops_per_s, p.suite, p.kernel, p.dtype)
        return out

    # -- files ---------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        bandwidth = self.best_bandwidth()
        return {
            "schema": SCHEMA,
            "created": self.created,
            "machine": self.machine,
            "timer": self.timer,
            "preset": self.preset.value,
            "suites": list(self.suites),
            "reference": self.reference,
            "cancelled": self.cancelled,
            "notes": list(self.notes),
            "points": [p.to_dict() for p in self.points],
            "skipped": list(self.skipped),
            "ceilings": {
                "bandwidth": asdict(bandwidth) if bandwidth else None,
                "flops": {dtype: asdict(c) for dtype, c in self.best_flops().items()},
            },
        }

    def save(self, path: str | Path, mode: int | None = None) -> None:
        """Write atomically: a crash mid-write leaves the previous file intact. A new file
        gets ``mode`` (default: the umask's); a replaced one keeps its own."""
        write_text_atomic(path, json.dumps(self.to_dict(), indent=1) + "\n", mode)


def new_results_name(kind: str, created: str = "") -> str:
    """A results file's name no other run takes, even one started in the same second:
    ``bench-20261201-154500-4242-1a2b3c.json`` (the run's time, this process, a random part)."""
    stamp = created.replace(":", "").replace("-", "").replace("T", "-")[:15]
    if not stamp:
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return f"{kind}-{stamp}-{os.getpid()}-{os.urandom(3).hex()}.json"


def _size_map(fields: Fields, name: str) -> dict[str, int]:
    raw = fields.raw(name)
    if not isinstance(raw, dict):
        raise fields.error(name, "expected a mapping of names to whole numbers")
    out = {}
    for key, value in raw.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise fields.error(f"{name}.{key}", f"expected a whole number >= 0, got {brief(value)}")
        if value > COUNT_MAX:
            raise fields.error(f"{name}.{key}", f"must be at most {COUNT_MAX:,}, got {brief(value)}")
        out[str(key)] = value
    return out


def _read_point(fields: Fields) -> Point:
    point = Point(
        suite=fields.text("suite"),
        kernel=fields.text("kernel"),
        dtype=fields.text("dtype"),
        size=_size_map(fields, "size"),
        param=_size_map(fields, "param"),
        flops=fields.integer("flops", minimum=0, maximum=COUNT_MAX),
        bytes=fields.integer("bytes", maximum=COUNT_MAX),
        time_median_s=fields.number("time_median_s"),
        time_p20_s=fields.number("time_p20_s"),
        time_p80_s=fields.number("time_p80_s"),
        check=_optional_text(fields, "check"),
        suspect=_optional_text(fields, "suspect"),
        convention=_optional_text(fields, "convention") or "",
        dram_traffic=fields.flag("dram_traffic", default=True),
        foreign_load=_optional_number(fields, "foreign_load"),
        contended=_optional_text(fields, "contended"),
        power_w=_optional_number(fields, "power_w"),
        power_uncertainty_w=_optional_number(fields, "power_uncertainty_w"),
    )
    if not point.time_p20_s <= point.time_median_s <= point.time_p80_s:
        raise fields.error("time_median_s", "must lie between time_p20_s and time_p80_s")
    for derived in ("intensity", "flops_per_s", "bytes_per_s"):
        stored = fields.raw(derived, required=False)
        value = getattr(point, derived)
        if not math.isfinite(value):  # a subnormal time: a positive float, an infinite rate
            raise fields.error("time_median_s", f"is too short for the point's counts: its {derived} "
                                                "is not a finite number")
        if stored is not None and (isinstance(stored, bool) or not isinstance(stored, int | float)):
            raise fields.error(derived, f"expected a number, got {brief(stored)}")
        if stored is not None and not math.isclose(fields.float_of(derived, stored), value, rel_tol=1e-6):
            raise fields.error(derived, f"is {stored} but the point's flops, bytes and time give {value}")
    return point


def _text_list(fields: Fields, name: str, required: bool = True) -> tuple[str, ...]:
    value = fields.raw(name, required=required)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise fields.error(name, "expected a list of text")
    return tuple(value)


def _optional_number(fields: Fields, name: str) -> float | None:
    value = fields.raw(name, required=False)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise fields.error(name, f"expected a number >= 0, got {brief(value)}")
    number = fields.float_of(name, value)
    if not math.isfinite(number) or number < 0:
        raise fields.error(name, f"expected a number >= 0, got {brief(value)}")
    return number


def _optional_text(fields: Fields, name: str) -> str | None:
    value = fields.raw(name, required=False)
    if value is None or value == "":
        return value or None
    if not isinstance(value, str):
        raise fields.error(name, f"expected text, got {value!r}")
    return value


def load_results(path: str | Path) -> Results:
    """Read and validate a results file (raises DataFileError naming file, point and field)."""
    path = Path(path)
    return results_from(parse_json(read_text(path, MAX_RESULTS_BYTES), path), path)


def read_point(raw: Any, path: str | Path, entry: str) -> Point:
    """One measured point from its dictionary (raises DataFileError naming ``entry``)."""
    point_fields = Fields(raw, path, entry)
    point = _read_point(point_fields)
    point_fields.finish()
    return point


def results_from(data: Any, path: str | Path) -> Results:
    """Validate the content of a results file read from ``path``."""
    top = Fields(data, path, None)
    version = top.integer("schema")
    if version not in (1, 2, 3):  # 1: no foreign load, 2: no power, 3: no power uncertainty (unknown)
        check_schema(top, version, SCHEMA)
    machine = top.raw("machine")
    if not isinstance(machine, dict):
        raise top.error("machine", "expected a mapping describing the machine")
    points = []
    raw_points = top.raw("points")
    if not isinstance(raw_points, list):
        raise top.error("points", "expected a list of measured points")
    for index, raw in enumerate(raw_points):
        points.append(read_point(raw, path, f"point #{index + 1}"))
    skipped = []
    raw_skipped = top.raw("skipped", required=False)
    if raw_skipped is not None and not isinstance(raw_skipped, list):
        raise top.error("skipped", "expected a list of skipped kernels")
    for index, raw in enumerate(raw_skipped or []):
        skip_fields = Fields(raw, path, f"skipped #{index + 1}")
        skipped.append({key: skip_fields.text(key) for key in ("suite", "kernel", "dtype", "reason")})
        skip_fields.finish()
    results = Results(
        machine=machine,
        timer=top.text("timer"),
        preset=Preset(top.text("preset", choices=PRESETS)),
        suites=_text_list(top, "suites"),
        points=tuple(points),
        skipped=tuple(skipped),
        reference=_optional_text(top, "reference") or "",
        cancelled=top.flag("cancelled"),
        created=_optional_text(top, "created") or "",
        notes=_text_list(top, "notes", required=False),
    )
    top.raw("ceilings", required=False)  # recomputed from the points, never trusted from disk
    top.finish()
    return results


def cache_label(level: int) -> str:
    """"L2", "L3"; level 0 is a GPU's shared memory (on-chip, beside its L1)."""
    return "shared memory" if level == 0 else f"L{level}"
