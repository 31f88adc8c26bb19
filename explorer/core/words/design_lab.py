"""From CPU to GPU: a CPU from the catalogue turned into a GPU one design choice at a time.

Each stage keeps the hardware choices before it and adds one:

0. the CPU as it is;
1. many simple cores: the GPU's vector units (its fp32 roof is lanes × 2 FLOP × clock),
   still fed by the CPU's DDR memory;
2. high-bandwidth memory: the GPU's own memory (its datasheet bandwidth);
3. latency hiding: that bandwidth needs bytes in flight (Little's law with the GPU's
   measured latency); a bytes-in-flight cap is a what-if of this stage only, and from the
   next stage on the GPU keeps enough in flight, as its thousands of threads do;
4. tensor cores: the catalogue GPU itself, with its matrix units;
5. lower precision: bf16 instead of fp32, half the bytes per value;
6. batching: many sequences per step.

Every stage's device is made of catalogue parts only (``parts`` says which), so each roof
keeps its source; from the tensor-core stage on it is the catalogue GPU entry itself.
The texts are ``Explanation``s whose numbers are claims checked against the analysis.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from explorer.core.analysis.analysis import Analysis
from explorer.core.analysis.batching import crossing_batch
from explorer.core.hardware.hardware import CPU, GPU, ComputePeak, Hardware, evaluate_formula, vector_lanes
from explorer.core.hardware.littles_law import bytes_in_flight_needed, latency_of
from explorer.core.model.applicability import Phase
from explorer.core.model.models import ModelSpec
from explorer.core.model.session import Session, WhatIf, model_choice
from explorer.core.model.workload import WorkloadParams
from explorer.core.units import format_bytes, format_number, format_si, format_time
from explorer.core.words.batch_claims import Crossing
from explorer.core.words.claims import (
    Bound,
    Claim,
    Fits,
    Quantity,
    State,
    faster,
    step_time,
    throughput,
    times,
)
from explorer.core.words.sentences import Explanation

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
    Stage("hbm", "High-bandwidth memory", "hbm"),
    Stage("overlap", "Latency hiding by overlap", "latency-hiding"),
    Stage("matrix", "Tensor cores", "tensor-cores"),
    Stage("precision", "Lower precision", "mixed-precision"),
    Stage("batching", "Batching", "batching"),
)
CORES, HBM, OVERLAP, MATRIX, PRECISION, BATCHING = range(1, 7)


def like_for_like(gpu: Hardware) -> tuple[ComputePeak, ComputePeak] | None:
    """(vector peak, matrix peak) of one precision family, to show what the matrix units
    alone buy: TF32 matrix against fp32 vector where the chip has TF32, else a 16-bit
    format on both units."""
    for vector, matrix in (("fp32", "tf32"), ("fp16", "fp16"), ("bf16", "bf16")):
        v, m = gpu.peak(vector, "vector"), gpu.peak(matrix, "matrix")
        if v is not None and m is not None:
            return v, m
    return None


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
        if self.cpu.kind != CPU or self.gpu.kind != GPU:
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

    def parts(self) -> dict[str, str]:
        """Where the stage's device comes from: catalogue ids for its compute roofs and its
        memory, and the what-if it carries (if any)."""
        if self.stage == 0:
            return {"compute": self.cpu.id, "memory": self.cpu.id, "what_if": ""}
        compute = f"{self.gpu.id} (vector units)" if self.stage < MATRIX else self.gpu.id
        memory = self.cpu.id if self.stage < HBM else self.gpu.id
        cap = self.what_if().in_flight_bytes
        return {"compute": compute, "memory": memory,
                "what_if": f"{format_bytes(cap)} in flight" if cap else ""}

    def device(self) -> Hardware:
        """The stage's device, without the bytes-in-flight cap (that is ``what_if``)."""
        if self.stage == 0:
            return self.cpu
        if self.stage >= MATRIX:
            return self.gpu
        gpu, cpu = self.gpu, self.cpu
        memory = (gpu if self.stage >= HBM else cpu).main_memory
        return Hardware(
            id=LAB_ID, name=f"{cpu.name} → {gpu.name}, stage {self.stage}", vendor="design lab",
            short_name=f"Lab stage {self.stage}: {STAGES[self.stage].title.lower()}",
            kind=GPU, year=gpu.year, specs=gpu.specs,
            peaks=tuple(p for p in gpu.peaks if p.unit == "vector"), memory=(memory,),
            sources=tuple(dict((*cpu.sources, *gpu.sources)).items()),
            notes=f"Design lab: {', '.join(s.title.lower() for s in STAGES[1:self.stage + 1])}.")

    def what_if(self) -> WhatIf:
        """The bytes-in-flight cap: at the latency-hiding stage only, while it binds."""
        if self.stage != OVERLAP or self.in_flight_bytes >= self.needed_in_flight():
            return WhatIf()
        return WhatIf(in_flight_bytes=self.in_flight_bytes)

    def shown(self) -> Hardware:
        """The device as drawn: with the bytes-in-flight cap applied."""
        return self.what_if().apply(self.device())

    def params(self) -> WorkloadParams:
        return WorkloadParams(phase=Phase.DECODE, batch=self.batch if self.stage >= BATCHING else 1,
                              context=self.context,
                              dtype=LOW_PRECISION if self.stage >= PRECISION else "fp32")

    def precisions(self) -> tuple[str, ...]:
        return ("fp32", LOW_PRECISION) if self.stage >= MATRIX else ("fp32",)

    def session(self) -> Session:
        device = self.device()
        hardware = (device.id,) if self.stage == 0 else (device.id, self.cpu.id)
        what_if = self.what_if()
        what_ifs = ((device.id, what_if),) if what_if.active else ()
        return Session(hardware=hardware, params=self.params(), what_ifs=what_ifs,
                       precisions=self.precisions(), **model_choice(self.model))

    def state(self) -> State:
        return State(self.model, self.params(), self.shown())

    def cpu_state(self) -> State:
        """The CPU running this stage's workload."""
        return State(self.model, self.params(), self.cpu)

    def analysis(self) -> Analysis:
        return self.state().analysis()

    def cpu_analysis(self) -> Analysis:
        return self.cpu_state().analysis()

    def effective_bandwidth(self) -> float:
        return self.shown().bandwidth_bytes_per_s

    def needed_in_flight(self) -> float:
        """Bytes in flight that reach the GPU memory's peak (peak × latency)."""
        return bytes_in_flight_needed(self.gpu.bandwidth_bytes_per_s, self.latency_s)

    def in_flight_text(self) -> str:
        """The Little's-law line beside the bytes-in-flight slider."""
        peak = self.gpu.bandwidth_bytes_per_s
        delivered = min(peak, self.in_flight_bytes / self.latency_s)
        line = (f"{format_bytes(self.in_flight_bytes)} in flight ÷ {format_time(self.latency_s)} latency "
                f"(measured, {self.gpu.name}) = {format_si(delivered, 'B/s')} of "
                f"{format_si(peak, 'B/s')}")
        if self.stage == OVERLAP:
            return line
        return f"Applies at stage {OVERLAP} (latency hiding); there: {line}"

    # -- words -------------------------------------------------------------------------------
    def explanation(self) -> Explanation:
        stage = (_start, _cores, _hbm, _overlap, _matrix, _precision, _batching)[self.stage]
        text, claims = stage(self)
        return Explanation(STAGES[self.stage].title, text, tuple(claims))

    def text(self) -> str:
        return self.explanation().text

    def at(self, stage: int) -> Lab:
        return replace(self, stage=stage)


def _step(state: State) -> tuple[str, list[Claim]]:
    """"12 ms per step, memory-bound" and its claims."""
    time, bound = step_time(state), Bound.of(state)
    return f"{time.phrase} per step, {bound.phrase}", [time, bound]


def _fp32_vector(hw: Hardware) -> ComputePeak:
    """The vector units' fp32 peak (``vector_peak``; KeyError where a device has none)."""
    peak = hw.vector_peak("fp32")
    if peak is None:
        raise KeyError(f"{hw.name} has no fp32 peak")
    return peak


def _vector_roof(hw: Hardware) -> tuple[str, list[Claim]]:
    """"56 cores × 2 FMA units × 16 FP32 lanes × 2 FLOP × 3.8 GHz = 13.6 TFLOP/s": the
    catalogue's formula (or cores × lanes × clock), which must give back the peak."""
    peak = _fp32_vector(hw).flops_per_s
    quantity = Quantity(f"{hw.id} fp32 vector peak", peak, format_si(peak, "FLOP/s"), lambda: peak)
    built = vector_lanes(hw)
    if built is None:
        return quantity.phrase, [quantity]
    formula = built[0].replace(" (a fused multiply-add)", "")
    # The formula shown, evaluated, must give back the peak (to the peak's rounding).
    shown = Quantity(f"{hw.id} fp32 formula", peak, quantity.phrase, lambda: evaluate_formula(formula),
                     rel=0.01)
    return f"{built[0]} = {quantity.phrase}", [shown]


def _ratio(name: str, value: float, recompute: Callable[[], float]) -> Quantity:
    return Quantity(name, value, times(value), recompute)


def _start(lab: Lab) -> tuple[str, list[Claim]]:
    cpu, state = lab.cpu, lab.state()
    roof, peak = _vector_roof(cpu)
    step, claims = _step(state)
    derived = " (derived)" if _fp32_vector(cpu).provenance.derived else ""
    return (f"The {cpu.name}: a few big cores, each built to run one thread fast. Its fp32 roof is "
            f"{roof}{derived}, its memory {cpu.main_memory.name} at "
            f"{format_si(cpu.bandwidth_bytes_per_s, 'B/s')}. {lab.model.name} decoding one "
            f"sequence in fp32: {step}, as every weight is read once per token."), [*peak, *claims]


def _cores(lab: Lab) -> tuple[str, list[Claim]]:
    gpu, cpu, state = lab.gpu, lab.cpu, lab.state()
    roof, peak = _vector_roof(gpu)
    ratio = _ratio("fp32 peak ratio", _fp32_vector(gpu).flops_per_s / _fp32_vector(cpu).flops_per_s,
                   lambda: gpu.peak_flops("fp32", "vector") / cpu.peak_flops("fp32", "vector"))
    change = faster(lab.cpu_state(), state)
    ours, theirs = vector_lanes(gpu), vector_lanes(cpu)
    lanes = (f", {ours[1]:,} fp32 lanes against the CPU's {theirs[1]:,}" if ours and theirs else "")
    return (f"Replace them with many simple in-order cores: {roof} (lanes derived from the "
            f"{gpu.name}'s datasheet){lanes}, {ratio.phrase} the CPU's arithmetic. The compute roof rises; "
            f"the decode step is {change.phrase} ({format_time(state.analysis().totals.time_s)} "
            f"against {format_time(lab.cpu_analysis().totals.time_s)}): it was waiting for memory, "
            f"not for arithmetic. This hybrid still reads the CPU's "
            f"{cpu.main_memory.name}."), [*peak, ratio, change]


def _hbm(lab: Lab) -> tuple[str, list[Claim]]:
    gpu, cpu, state = lab.gpu, lab.cpu, lab.state()
    ratio = _ratio("bandwidth ratio", gpu.bandwidth_bytes_per_s / cpu.bandwidth_bytes_per_s,
                   lambda: gpu.bandwidth_bytes_per_s / cpu.bandwidth_bytes_per_s)
    change = faster(lab.cpu_state(), state)
    step, claims = _step(state)
    return (f"Give the cores the {gpu.name}'s own memory: {gpu.main_memory.name} stacked beside "
            f"the chip, {format_si(gpu.bandwidth_bytes_per_s, 'B/s')} at the datasheet rate, "
            f"{ratio.phrase} the CPU's {cpu.main_memory.name}. Decode reads every weight once per "
            f"token, so the step follows the bandwidth: {step}, {change.phrase} than on the CPU. "
            f"That rate assumes enough requests in flight to keep the memory busy; the next stage "
            f"shows what that takes."), [ratio, change, *claims]


def _overlap(lab: Lab) -> tuple[str, list[Claim]]:
    gpu, state = lab.gpu, lab.state()
    peak = gpu.bandwidth_bytes_per_s
    delivered = Quantity("bandwidth with the bytes in flight", lab.effective_bandwidth(),
                         format_si(lab.effective_bandwidth(), "B/s"),
                         lambda: min(peak, lab.in_flight_bytes / latency_of(gpu)))
    needed = Quantity("bytes in flight for the peak", lab.needed_in_flight(),
                      format_bytes(lab.needed_in_flight()),
                      lambda: gpu.bandwidth_bytes_per_s * latency_of(gpu))
    step, claims = _step(state)
    return (f"Memory answers a load only after its latency: {format_time(lab.latency_s)} on the "
            f"{gpu.name}, measured unloaded (a pointer chase). By Little's law it delivers bytes "
            f"in flight ÷ latency: with {format_bytes(lab.in_flight_bytes)} in flight, "
            f"{delivered.phrase} of its {format_si(peak, 'B/s')}; the peak takes at least "
            f"{needed.phrase} in flight (peak × latency), and more in practice, as latency grows "
            f"under load. In-order cores cannot reorder their way around the wait: a GPU hides it "
            f"by keeping thousands of threads' loads outstanding. Slide the bytes in flight. Now "
            f"{step}. From the next stage on, the GPU keeps enough in flight."),\
        [delivered, needed, *claims]


def _matrix(lab: Lab) -> tuple[str, list[Claim]]:
    gpu, state = lab.gpu, lab.state()
    unit = gpu.specs.matrix_unit or "matrix units"
    low = gpu.peak(LOW_PRECISION, "matrix")
    claims: list[Claim] = []
    pair = like_for_like(gpu)
    if pair is not None and low is not None:
        vector, matrix = pair
        units = _ratio("matrix / vector peak, one precision", matrix.flops_per_s / vector.flops_per_s,
                       lambda: gpu.peak_flops(matrix.precision, "matrix")
                       / gpu.peak_flops(vector.precision, "vector"))
        precision = _ratio(f"{LOW_PRECISION} / {matrix.precision} matrix peak",
                           low.flops_per_s / matrix.flops_per_s,
                           lambda: gpu.peak_flops(LOW_PRECISION, "matrix")
                           / gpu.peak_flops(matrix.precision, "matrix"))
        claims += [units, precision]
        gain = (f"Like for like, {matrix.precision} on them reaches "
                f"{format_si(matrix.flops_per_s, 'FLOP/s')}, {units.phrase} the "
                f"{format_si(vector.flops_per_s, 'FLOP/s')} of the {vector.label} units; in "
                f"{LOW_PRECISION} they reach {format_si(low.flops_per_s, 'FLOP/s')}, another "
                f"{precision.phrase} (the next stage's lower precision).")
    else:
        gain = "They raise the compute roof for matrix products only."
    before = replace(lab, stage=HBM).state()
    change = faster(before, state)
    claims.append(change)
    return (f"{unit}: a small matrix product per instruction instead of one multiply-add per lane. "
            f"{gain} The device is now the catalogue's {gpu.name} itself. Decoding one sequence is "
            f"{change.phrase} ({format_time(state.analysis().totals.time_s)} per step): a higher "
            f"roof helps only work that reaches it, and this step is starved of bytes."), claims


def _precision(lab: Lab) -> tuple[str, list[Claim]]:
    state = lab.state()
    fp32 = replace(state, params=replace(state.params, dtype="fp32"))
    change = faster(fp32, state)
    step, claims = _step(state)
    return (f"Store and compute in {LOW_PRECISION}: two bytes a value instead of four. Every "
            f"point moves right (twice the FLOPs per byte) and the products now run under the "
            f"{LOW_PRECISION} matrix roof. The step: {step}, {change.phrase} than in fp32, "
            f"because it reads half the bytes."), [change, *claims]


def _batching(lab: Lab) -> tuple[str, list[Claim]]:
    gpu, state = lab.gpu, lab.state()
    t = state.analysis().totals
    step, claims = _step(state)
    rate, fits = throughput(state), Fits(state, t.fits_in_memory)
    crossing = Crossing(state, crossing_batch(lab.model, state.params, state.hardware))
    versus = faster(lab.cpu_state(), state)
    claims += [rate, fits, crossing, versus]
    turn = (f"from batch {crossing.phrase} on the step is compute-bound" if crossing.batch
            else f"the step stays {crossing.phrase} up to the largest batch that fits")
    derived = gpu.derived_fields
    sources = ("nothing derived" if not derived else f"derived: {', '.join(derived)}")
    lead = ("Decode one sequence at a time: no other sequence shares its weight reads yet (raise "
            "the batch)." if lab.batch == 1 else
            f"Decode {lab.batch:,} sequences at once: each weight read serves them all.")
    would = "" if t.fits_in_memory else ", if it fit,"
    return (f"{lead} The step does {format_number(t.flops / t.bytes)} FLOP/byte and{would} delivers "
            f"{rate.phrase} at {step}; {turn}. Everything resident (weights, KV cache, activations: "
            f"{format_bytes(t.memory_required_bytes)}) {fits.phrase} in the "
            f"{format_bytes(t.memory_budget_bytes)} a serving engine may use. The CPU at this batch "
            f"takes {format_time(lab.cpu_analysis().totals.time_s)} per step: the GPU is "
            f"{versus.phrase}. This is the catalogue's {gpu.name} with its sourced numbers, no "
            f"what-if and {sources}."), claims

