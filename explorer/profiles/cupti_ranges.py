"""A PyTorch profiler trace taken with CUPTI's range profiler
(``torch.profiler._ExperimentalConfig(profiler_metrics=[...])``): instead of kernel events
it holds one ``"cat": "cuda_profiler_range"`` event per kernel, its counters in ``args``
under Nsight Compute's metric names (``sm__`` or per-subpartition ``smsp__`` sums). They
are read as ``ncu`` reads them: FLOPs from the SASS instruction counts (an FMA 2 FLOPs,
half-precision pairs twice that), bytes from ``dram__bytes_*``, ``lts__t_bytes`` and
``l1tex__t_bytes``, the time from ``gpu__time_duration.sum`` (nanoseconds). A range's own
duration in the trace is the profiler's replay of the kernel, not the kernel's time: a
trace whose ranges lack ``gpu__time_duration.sum`` is refused, naming the metric to add.
"""

from __future__ import annotations

from pathlib import Path

from explorer.core.files.errors import DataFileError
from explorer.core.model.profile import ProfiledKernel
from explorer.profiles.events import args_of
from explorer.profiles.ncu import BYTE_METRICS, FLOP_METRICS, TIME

RANGE = "cuda_profiler_range"


def _metric(name: str) -> str:
    """A counter's name as ncu's tables know it (a per-subpartition sum is the SM's sum)."""
    return "sm__" + name.removeprefix("smsp__") if name.startswith("smsp__") else name


def _counter(path, index: int, name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 1e21:
        raise DataFileError(path, f"must be a number of at least 0, got {value!r}", f"event {index}",
                            f"args.{name}")
    return float(value)


def range_kernels(path: str | Path, events: list) -> list[ProfiledKernel]:
    """The kernels of a trace's CUPTI counter ranges ([] when it has none)."""
    out = []
    for index, event in enumerate(events):
        if not isinstance(event, dict) or event.get("cat") != RANGE:
            continue
        args = args_of(event)
        counters = {_metric(k): _counter(path, index, k, v) for k, v in args.items()
                    if _metric(k) in FLOP_METRICS or k in BYTE_METRICS or k == TIME}
        if TIME not in counters:
            raise DataFileError(path, f"its CUPTI counter ranges carry no kernel time: add {TIME} to the "
                                      "profiler's metrics (a range's duration in the trace is the "
                                      "profiler's replay of the kernel, not the kernel's time)",
                                f"event {index}")
        flops: dict[str, int] = {}
        for metric, (precision, weight) in FLOP_METRICS.items():
            if counters.get(metric):
                flops[precision] = flops.get(precision, 0) + round(counters[metric] * weight)
        moved: dict[str, int] = {}
        split = "dram__bytes_read.sum" in counters or "dram__bytes_write.sum" in counters
        for metric, level in BYTE_METRICS.items():
            if counters.get(metric) and not (metric == "dram__bytes.sum" and split):
                moved[level] = moved.get(level, 0) + round(counters[metric])
        named = event.get("name")
        name = named if isinstance(named, str) and named else "kernel"
        out.append(ProfiledKernel(name, counters[TIME] * 1e-9, flops, moved))
    return out
