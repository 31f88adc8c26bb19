"""From CPU to GPU: a CPU from the catalogue turned into a GPU one design choice at a time.

Each stage keeps the choices before it and adds one:

0. the CPU as it is;
1. many simple cores: the GPU's vector units (its compute roof is cores × lanes × clock);
2. latency hiding by overlap: memory delivers bytes in flight / latency (Little's law),
   with the latency measured on the GPU the lab ends at;
3. high-bandwidth memory: the GPU's memory instead of DDR (still only as fast as the
   bytes in flight allow);
4. tensor cores: the GPU's matrix units;
5. lower precision: bf16 instead of fp32, half the bytes per value;
6. batching: many sequences per step; the device is now the catalogue's GPU entry itself.

The device of every stage is assembled from the two catalogue entries, so each roof keeps
its source; the bytes-in-flight cap is a what-if marked as derived. The texts quote numbers
computed here, never typed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from explorer.core.analysis import Analysis, analyze, batch_sweep
from explorer.core.hardware import Hardware
from explorer.core.littles_law import bytes_in_flight_needed, latency_of
from explorer.core.models import ModelSpec
from explorer.core.session import Session, WhatIf
from explorer.core.units import format_bytes, format_si, format_time
from explorer.core.workload import WorkloadParams

LAB_ID = "design-lab"
LOW_PRECISION = "bf16"
DEFAULT_IN_FLIGHT = 16 * 1024
DEFAULT_BATCH = 64


@dataclass(frozen=True)
class Stage:
    id: str
    title: str
    topic: str | None  # the "why" paragraph that goes with it


STAGES = (
    Stage("cpu", "Start: a CPU", None),
    Stage("cores", "Many simple cores", "simple-cores"),
    Stage("overlap", "Latency hiding by overlap", "latency-hiding"),
    Stage("hbm", "High-bandwidth memory", "hbm"),
    Stage("matrix", "Tensor cores", "tensor-cores"),
    Stage("precision", "Lower precision", "mixed-precision"),
    Stage("batching", "Batching", "batching"),
)
CORES, OVERLAP, HBM, MATRIX, PRECISION, BATCHING = range(1, 7)


def lanes(hw: Hardware, precision: str = "fp32") -> tuple[int, float, float]:
    """(cores, FLOP per cycle per core, clock) behind ``hw``'s vector peak: the peak divided
    by cores × clock (the clock the peak was quoted at). Derived from the catalogue."""
    peak = hw.vector_peak(precision)
    if peak is None:
        raise KeyError(f"{hw.name} has no {precision} peak")
    clock = peak.clock_hz or hw.specs.boost_clock_hz
    return hw.specs.cores, peak.flops_per_s / (hw.specs.cores * clock), clock


@dataclass(frozen=True)
class Lab:
    cpu: Hardware
    gpu: Hardware
    model_id: str
    model: ModelSpec
    context: int = 1024
    stage: int = 0
    in_flight_bytes: float = DEFAULT_IN_FLIGHT
    batch: int = DEFAULT_BATCH

    def __post_init__(self) -> None:
        if self.cpu.kind != "cpu" or self.gpu.kind != "gpu":
            raise ValueError("the lab goes from a CPU to a GPU")
        latency_of(self.gpu)  # NoLatencyError names a GPU without a measured latency
        if not 0 <= self.stage < len(STAGES):
            raise ValueError(f"stages run from 0 to {len(STAGES) - 1}, not {self.stage}")
        if self.in_flight_bytes < 1 or self.batch < 1:
            raise ValueError("bytes in flight and batch must be positive")

    # -- the state of a stage ----------------------------------------------------------------
    @property
    def latency_s(self) -> float:
        return latency_of(self.gpu)

    def device(self) -> Hardware:
        """The stage's device, without the bytes-in-flight cap (that is ``what_if``)."""
        if self.stage == 0:
            return self.cpu
        if self.stage >= BATCHING:
            return self.gpu
        gpu, cpu = self.gpu, self.cpu
        peaks = tuple(p for p in gpu.peaks if p.unit == "vector" or self.stage >= MATRIX)
        memory = (gpu if self.stage >= HBM else cpu).main_memory
        # Little's law needs the latency: the GPU's measured one, with its source.
        main = gpu.main_memory
        memory = replace(memory, latency_s=main.latency_s, latency_provenance=main.latency_provenance)
        return Hardware(
            id=LAB_ID, name=f"{cpu.name} → {gpu.name}, stage {self.stage}", vendor="design lab",
            kind="gpu", year=gpu.year, specs=gpu.specs, peaks=peaks, memory=(memory,),
            sources=tuple(dict((*cpu.sources, *gpu.sources)).items()),
            notes=f"Design lab: {', '.join(s.title.lower() for s in STAGES[1:self.stage + 1])}.")

    def what_if(self) -> WhatIf:
        """The bytes-in-flight cap, from the overlap stage on, while it binds."""
        if self.stage < OVERLAP or self.in_flight_bytes >= self.needed_in_flight():
            return WhatIf()
        return WhatIf(in_flight_bytes=self.in_flight_bytes)

    def shown(self) -> Hardware:
        """The device as drawn: with the bytes-in-flight cap applied."""
        return self.what_if().apply(self.device())

    def params(self) -> WorkloadParams:
        return WorkloadParams(phase="decode", batch=self.batch if self.stage >= BATCHING else 1,
                              context=self.context,
                              dtype=LOW_PRECISION if self.stage >= PRECISION else "fp32")

    def precisions(self) -> tuple[str, ...]:
        return ("fp32", LOW_PRECISION) if self.stage >= MATRIX else ("fp32",)

    def session(self) -> Session:
        device = self.device()
        hardware = (device.id,) if self.stage == 0 else (device.id, self.cpu.id)
        what_if = self.what_if()
        what_ifs = ((device.id, what_if),) if what_if.active else ()
        return Session(hardware=hardware, model=self.model_id, params=self.params(),
                       what_ifs=what_ifs, precisions=self.precisions())

    def analysis(self) -> Analysis:
        return analyze(self.model, self.params(), self.shown())

    def cpu_analysis(self) -> Analysis:
        return analyze(self.model, self.params(), self.cpu)

    def effective_bandwidth(self) -> float:
        return self.shown().bandwidth_bytes_per_s

    def needed_in_flight(self) -> float:
        """Bytes in flight that reach the stage's memory peak (peak × latency)."""
        return bytes_in_flight_needed(self.device().bandwidth_bytes_per_s, self.latency_s)

    # -- words -------------------------------------------------------------------------------
    def text(self) -> str:
        return (_start, _cores, _overlap, _hbm, _matrix, _precision, _batching)[self.stage](self)


def crossing_batch(lab: Lab) -> int | None:
    """The smallest batch whose step is compute-bound (None: none that fits)."""
    sweep = batch_sweep(lab.model, replace(lab.params(), batch=1), lab.shown())
    return next((int(b) for b, m in zip(sweep.batch, sweep.memory_bound, strict=True) if not m), None)


def _step(a: Analysis) -> str:
    """"12 ms per step, memory-bound"."""
    t = a.totals
    bound = "memory" if t.memory_time_s > t.compute_time_s else "compute"
    return f"{format_time(t.time_s)} per step, {bound}-bound"


def _vector_roof(hw: Hardware) -> str:
    cores, per_cycle, clock = lanes(hw)
    peak = hw.vector_peak("fp32")
    return (f"{cores} {hw.specs.core_label}s × {per_cycle / 2:.0f} fp32 lanes × 2 FLOP (a fused "
            f"multiply-add) × {format_si(clock, 'Hz')} = {format_si(peak.flops_per_s, 'FLOP/s')}")


def _start(lab: Lab) -> str:
    cpu, a = lab.cpu, lab.analysis()
    return (f"The {cpu.name}: a few big cores, each built to run one thread fast. Its fp32 roof is "
            f"{_vector_roof(cpu)} (derived), its memory {cpu.main_memory.name} at "
            f"{format_si(cpu.bandwidth_bytes_per_s, 'B/s')}. {lab.model.name} decoding one "
            f"sequence in fp32: {_step(a)}, as every weight is read once per token.")


def _cores(lab: Lab) -> str:
    gpu, a, before = lab.gpu, lab.analysis(), lab.cpu_analysis()
    ratio = gpu.vector_peak().flops_per_s / lab.cpu.vector_peak().flops_per_s
    return (f"Replace them with many simple in-order cores: {_vector_roof(gpu)} (derived from the "
            f"{gpu.name}'s datasheet), {ratio:.1f}× the CPU's arithmetic. The compute roof jumps; "
            f"the decode step does not move ({format_time(a.totals.time_s)} against "
            f"{format_time(before.totals.time_s)}): it was waiting for memory, not for arithmetic.")


def _in_flight(lab: Lab) -> str:
    return (f"With {format_bytes(lab.in_flight_bytes)} in flight the memory delivers "
            f"{format_si(lab.effective_bandwidth(), 'B/s')} of its "
            f"{format_si(lab.device().bandwidth_bytes_per_s, 'B/s')}; "
            f"{format_bytes(lab.needed_in_flight())} in flight (peak × latency) would reach the peak.")


def _overlap(lab: Lab) -> str:
    return (f"Memory answers a load only after its latency: {format_time(lab.latency_s)}, measured "
            f"on the {lab.gpu.name} (the chip this lab ends at). So a memory delivers bytes in "
            f"flight ÷ latency (Little's law), and simple cores cannot guess or reorder their way "
            f"around the wait: they hide it by keeping thousands of threads' loads outstanding. "
            f"{_in_flight(lab)} Slide the bytes in flight. The step: {_step(lab.analysis())}.")


def _hbm(lab: Lab) -> str:
    gpu, cpu = lab.gpu, lab.cpu
    ratio = gpu.bandwidth_bytes_per_s / cpu.bandwidth_bytes_per_s
    return (f"High-bandwidth memory stacked beside the chip: {gpu.main_memory.name} at "
            f"{format_si(gpu.bandwidth_bytes_per_s, 'B/s')}, {ratio:.1f}× the CPU's DDR. It pays "
            f"off only with enough requests outstanding. {_in_flight(lab)} The step: "
            f"{_step(lab.analysis())}, against {format_time(lab.cpu_analysis().totals.time_s)} on the CPU.")


def _matrix(lab: Lab) -> str:
    gpu, a = lab.gpu, lab.analysis()
    matrix = gpu.peak(LOW_PRECISION, "matrix")
    vector = gpu.vector_peak("fp32")
    unit = gpu.specs.matrix_unit or "matrix units"
    return (f"{unit}: a small matrix product per instruction. In {LOW_PRECISION} they reach "
            f"{format_si(matrix.flops_per_s, 'FLOP/s')}, {matrix.flops_per_s / vector.flops_per_s:.0f}× "
            f"the fp32 vector roof. Decoding one sequence does not move "
            f"({format_time(a.totals.time_s)} per step): a higher roof helps only work that "
            f"reaches it, and this step is starved of bytes.")


def _precision(lab: Lab) -> str:
    a = lab.analysis()
    before = analyze(lab.model, replace(lab.params(), dtype="fp32"), lab.shown())
    speedup = before.totals.time_s / a.totals.time_s
    return (f"Store and compute in {LOW_PRECISION}: two bytes a value instead of four. Every "
            f"point moves right (twice the FLOPs per byte) and the products now run under the "
            f"{LOW_PRECISION} matrix roof. The step: {_step(a)}, {speedup:.1f}× "
            f"faster than in fp32, because it reads half the bytes.")


def _batching(lab: Lab) -> str:
    a, gpu = lab.analysis(), lab.gpu
    t = a.totals
    fits = "fit in" if t.fits_in_memory else "do NOT fit in"
    crossing = crossing_batch(lab)
    turn = (f"the step turns compute-bound from a batch of {crossing:,}" if crossing
            else "the step stays memory-bound up to the largest batch that fits")
    return (f"Decode {lab.batch} sequences at once: each weight read serves them all. The step "
            f"does {format_si(t.flops / t.bytes, 'FLOP/B')} and delivers {t.tokens_per_s:,.0f} "
            f"tokens/s at {_step(a)}; {turn}. Weights, KV cache and activations "
            f"({format_bytes(t.memory_required_bytes)}) {fits} {format_bytes(t.memory_capacity_bytes)}. "
            f"This device is now the catalogue's {gpu.name}, with every number from its datasheet.")
