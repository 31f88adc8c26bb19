"""Running a plan of kernel cases as a generator: progress out, results at the end.

``run`` yields ``Progress`` before each case and once at the end, and *returns* the
``Results`` (``StopIteration.value``; ``drive`` collects it). It checks the cancel token
between kernel launches: a cancelled run returns the points measured so far, marked
``cancelled``. Nothing here knows about threads or Qt; the CLI drives it in a loop, the
app's RunController on a worker thread.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field, replace
from typing import Any

from explorer.core.hardware.hardware import GPU
from explorer.kernels.backends import describe_failure
from explorer.kernels.cases import Case, Preset, Skip
from explorer.kernels.energy import Unmeasurable, describe_meter, meter_for
from explorer.kernels.energy_window import fill_window
from explorer.kernels.load import load_source
from explorer.kernels.reference import Reference
from explorer.kernels.results import CACHE_SUITES, Point, Results
from explorer.kernels.suites import plan as plan_cases
from explorer.kernels.suites import resolve
from explorer.kernels.timing import Cancelled, CancelToken, TimingPlan, measure


@dataclass(frozen=True)
class Progress:
    done: int
    total: int
    current: str  # what runs next ("" at the end)
    elapsed_s: float
    point: Point | None = None  # the point just measured, for live display

    @property
    def eta_s(self) -> float | None:
        """Remaining time if the rest runs at the pace so far (None before the first case)."""
        if self.done == 0:
            return None
        return self.elapsed_s / self.done * (self.total - self.done)

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 1.0


# How long each case is timed: enough regions for a stable median, within the preset's budget.
TIMING = {
    Preset.SMOKE: TimingPlan(warmup=1, min_regions=3, max_regions=5, target_s=0.02),
    Preset.QUICK: TimingPlan(warmup=2, min_regions=7, max_regions=40, target_s=1.0),
    Preset.FULL: TimingPlan(warmup=3, min_regions=11, max_regions=100, target_s=2.0),
}


def _out_of_memory(exc: BaseException) -> bool:
    return isinstance(exc, MemoryError) or "OutOfMemory" in type(exc).__name__


# A case measured while other programs were busy is measured again, up to RETRIES times,
# after waiting QUIET_WAIT_S for them; still contended, it is kept and marked.
RETRIES, QUIET_WAIT_S = 2, 0.5
OFF = "off"  # ``run(load=OFF)``: foreign load not read, at the user's request


def run(backend, suites: list[str] | tuple[str, ...], preset: str = "quick",
        cancel: CancelToken | None = None, reference: Reference | None = None,
        timing: TimingPlan | None = None,
        clock: Callable[[], float] = time.monotonic,
        load="auto", energy="auto") -> Generator[Progress, None, Results]:
    """``load``: where foreign load is read (``kernels.load``); "auto" picks the backend's
    source, None reads none, "off" reads none because the user asked (``--no-load-check``).
    ``energy``: the meter each case's power is read from (``kernels.energy``); "auto" picks
    the backend's, None reads none."""
    cancel = cancel or CancelToken()
    asked_off = load == OFF
    load = load_source(backend) if load == "auto" else (None if asked_off else load)
    energy = meter_for(backend) if energy == "auto" else energy
    suites, preset = resolve(suites, preset)
    timing = timing or TIMING.get(preset, TimingPlan())
    planned = plan_cases(backend, suites, preset)
    cases = [c for c in planned if isinstance(c, Case)]
    state = _RunState(backend, load, timing, cancel, reference,
                      skipped=[_skip_entry(s, s.reason) for s in planned if isinstance(s, Skip)],
                      energy=None if isinstance(energy, Unmeasurable) else energy)
    if cases and energy is not None:
        state.notes.append(f"energy not measured: {energy.reason}" if isinstance(energy, Unmeasurable)
                           else describe_meter(energy))
    if cases:
        backend.warm_up()  # clocks up, context and libraries loaded before the first timing
    start = clock()
    cancelled = False
    last: Point | None = None
    for index, case in enumerate(cases):
        yield Progress(index, len(cases), case.label, clock() - start, last)
        last = None
        if cancel.cancelled:
            cancelled = True
            break
        waiting = functools.partial(_waiting, index, len(cases), case.label, clock, start)
        last, cancelled = yield from _run_case(state, case, waiting)
        if cancelled:
            break
    points, notes = state.points, state.notes
    notes.extend(_comparisons(points))
    notes.extend(_contention(points, load, backend, asked_off))
    if load is not None and hasattr(load, "close"):
        load.close()
    if preset == Preset.SMOKE:
        notes.append("smoke preset: working sets are small enough to stay in caches; these are "
                     "not main-memory rates")
    yield Progress(len(points) if cancelled else len(cases), len(cases), "", clock() - start, last)
    return results_of(backend, suites, preset, points, reference, cancelled, state.skipped, notes)


@dataclass
class _RunState:
    """What the cases of one run share, and what they have gathered so far."""

    backend: Any
    load: Any  # a ``kernels.load`` source, or None
    timing: TimingPlan
    cancel: CancelToken
    reference: Reference | None
    skipped: list[dict] = field(default_factory=list)
    energy: Any = None  # a ``kernels.energy`` meter, or None
    points: list[Point] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _run_case(state: _RunState, case: Case,
              waiting: Callable[[str], Progress]) -> Generator[Progress, None, tuple[Point | None, bool]]:
    """Prepare, measure and check one case, then free it whatever happened. Returns its point
    (None when it failed or was cancelled) and whether the run stops here."""
    backend, prepared = state.backend, None
    try:
        with backend.activate():  # the chosen GPU is per thread; this may be a worker thread
            prepared = case.prepare()
        measured, foreign, power, stop_after = yield from _measure_quietly(state, prepared, waiting)
        with backend.activate():
            problem = prepared.check()
    except Cancelled:
        return None, True
    except Exception as exc:  # one broken or oversized case must not lose the run
        reason = _failure_reason(exc)
        state.skipped.append(_skip_entry(case, reason))
        if not _healthy(backend):  # a fault that sticks (a lost device, a broken context)
            state.notes.append(f"the run stopped at {case.label}: the device no longer works ({reason}); "
                               f"the {len(state.points)} points measured before are kept")
            return None, True
        return None, False
    finally:  # freeing after a fault may fault too (a lost device): the run still ends
        if prepared is not None:
            with contextlib.suppress(Exception):
                prepared.close()
        del prepared
        with contextlib.suppress(Exception):
            _release(backend)
    point = replace(_point(state, case, measured, foreign, problem), power_w=power.watts if power else None,
                    power_uncertainty_w=power.uncertainty_w if power else None)
    state.points.append(point)
    return point, stop_after


def _measure_quietly(state: _RunState, prepared,
                     waiting: Callable[[str], Progress]) -> Generator[Progress, None, tuple]:
    """Time a prepared case, again after a quiet moment while other programs are busy (RETRIES
    times at most). Returns (measurement, foreign load, power, stop): a cancel while waiting
    keeps the point already measured and stops the run after it. Where energy is read, the
    kernel runs on after its timing until the meter's window is filled (``window_s``)."""
    for attempt in range(RETRIES + 1):
        token = _read_load(state.load.start) if state.load else None
        metered = _read_load(state.energy.start) if state.energy else None
        window_end = time.monotonic() + state.energy.window_s if state.energy else 0.0
        filled = True
        with state.backend.activate():
            measured = measure(prepared.launch, state.backend.timer, state.timing, state.cancel)
            if metered is not None:
                filled = fill_window(prepared.launch, state.backend.sync, window_end, measured.median_s,
                                     state.cancel)
        # A cancel while the window filled keeps the timing; the short window's energy is noise.
        power = _read_load(state.energy.stop, metered) if metered is not None and filled else None
        foreign = _read_load(state.load.stop, token) if state.load else None
        if not filled:
            return measured, foreign, None, True
        if foreign is None or not foreign.busy or attempt == RETRIES:
            break
        yield waiting(foreign.detail)
        try:
            _wait(QUIET_WAIT_S, state.cancel)
        except Cancelled:
            return measured, foreign, power, True
    return measured, foreign, power, False


def _waiting(index: int, total: int, label: str, clock: Callable[[], float], start: float,
             detail: str) -> Progress:
    """The progress report while a case waits for other programs to quieten."""
    return Progress(index, total, f"{label}: waiting for a quiet moment ({detail})", clock() - start, None)


def _point(state: _RunState, case: Case, measured, foreign, problem) -> Point:
    """A measured case's point, flagged against the reference and other programs' load."""
    rate_flops = case.flops / measured.median_s
    rate_bytes = case.bytes / measured.median_s
    suspect = (state.reference.suspect(case.dtype, rate_flops, rate_bytes)
               if state.reference and case.suite not in CACHE_SUITES else None)  # caches: fast by design
    return Point(
        suite=case.suite, kernel=case.kernel, dtype=case.dtype, size=dict(case.size),
        # A GPU point says how many launches one pair of events timed (launch overhead).
        param=(measured.with_launches(case.param) if state.backend.device_kind == GPU
               else dict(case.param)), flops=case.flops, bytes=case.bytes,
        time_median_s=measured.median_s, time_p20_s=measured.p20_s, time_p80_s=measured.p80_s,
        check=problem, suspect=suspect, convention=case.convention,
        dram_traffic=case.dram_traffic,
        foreign_load=foreign.cores if foreign else None,
        contended=foreign.detail if foreign and foreign.busy else None,
    )


def _failure_reason(exc: Exception) -> str:
    """Why a case that raised is skipped, in a line."""
    first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return ("not enough memory for this size" if _out_of_memory(exc)
            else describe_failure(exc) or f"{type(exc).__name__}: {first_line[:300]}")


def _skip_entry(item: Case | Skip, reason: str) -> dict:
    return {"suite": item.suite, "kernel": item.kernel, "dtype": item.dtype, "reason": reason}


def _read_load(read, *args):
    """A load or energy reading, or None when it cannot be read (a /proc, sysfs or NVML
    error must not cost the case its measurement)."""
    try:
        return read(*args)
    except Exception:
        return None


def _wait(seconds: float, cancel: CancelToken) -> None:
    """Sleep, honouring a cancel within a twentieth of a second."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        cancel.check()
        time.sleep(min(0.05, max(0.0, end - time.monotonic())))


def _contention(points: list[Point], load, backend, asked_off: bool = False) -> list[str]:
    """What the run's summary says about other programs' load."""
    if asked_off:
        return ["other programs' load was not checked (--no-load-check): no point is marked "
                "contended, and a busy machine would go unnoticed"]
    if load is None:
        where = "NVML (pip install nvidia-ml-py)" if backend.device_kind == GPU else "/proc"
        return [f"other programs' load was not measured (no {where}): a busy machine would go unnoticed"]
    contended = [p for p in points if p.contended]
    if not contended:
        return []
    worst = max(p.foreign_load or 0.0 for p in contended)
    unit = "processes" if backend.device_kind == GPU else "cores"
    return [f"{len(contended)} of {len(points)} points were measured while other programs were busy "
            f"(up to {worst:.2f} {unit}), after {RETRIES} retries: they are marked contended and "
            "never used as ceilings"]


def _healthy(backend) -> bool:
    """Whether the backend still works after a case failed (backends without the check do)."""
    check = getattr(backend, "healthy", None)
    try:
        return check is None or bool(check())
    except Exception:
        return False


def _release(backend) -> None:
    with backend.activate():
        backend.release()


def results_of(backend, suites, preset: Preset, points: list[Point], reference: Reference | None,
               cancelled: bool, skipped=(), notes=()) -> Results:
    """The results of a run (or of its part measured before it was stopped)."""
    return Results(
        machine=backend.describe(),
        timer=backend.timer.method,
        preset=preset,
        suites=tuple(suites),
        points=tuple(points),
        skipped=tuple(skipped),
        reference=reference.source if reference else "",
        cancelled=cancelled,
        created=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        notes=tuple(notes),
    )


def _best_time(points: list[Point], suite: str, dtype: str) -> Point | None:
    matching = [p for p in points if p.suite == suite and p.dtype == dtype and p.trusted]
    return max(matching, key=lambda p: p.flops_per_s, default=None)


def _comparisons(points: list[Point]) -> list[str]:
    """Checks that need two points: TF32 must beat FP32, fp16 attention must not be slower."""
    notes = []
    fp32 = {(p.kernel, tuple(p.size.items())): p for p in points if p.suite == "gemm" and p.dtype == "fp32"}
    for p in points:
        if p.suite == "gemm" and p.dtype == "tf32" and p.kernel == "square":  # compute-bound
            base = fp32.get((p.kernel, tuple(p.size.items())))
            if base:
                speedup = base.time_median_s / p.time_median_s
                verdict = "engaged" if speedup > 1.2 else "did NOT engage (no speed-up)"
                notes.append(f"TF32 {p.kernel} GEMM ran {speedup:.2f}× the FP32 speed: TF32 {verdict}")
    attention: dict[int, dict[str, Point]] = {}  # sequence length → precision → point
    for p in points:
        if p.suite == "attention":
            attention.setdefault(p.size.get("seq", 0), {})[p.dtype] = p
    if attention:
        longest = attention[max(attention)]
        if "fp16" in longest and "fp32" in longest:
            ratio = longest["fp32"].time_median_s / longest["fp16"].time_median_s
            verdict = "as it should" if ratio >= 1.0 else "SLOWER: a batched product fell back to FP32"
            notes.append(f"attention at seq {max(attention)}: fp16 ran {ratio:.2f}× the fp32 speed, "
                         f"{verdict}")
    return notes


def drive(generator: Generator[Progress, None, Results],
          on_progress: Callable[[Progress], None] = lambda p: None) -> Results:
    """Run a ``run`` generator to the end, passing each progress report to ``on_progress``."""
    while True:
        try:
            on_progress(next(generator))
        except StopIteration as stop:
            return stop.value
