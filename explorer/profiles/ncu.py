"""Nsight Compute CSV exports read as a profile, in both layouts ncu writes:

- the raw page (``ncu --csv --page raw``): a header row ("ID", …, "Kernel Name", …, then
  one column per metric), a row of units, then one row per kernel launch;
- the long layout (``--page details``, ``--metrics``): one row per metric of each launch,
  with "ID", "Kernel Name", "Section Name", "Metric Name", "Metric Unit" and "Metric Value"
  columns, and the rows of ncu's rules ("Rule Name", "Rule Type", "Rule Description",
  "Estimated Speedup…") between them. ncu ends a metric's row after its value, so a row
  may be shorter than the header (16 cells of 20): the cells up to the value are what is
  read; a rule's row names no metric and is passed over.

Lines before the header (the application's own output, ncu's ``==PROF==`` progress) and
``==PROF==`` / ``==WARNING==`` / ``==ERROR==`` lines after it are skipped. Unless ncu ran
with ``--print-units base`` its values carry thousands separators and units scaled with a
decimal prefix (Kbyte = 10³ bytes, us = 10⁻⁶ s): both are undone. Every spelling of a unit
ncu has written is read: times ``ns``/``us``/``ms``/``s`` (recent releases) and
``nsecond``/``usecond``/``msecond``/``second`` (older ones); bytes ``byte``, ``Kbyte``…
and ``B``, ``KB``…; counts ``inst``, ``Kinst``, ``cycle``, ``warp``…; rates
(``byte/second``, ``Gbyte/s``, ``GB/s``, ``inst/cycle``, ``cycle/nsecond``, ``Ghz``) and
percentages (``%``). A rate or a percentage is never taken for a count or bytes: a
throughput is not bytes.

What is read of each launch (one without its time is refused):

- time: ``gpu__time_duration.sum``, or where only ncu's sections were captured (the default
  ``ncu --csv``), the "Duration" of the "GPU Speed Of Light Throughput" section (the same
  counter under its display name), or where neither was, ``sm__cycles_elapsed.avg`` ÷
  ``sm__cycles_elapsed.avg.per_second``: the time NERSC's roofline method reads
  (gitlab.com/NERSC/roofline-on-nvidia-gpus, "Time: sm__cycles_elapsed.avg /
  sm__cycles_elapsed.avg.per_second"), whose metric lists many captures follow;
- FLOPs on the CUDA cores: ``sm__sass_thread_inst_executed_op_{d,f,h}{add,mul,fma}_pred_on.sum``
  (``smsp__`` likewise), an add or a multiply 1 FLOP, a fused multiply-add 2;
  half-precision instructions work on packed pairs, so they count twice that;
- FLOPs on the tensor cores: ``sm__ops_path_tensor_src_<type>[_dst_<type>][_sparsity_on|off].sum``,
  the counters Nsight Compute's own tensor roofline plots, which count operations (an FMA
  is 2: a 1024³ bf16 product counts 2·1024³), by the source type; of a source's counters
  only the most inclusive present is taken (the total before its per-destination or
  sparsity parts), so none is counted twice. Counters naming several source types at once
  (``src_fp16_bf16_tf32``) are not split and are not counted;
- bytes: DRAM ``dram__bytes_read.sum`` + ``dram__bytes_write.sum`` (or ``dram__bytes.sum``),
  L2 ``lts__t_bytes.sum``, L1 ``l1tex__t_bytes.sum``. The sections' throughputs (DRAM
  Throughput in %, Memory Throughput in Gbyte/s) are rates, not byte counts: none is
  turned into bytes, and a profile without a byte counter says so;
- tensor-core instructions: ``sm__inst_executed_pipe_tensor.sum``, counted; not turned into
  FLOPs (what one instruction does depends on the architecture and the shape): where a
  kernel ran such instructions with no ``sm__ops_path_tensor_*`` counter, the profile says
  which counters to capture;
- the GPU: ``device__attribute_display_name`` where the export has it.

Nsight Compute 2019 on a GPU before Volta (Pascal) wrote its counters under older names:
``gpu__time_duration`` (no ``.sum``), ``dram__read_bytes`` and ``dram__write_bytes``. They
are read as today's ``gpu__time_duration.sum``, ``dram__bytes_read.sum`` and
``dram__bytes_write.sum``, and the profile says so; that set has no FLOP counter.
"""

from __future__ import annotations

import csv
import itertools
import math
import re
from collections.abc import Iterator
from pathlib import Path

from explorer.core.files.errors import DataFileError
from explorer.core.files.reading import read_text
from explorer.core.model.profile import Profile, ProfiledKernel
from explorer.profiles.trace_stream import Progress, reported

# Hardware counters and nanosecond timestamps are 64-bit: a count beyond is no count (1e308
# is a float, but 64 × it, or 1e308 Kbyte in bytes, is not: round() of it raised)
COUNTER_MAX = 2**64 - 1
BEYOND_COUNTER = f"must be a count of at most {COUNTER_MAX:,} (64 bits)"
MAX_PROFILE_BYTES = 64 << 20  # tens of thousands of launches with dozens of metrics each
TIME = "gpu__time_duration.sum"
# The Speed Of Light section's display name for TIME (the section's "Duration" row)
SOL_SECTION, DURATION = "GPU Speed Of Light Throughput", "Duration"
DEVICE = "device__attribute_display_name"
# NERSC's roofline time where no duration was captured: the SMs' elapsed cycles ÷ their clock
CYCLES, CLOCK = "sm__cycles_elapsed.avg", "sm__cycles_elapsed.avg.per_second"
CYCLE_TIMED = "cycle-timed"  # marks a launch timed by CYCLES ÷ CLOCK, for the notes
RENAMED = "renamed:"  # + a 2019 name: marks a launch whose counter of that name was read as today's
# Nsight Compute 2019's names on pre-Volta GPUs → today's
LEGACY = {"gpu__time_duration": TIME, "dram__read_bytes": "dram__bytes_read.sum",
          "dram__write_bytes": "dram__bytes_write.sum"}
FLOP_METRICS = {  # metric → (precision, FLOPs per instruction)
    f"{unit}__sass_thread_inst_executed_op_{p}{op}_pred_on.sum": (precision, weight * (2 if p == "h" else 1))
    for unit in ("sm", "smsp")
    for p, precision in (("d", "fp64"), ("f", "fp32"), ("h", "fp16"))
    for op, weight in (("add", 1), ("mul", 1), ("fma", 2))
}
BYTE_METRICS = {"dram__bytes_read.sum": "dram", "dram__bytes_write.sum": "dram", "dram__bytes.sum": "dram",
                "lts__t_bytes.sum": "l2", "l1tex__t_bytes.sum": "l1"}
TENSOR = "sm__inst_executed_pipe_tensor.sum"
TENSOR_OPS = re.compile(r"^sm__ops_path_tensor_src_([a-z0-9_]+?)(?:_dst_([a-z0-9]+?))?"
                        r"(?:_sparsity_(on|off))?\.sum$")
# A tensor counter's source type → the precision its FLOPs are counted under
TENSOR_SOURCES = {"fp64": "fp64", "tf32": "tf32", "fp16": "fp16", "bf16": "bf16", "fp8": "fp8",
                  "int8": "int8"}
TENSOR_HINT = ("capture the SpeedOfLight_HierarchicalTensorRooflineChart section or the "
               "sm__ops_path_tensor_src_* counters (e.g. sm__ops_path_tensor_src_bf16_dst_fp32.sum)")

PREFIXES = {"": 1.0, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
BINARY = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40}
# Recent releases write ns, us, ms; older ones nsecond, usecond, msecond.
SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0,
           "nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3, "second": 1.0}
PER_SECOND = {"ns": 1e9, "us": 1e6, "ms": 1e3, "s": 1.0,
              "nsecond": 1e9, "usecond": 1e6, "msecond": 1e3, "second": 1.0}  # a rate per unit → per second
_BYTES = re.compile(r"^(Ki|Mi|Gi|Ti|[kKMGTP]?)(byte|bytes|B)$")
_COUNT = re.compile(r"^([kKMGTP]?)(inst|cycle|warp|block|thread|sector|request|op|ops|"
                    r"wavefront|transaction|register|)$")
# Rates (bytes or counts per time or per cycle), frequencies and percentages: read, never
# taken for a count
_RATE = re.compile(r"^(.+)/(second|s|nsecond|usecond|msecond|ns|us|ms|cycle|inst|warp|request|"
                   r"sector|byte)$")
_FREQUENCY = re.compile(r"^[kKMGT]?hz$", re.IGNORECASE)
LONG_COLUMNS = ("Metric Name", "Metric Unit", "Metric Value")


def unit_kind(unit: str) -> tuple[str, float] | None:
    """(kind, factor to base units) of an ncu unit: "time" (s), "bytes", "count", "rate" (a
    rate per unit of time to one per second: cycle/nsecond 1e9; per cycle or instruction, its
    numerator's factor), "frequency" (Hz) or "percent"; None for a unit ncu never wrote."""
    unit = unit.strip()
    if unit in SECONDS:
        return "time", SECONDS[unit]
    if unit == "%":
        return "percent", 1.0
    if (scaled := _BYTES.match(unit)) is not None:
        prefix = scaled.group(1)
        return "bytes", BINARY[prefix] if prefix in BINARY else PREFIXES[prefix]
    if (scaled := _COUNT.match(unit)) is not None:
        return "count", PREFIXES[scaled.group(1)]
    if _FREQUENCY.match(unit):
        return "frequency", PREFIXES[unit[0].upper()] if len(unit) == 3 else 1.0
    if (rate := _RATE.match(unit)) is not None and (top := unit_kind(rate.group(1))) is not None:
        # per unit of time: to per second; per cycle or instruction: as it is
        return "rate", top[1] * PER_SECOND.get(rate.group(2), 1.0)
    return None


def _is_clock(unit: str) -> bool:
    """Cycles a unit of time (cycle/second, cycle/nsecond, Kcycle/usecond) or a frequency (GHz)."""
    unit = unit.strip()
    rate = _RATE.match(unit)
    cycles = rate is not None and re.fullmatch(r"[kKMGTP]?cycle", rate.group(1)) is not None
    return _FREQUENCY.match(unit) is not None or (cycles and rate is not None and rate.group(2) in PER_SECOND)


def read_ncu_csv(path: str | Path, text: str | None = None, progress: Progress | None = None) -> Profile:
    """The profile in an Nsight Compute CSV export (``text``: its contents, already read;
    ``progress``: told the share of its lines read, and may raise to stop)."""
    text = read_text(path, MAX_PROFILE_BYTES) if text is None else text
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID",')), None)
    if start is None:
        raise DataFileError(path, 'no Nsight Compute CSV header ("ID", …, "Kernel Name", …) was found: '
                                  "export with ncu --csv --page raw (or --page details)")
    # rows are read one at a time and only the wanted cells kept: a raw page of 400 columns
    # held whole as cells took 10× the file
    rows = csv.reader(line for line in reported(lines[start:], progress) if not line.startswith("=="))
    try:
        header = next(rows)
        if "Kernel Name" not in header:
            raise DataFileError(path, 'the CSV header has no "Kernel Name" column: not an Nsight Compute '
                                      "export")
        long = all(column in header for column in LONG_COLUMNS)
        launches = _today(_long_rows(path, header, rows) if long else _raw_rows(path, header, rows))
    except csv.Error as exc:
        raise DataFileError(path, f"is not a readable CSV file: {exc}") from None
    if not launches:
        raise DataFileError(path, "the export holds no kernel launches")
    kernels = tuple(_kernel(path, ident, name, metrics) for ident, (name, metrics, _) in launches.items())
    devices = list(dict.fromkeys(device for _, _, device in launches.values() if device))
    return Profile(f"Nsight Compute (CSV, {'details (one row per metric)' if long else 'raw page'})",
                   str(path), kernels, tuple(_notes(start, launches, kernels)), device=", ".join(devices))


def _notes(start: int, launches: dict, kernels: tuple[ProfiledKernel, ...]) -> list[str]:
    notes = []
    if start:
        notes.append(f"{start} line(s) before the CSV header skipped (the application's output, "
                     "ncu's progress)")
    metrics = [m for _, m, _ in launches.values()]
    from_duration = sum(1 for m in metrics if DURATION in m)
    if from_duration:
        notes.append(f"{from_duration} kernel(s) timed by the {SOL_SECTION} section's Duration "
                     f"({TIME} under its display name)")
    by_cycles = sum(1 for m in metrics if CYCLE_TIMED in m)
    if by_cycles:
        notes.append(f"{by_cycles} kernel(s) timed as {CYCLES} ÷ {CLOCK} (NERSC's roofline method): the "
                     f"export has no {TIME}")
    renamed = [f"{old} as {new}" for old, new in LEGACY.items() if any(RENAMED + old in m for m in metrics)]
    if renamed:
        notes.append("Nsight Compute 2019's counter names (a GPU before Volta) read as today's: "
                     + ", ".join(renamed))
    if not any(level in BYTE_METRICS.values() for m in metrics for level in _levels(m)):
        notes.append("no byte counter in the export: no intensity (the sections' throughputs are rates, "
                     "not bytes; capture dram__bytes_read.sum,dram__bytes_write.sum, "
                     "lts__t_bytes.sum, l1tex__t_bytes.sum)")
    if not any(m in FLOP_METRICS or TENSOR_OPS.match(m) for ms in metrics for m in ms):
        notes.append("no FLOP counter in the export (capture the SpeedOfLight_RooflineChart section or "
                     "sm__sass_thread_inst_executed_op_*_pred_on.sum, and for the tensor cores "
                     "sm__ops_path_tensor_src_*)")
    bare = sum(1 for k, m in zip(kernels, metrics, strict=True)
               if k.tensor_instructions and not any(TENSOR_OPS.match(name) for name in m))
    if bare:
        notes.append(f"{bare} kernel(s) ran tensor-core instructions with no tensor operation counter: "
                     f"their matrix work is not in these FLOPs ({TENSOR_HINT})")
    skipped = sorted({name for ms in metrics for name in ms
                      if (found := TENSOR_OPS.match(name)) and found.group(1) not in TENSOR_SOURCES})
    if skipped:
        notes.append(f"tensor counters of several or unknown source types not counted: {', '.join(skipped)}")
    return notes


def _levels(metrics: dict) -> set[str]:
    return {BYTE_METRICS[m] for m in metrics if m in BYTE_METRICS}


Launches = dict[str, tuple[str, dict[str, float], str]]  # ID → (kernel, metrics, GPU name)


def _long_rows(path, header: list[str], rows: Iterator[list[str]]) -> Launches:
    at = {column: header.index(column) for column in ("ID", "Kernel Name", *LONG_COLUMNS)}
    section_at = header.index("Section Name") if "Section Name" in header else None
    needed = max(at.values()) + 1
    out: Launches = {}
    for number, row in enumerate(rows, start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) < needed:
            raise DataFileError(path, f"row {number} has {len(row)} of the header's {len(header)} columns "
                                      f"(a metric's row needs the first {needed}, to its value)")
        ident, name = row[at["ID"]], row[at["Kernel Name"]]
        metric, unit, value = (row[at[c]] for c in LONG_COLUMNS)
        _, metrics, _ = out.setdefault(ident, (name, {}, ""))
        if not metric:  # a rule's row
            continue
        if metric == DEVICE and value.strip():
            out[ident] = (name, metrics, value.strip())
            continue
        section = row[section_at] if section_at is not None else ""
        key = TIME if (metric, section) == (DURATION, SOL_SECTION) else metric
        if key == TIME and TIME in metrics and metric == DURATION:
            continue  # the counter itself, already read
        if _wanted(key) and (reading := _value(path, ident, key, unit, value)) is not None:
            metrics[key] = reading
            if metric == DURATION:
                metrics[DURATION] = 1.0  # marks a launch timed by the section, for the notes
    return out


def _raw_rows(path, header: list[str], rows: Iterator[list[str]]) -> Launches:
    id_at, name_at = header.index("ID"), header.index("Kernel Name")
    device_at = header.index(DEVICE) if DEVICE in header else None
    first, blank = next(rows, None), 0
    while first is not None and not any(cell.strip() for cell in first):  # blank lines before the units
        first, blank = next(rows, None), blank + 1
    units = first if first is not None and len(first) > id_at and not first[id_at].strip() else None
    launches = rows if units is not None or first is None else itertools.chain([first], rows)
    columns = [(i, metric) for i, metric in enumerate(header) if _wanted(metric)]
    out: Launches = {}
    for number, row in enumerate(launches, start=(3 if units else 2) + blank):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) < len(header):
            raise DataFileError(path, f"row {number} has {len(row)} of the header's {len(header)} columns")
        ident = row[id_at]
        if ident in out:
            raise DataFileError(path, f"row {number} repeats kernel ID {ident}: a raw page has one row "
                                      "per launch")
        metrics = {metric: _value(path, ident, metric, units[i] if units and i < len(units) else "", row[i])
                   for i, metric in columns}
        device = row[device_at].strip() if device_at is not None else ""
        out[ident] = (row[name_at], {m: v for m, v in metrics.items() if v is not None}, device)
    return out


def _today(launches: Launches) -> Launches:
    """Each launch's counters under today's names: one of Nsight Compute 2019's (``LEGACY``)
    read as today's where the export has no value of today's, and marked (``RENAMED``)."""
    for _, metrics, _ in launches.values():
        for old, new in LEGACY.items():
            if old in metrics and (value := metrics.pop(old)) is not None and new not in metrics:
                metrics[new], metrics[RENAMED + old] = value, 1.0
    return launches


def _wanted(metric: str) -> bool:
    return metric in _WANTED or TENSOR_OPS.match(metric) is not None


_WANTED = {TIME, TENSOR, CYCLES, CLOCK, *LEGACY, *FLOP_METRICS, *BYTE_METRICS}


def _value(path, ident: str, metric: str, unit: str, text: str) -> float | None:
    """A metric's value in base units (s, byte, count); None when not measured ("n/a", "")."""
    text = text.strip()
    if text in ("", "n/a", "N/A"):
        return None
    try:
        number = float(text.replace(",", ""))
    except ValueError:
        raise DataFileError(path, f"{text!r} is not a number", f"kernel ID {ident}", metric) from None
    if not math.isfinite(number) or number < 0:
        raise DataFileError(path, f"must be a finite number of at least 0, got {text!r}",
                            f"kernel ID {ident}", metric)
    unit = unit.strip()
    kind = unit_kind(unit)
    today = LEGACY.get(metric, metric)  # a 2019 name's unit is its today's name's
    if today == CLOCK:  # only the fallback time needs it: one in another unit is not a clock
        return number * kind[1] if kind is not None and _is_clock(unit) else None
    if today == CYCLES and (kind is None or kind[0] != "count"):
        return None
    if today == TIME:
        if kind is None or kind[0] != "time":
            raise DataFileError(path, f"a time in an unknown unit {unit!r} (ns, us, ms, s, or "
                                      "nsecond, usecond, msecond, second)", f"kernel ID {ident}", metric)
        return number * kind[1]
    if kind is None:
        raise DataFileError(path, f"an unknown unit {unit!r} for a count or bytes", f"kernel ID {ident}",
                            metric)
    expected = "bytes" if today in BYTE_METRICS else "count"
    if kind[0] != expected and not (kind[0] == "count" and not unit):  # no unit: a plain number
        raise DataFileError(path, f"a {kind[0]} ({unit!r}) where {expected} were expected: a rate or "
                                  "a percentage is no count", f"kernel ID {ident}", metric)
    number *= kind[1]
    if number > COUNTER_MAX:
        raise DataFileError(path, f"{BEYOND_COUNTER}, got {text!r}", f"kernel ID {ident}", metric)
    return number


def _tensor_flops(metrics: dict[str, float]) -> dict[str, int]:
    """FLOPs by precision from the tensor operation counters, the most inclusive of each source."""
    by_source: dict[str, dict[int, float]] = {}
    for metric, value in metrics.items():
        if (found := TENSOR_OPS.match(metric)) is None or found.group(1) not in TENSOR_SOURCES:
            continue
        _, dst, sparsity = found.groups()
        level = (dst is not None) + 2 * (sparsity is not None)  # 0: the source's total … 3: the finest
        levels = by_source.setdefault(TENSOR_SOURCES[found.group(1)], {})
        levels[level] = levels.get(level, 0.0) + value
    return {precision: round(levels[min(levels)]) for precision, levels in by_source.items()}


def _kernel(path, ident: str, name: str, metrics: dict[str, float]) -> ProfiledKernel:
    if TIME not in metrics and CYCLES in metrics and metrics.get(CLOCK, 0.0) > 0:
        metrics[TIME], metrics[CYCLE_TIMED] = metrics[CYCLES] / metrics[CLOCK], 1.0
    if TIME not in metrics:
        raise DataFileError(path, f"{TIME} is missing (nor has the export the {SOL_SECTION} section's "
                                  f"{DURATION}, nor {CYCLES} and {CLOCK} in cycles a second above 0): "
                                  f"export it (ncu --metrics {TIME},…, or the SpeedOfLight section)",
                            f"kernel ID {ident}")
    flops: dict[str, int] = {}
    for metric, (precision, weight) in FLOP_METRICS.items():
        if metric in metrics and not (metric.startswith("smsp__") and "sm" + metric[4:] in metrics):
            flops[precision] = flops.get(precision, 0) + round(metrics[metric] * weight)
    for precision, count in _tensor_flops(metrics).items():
        flops[precision] = flops.get(precision, 0) + count
    moved: dict[str, int] = {}
    split_dram = "dram__bytes_read.sum" in metrics or "dram__bytes_write.sum" in metrics
    for metric, level in BYTE_METRICS.items():
        if metric in metrics and not (metric == "dram__bytes.sum" and split_dram):
            moved[level] = moved.get(level, 0) + round(metrics[metric])
    return ProfiledKernel(name, metrics[TIME], flops, moved, 1, round(metrics.get(TENSOR, 0)))

