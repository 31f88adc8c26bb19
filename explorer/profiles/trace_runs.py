"""How a PyTorch profiler trace lays its kernels out: the profiler's steps (marked on the
GPU, or only on the CPU, as older PyTorch releases mark them), the GPUs the kernels ran on,
CUDA graphs (captured, or launched), and accelerators the project does not model.

A step marked only on the CPU (``ProfilerStep#N`` as a ``user_annotation``) holds the
kernels its thread launched: each launch (``cudaLaunchKernel``, ``cudaGraphLaunch``, …)
that starts inside the step's span names its kernels by ``args["correlation"]``, which the
kernel carries too.
"""

from __future__ import annotations

import bisect
import re
from typing import Any, NamedTuple, TypeGuard

from explorer.core.files.errors import DataFileError
from explorer.core.model.profile import ProfiledKernel
from explorer.profiles.events import args_of

STEP_PREFIX = "ProfilerStep#"
RUNTIME_CATEGORIES = ("cuda_runtime", "cuda_driver")
CAPTURE_CALLS = ("cudaStreamBeginCapture", "hipStreamBeginCapture")
GRAPH_LAUNCHES = ("cudaGraphLaunch", "hipGraphLaunch")
# cudaLaunchKernel(_ExC), cuLaunchKernel(Ex), cudaLaunchCooperativeKernel, hipLaunchKernel,
# hipExtModuleLaunchKernel (hipBLASLt's), hipModuleLaunchKernel, …
KERNEL_LAUNCH = re.compile(r"^(cuda|cu|hip)(Ext)?(Module)?Launch(Cooperative)?Kernel\w*$")
# Kineto's categories of accelerators other than CUDA's and ROCm's (both written as cuda_*)
FOREIGN = {"mtia": "MTIA", "xpu": "Intel XPU", "hpu": "Intel Gaudi (HPU)",
           "privateuse1": "a PrivateUse1 device"}


class Launch(NamedTuple):
    """A kernel as the trace ran it: the op that launched it, when it started, its
    launch's correlation id and the GPU it ran on. (A tuple: one is made for each kernel.)"""

    op: Any  # the launching op's External id (None: not recorded)
    kernel: ProfiledKernel
    start: Any
    correlation: Any
    device: Any


def plain_number(value: object) -> TypeGuard[int | float]:
    """A time a trace may hold: a number (not a bool), from 0 to 1e18."""
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < 1e18


def _ident(value: object) -> Any:
    return value if isinstance(value, int | str) and not isinstance(value, bool) else None


def device_of(event: dict) -> Any:
    """The GPU a kernel ran on: ``args["device"]``, else its ``pid`` (Kineto's GPU rows)."""
    device = _ident(args_of(event).get("device"))
    return device if device is not None else _ident(event.get("pid"))


def correlation_of(event: dict) -> Any:
    return _ident(args_of(event).get("correlation"))


def _spans(events: list, gpu: bool) -> list[tuple[str, float, float, Any]]:
    """(name, start, end, pid) of each profiler step marked on the GPU (``gpu``) or on the CPU."""
    spans = []
    for event in events:
        if not isinstance(event, dict) or not str(event.get("name", "")).startswith(STEP_PREFIX):
            continue
        on_gpu = event.get("cat") == "gpu_user_annotation"
        if on_gpu != gpu or (not gpu and event.get("cat") not in ("user_annotation", "cpu_op")):
            continue
        start, length = event.get("ts"), event.get("dur")
        if plain_number(start) and plain_number(length):
            spans.append((str(event["name"]), float(start), float(start) + float(length), event.get("pid")))
    return spans


def _left_out(left: list[Launch], what: str, why: str = "a recording opens while the GPU still runs the "
                                                         "step before") -> str:
    seconds = sum(k.kernel.time_s for k in left)
    return (f"{len(left):,} kernel(s), {seconds * 1e3:.3g} ms, {what}: work of steps not recorded ({why}); "
            "left out")


def in_steps(events: list, kernels: list[Launch]) -> tuple[list[Launch], list[str], int]:
    """(the kernels of the profiler's steps, notes on how they were found and on those left
    out, the steps they cover). Steps marked on the GPU hold the kernels that start inside
    them; steps marked only on the CPU, those their launches name. All kernels, no note
    and one step where the trace marks no step or no kernel falls in one."""
    spans = _spans(events, gpu=True)
    if spans:
        merged: list[list[float]] = []  # the steps' spans, (µs rounding at the edge) joined where they meet
        for low, high in sorted((low - 0.5, high) for _, low, high, _ in spans if low - 0.5 < high):
            if merged and low <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], high)
            else:
                merged.append([low, high])
        lows = [low for low, _ in merged]

        def inside(start) -> bool:
            if not plain_number(start):
                return True  # no start recorded: kept
            at = bisect.bisect_right(lows, start) - 1
            return at >= 0 and start < merged[at][1]

        kept = [k for k in kernels if inside(k.start)]
        steps = len({name for name, *_ in spans})  # (each GPU marks each step)
        if not kept:
            return kernels, [], 1
        if len(kept) == len(kernels):
            return kernels, [], steps
        left = [k for k in kernels if not inside(k.start)]
        return kept, [_left_out(left, f"started outside the profiler's {steps} step(s) on the GPU "
                                      f"({STEP_PREFIX}…)")], steps
    return _in_cpu_steps(events, kernels)


def _in_cpu_steps(events: list, kernels: list[Launch]) -> tuple[list[Launch], list[str], int]:
    spans = _spans(events, gpu=False)
    if not spans:
        return kernels, [], 1
    launched: dict[Any, str] = {}  # correlation id → the step whose span its launch starts in
    for event in events:
        if not isinstance(event, dict) or event.get("cat") not in RUNTIME_CATEGORIES:
            continue
        start, ident = event.get("ts"), correlation_of(event)
        if ident is None or not plain_number(start):
            continue
        step = next((name for name, low, high, pid in spans
                     if low <= start < high and (pid is None or pid == event.get("pid"))), None)
        if step is not None:
            launched[ident] = step
    kept = [k for k in kernels if k.correlation in launched]
    if not kept:
        return kernels, [f"the trace marks {len(spans)} profiler step(s) on the CPU ({STEP_PREFIX}…) "
                         "but no kernel's launch lies inside one: every kernel read, as one step"], 1
    steps = len({launched[k.correlation] for k in kept})
    notes = [f"steps marked on the CPU only ({len(spans)} {STEP_PREFIX}… span(s), none on the GPU, as "
             f"older PyTorch releases mark them): each kernel placed in the step whose span its launch "
             f"started in (by its correlation id); {len(kept):,} kernel(s) in {steps} step(s)"]
    if len(kept) < len(kernels):
        notes.append(_left_out([k for k in kernels if k.correlation not in launched],
                               "launched outside the profiler's steps on the CPU",
                               "before the first or after the last"))
    return kept, notes, steps


def by_device(kernels: list[Launch]) -> tuple[int, list[str]]:
    """(the GPUs the kernels ran on, a note naming each one's time where there are several)."""
    times: dict[Any, float] = {}
    for k in kernels:
        if k.device is not None:  # (a kernel without one is counted with the others)
            times[k.device] = times.get(k.device, 0.0) + k.kernel.time_s
    if len(times) < 2:
        return 1, []
    each = ", ".join(f"{device}: {seconds * 1e3:.3g} ms" for device, seconds in
                     sorted(times.items(), key=lambda item: str(item[0])))
    return len(times), [f"kernels of {len(times)} GPUs in one trace (device {each}): each device's time "
                        f"is its own, so a step is compared per device (the kernels' time ÷ {len(times)}), "
                        "not as one GPU's sum"]


def graphs(path, events: list, kernels: list[Launch]) -> list[str]:
    """Notes on CUDA (or HIP) graphs: their launches' kernels read as they ran; a trace of
    a graph's capture alone (launches recorded, never run) refused."""
    ran = {k.correlation for k in kernels if k.correlation is not None}
    captures: list[str] = []  # the capture calls, by name
    launches: list[Any] = []  # the graph launches' correlation ids
    unrun = 0
    is_launch: dict[str, bool] = {}  # (a trace names a few calls, each many times)
    for event in events:
        if not isinstance(event, dict) or event.get("cat") not in RUNTIME_CATEGORIES:
            continue
        name = str(event.get("name", ""))
        if name in CAPTURE_CALLS:
            captures.append(name)
        elif name in GRAPH_LAUNCHES:
            launches.append((name, correlation_of(event)))
        else:
            launch = is_launch.get(name)
            if launch is None:
                launch = is_launch[name] = KERNEL_LAUNCH.match(name) is not None
            if launch and (ident := correlation_of(event)) is not None and ident not in ran:
                unrun += 1
    notes = []
    if captures and not launches and unrun > len(kernels):
        raise DataFileError(path, f"records the capture of {len(captures)} CUDA graph(s) ({captures[0]}): "
                                  f"{unrun:,} kernel launch(es) captured and never run, {len(kernels):,} "
                                  "kernel(s) run: not a step; profile the graphs' replay (cudaGraphLaunch)")
    if captures:
        notes.append(f"{len(captures)} CUDA graph capture(s) in the trace ({captures[0]}): {unrun:,} "
                     "launch(es) captured, not run, are not kernels; only kernels that ran are read")
    if launches:
        replayed = sum(1 for _, ident in launches if ident in ran)
        notes.append(f"{len(launches):,} CUDA graph launch(es) ({launches[0][0]}), {replayed:,} of them with "
                     "kernels in the trace: a graph's kernels are read as they ran, each its own kernel")
    return notes


def categories(events: list) -> set[str]:
    """The categories the trace's events name."""
    return {category for event in events if isinstance(event, dict)
            and isinstance(category := event.get("cat"), str)}


def foreign_device(doc: dict, named: set[str]) -> str:
    """The accelerator a trace ran on that the project does not model ("MTIA (ARTEMIS)"),
    "" where it names none: Kineto writes its own categories for each (``named``:
    "mtia_runtime", …)."""
    seen = {category.split("_")[0].lower() for category in named}
    kind = next((label for prefix, label in FOREIGN.items() if prefix in seen), "")
    if not kind:
        return ""
    properties = doc.get("deviceProperties")
    names = [d.get("name") for d in properties if isinstance(d, dict)] if isinstance(properties, list) else []
    gpus = ", ".join(dict.fromkeys(n.strip() for n in names if isinstance(n, str) and n.strip()))
    return f"{kind} ({gpus})" if gpus else kind
