"""Serving a model: how many requests fit, at what latency, for what price.

A serving engine decodes the active sequences together, one token each per step, so the
batch is the number of concurrent requests. For a request of ``prompt`` tokens that
generates ``output`` tokens:

- the **KV-cache wall**: the most sequences whose KV cache fits beside the weights and
  activations in the memory budget (``memory.max_batch_that_fits``), in whole pages of
  ``kv_block`` tokens (vLLM's PagedAttention: 16) at the middle of its generation; with
  **KV offload** host memory holds more, read over the host link every step (``kv_offload``);
- **TPOT** (time per output token): the decode step at that batch, at the middle context
  (prompt + output / 2); **TTFT** (time to first token): the prefill of one prompt, with no
  queueing (a steady stream of arrivals adds its wait, not modelled here); with **prefix
  caching** (``prefix_hit``: the share of each prompt shared with earlier requests, in whole
  pages) the prefill computes only the rest, attending over the cached part;
- **tokens/s per device**: in steady state each request is prefilled once and decoded
  ``output`` times, so in a cycle each replica's L = batch ÷ replicas sequences yield
  L × output tokens in output × TPOT + L × TTFT seconds (prefills not overlapped with
  decode steps), over its devices; **per user** = 1 / TPOT while decoding. With
  **continuous batching and chunked prefill** (``prefill_chunk``) the prompts are
  prefilled in chunks riding on the decode steps (``mixed_step``: one weight read for
  both): a cycle's L × ⌈prompt ÷ chunk⌉ chunks take that many of its ``output`` decode
  steps, and any beyond them are prefill-only steps; TPOT is the average decode step, TTFT a
  prompt's chunks one a step, and the batch at most what the chunks can refill within a
  cycle;
- **price**: $ per million output tokens = price per device-hour × devices ÷ (tokens/s ×
  3,600) × 10⁶, all devices' tokens counted;
- **energy**: until an energy model is in, an upper bound: every device at its TDP all the
  time, joules per token = TDP ÷ tokens/s per device (None where the catalogue has no TDP).

An inference pipeline (``pp`` > 1) is costed one batch at a time: its tokens/s are a lower
bound (engines keep a micro-batch in every stage).

Each time is the expected one where the device's family has published efficiency, else the
roofline bound (``time_source`` says which).

Speculative decoding (Leviathan et al. 2023, "Fast Inference from Transformers via
Speculative Decoding", eq. 1 and Theorem 3.8): a draft of γ tokens, each accepted with
probability α, gives (1 − α^(γ+1)) / (1 − α) tokens per target step; a draft step costing c
of a target step makes that a speed-up of the tokens ÷ (γ·c + 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import partial

from explorer.core.analysis.analysis import Analysis, analyze
from explorer.core.analysis.expected import expected_for
from explorer.core.analysis.kv_offload import Offload
from explorer.core.analysis.memory import max_batch_that_fits, memory_budget, weights_and_kv
from explorer.core.analysis.mixed_step import mixed_step
from explorer.core.analysis.serving_load import choose, under_load
from explorer.core.hardware.hardware import Hardware
from explorer.core.model import parallel
from explorer.core.model.models import ModelSpec, TransformerSpec
from explorer.core.model.parameters import BY_NAME, MAX_BATCH, TRAINING_ONLY
from explorer.core.model.workload import WorkloadError, WorkloadParams
from explorer.core.units import format_bytes, format_si

KV_BLOCK = 16  # tokens in a page of the KV cache (vLLM's default block size)
HOUR_S = 3600.0


def tokens_per_target_step(acceptance: float, draft: int) -> float:
    """Expected tokens a speculative step yields: (1 − α^(γ+1)) / (1 − α) (γ + 1 at α = 1)."""
    if not 0 <= acceptance <= 1 or draft < 0:
        raise ValueError("the acceptance rate is a share from 0 to 1 and the draft length at least 0")
    if acceptance == 1:
        return float(draft + 1)
    return (1 - acceptance ** (draft + 1)) / (1 - acceptance)


def speculative_speedup(acceptance: float, draft: int, cost: float) -> float:
    """Speed-up of speculative decoding: tokens per target step ÷ (γ·c + 1), ``cost`` c the
    draft model's step over the target's."""
    if cost < 0:
        raise ValueError("a draft step's cost is at least 0 of the target's")
    return tokens_per_target_step(acceptance, draft) / (draft * cost + 1)


def cost_per_million_tokens(price_per_device_hour: float, devices: int, tokens_per_s: float) -> float:
    """$ per million tokens at ``tokens_per_s`` over all ``devices``."""
    if tokens_per_s <= 0:
        return math.inf
    return price_per_device_hour * devices / (tokens_per_s * HOUR_S) * 1e6


def paged_context(tokens: int, block: int = KV_BLOCK) -> int:
    """``tokens`` rounded up to whole pages of ``block`` tokens."""
    if block < 1:
        raise ValueError(f"a KV-cache page holds at least 1 token, got {block}")
    return -(-tokens // block) * block


@dataclass(frozen=True)
class Point:
    """One operating point: ``batch`` concurrent requests."""

    batch: int
    tpot_s: float
    ttft_s: float
    tokens_per_s_per_device: float
    tokens_per_s_per_user: float
    cost_per_million_tokens: float | None  # None: no price given
    joules_per_token: float | None  # None: the device states no TDP
    limited_by: str = ""  # why no larger batch is taken (on the chosen point)


@dataclass(frozen=True)
class Speculation:
    """Speculative decoding: ``draft`` proposes ``tokens`` (γ) a step, each accepted with
    probability ``acceptance`` (α); the target checks them in one step."""

    draft: ModelSpec
    tokens: int
    acceptance: float

    def __post_init__(self) -> None:
        if not 0 <= self.acceptance < 1:
            raise WorkloadError(f"the acceptance rate is a share from 0 to below 1, got {self.acceptance}")
        if not 1 <= self.tokens <= 64:
            raise WorkloadError(f"a draft proposes 1 to 64 tokens a step, got {self.tokens}")


@dataclass(frozen=True)
class Plan:
    points: tuple[Point, ...]  # batch 1, 2, 4, … up to the KV wall (and the target's edge)
    kv_wall_sequences: int
    chosen: Point | None  # the point with the most tokens/s per device that meets the targets
    time_source: str  # "expected" or "bound"
    devices: int
    notes: tuple[str, ...] = ()
    efficiency: str = "published"  # where the expected times' factors come from
    offloaded_sequences: int = 0  # beyond the KV wall, sequences whose cache host memory holds
    arrival_rate: float | None = None  # the load planned for (requests/s), None: the most tokens/s


MAX_TOKENS = 1 << 22  # a request's prompt and output together (the longest context costed)


def decode_params(params: WorkloadParams, prompt: int, output: int, block: int = 1) -> WorkloadParams:
    """The decode step of a request at the middle of its output (its context in whole pages
    of ``block`` tokens: the KV cache it holds, not the tokens it attends to)."""
    return replace(params, phase="decode", context=paged_context(prompt + output // 2, block))


def check_request(model: ModelSpec, prompt: int, output: int) -> None:
    """Refuse what no layout can serve: a model that does not decode, an empty request."""
    if not isinstance(model, TransformerSpec):
        raise WorkloadError(f"{model.name} does not generate tokens: serving plans a language "
                            "model's decoding")
    if prompt < 1 or output < 1:
        raise WorkloadError("a request has at least one prompt token and one output token")
    if prompt + output > MAX_TOKENS:
        raise WorkloadError(f"a request's prompt and output together are at most {MAX_TOKENS:,} tokens, "
                            f"got {prompt + output:,}")


def time_of(a: Analysis) -> tuple[float, str]:
    """A step's time as serving counts it: expected where the device's family has published
    efficiency, else the bound; and which ("expected" or "bound")."""
    e = expected_for(a)
    return (e.time_s, "expected") if e is not None else (a.totals.time_s, "bound")


def _step_s(model: ModelSpec, params: WorkloadParams, hardware: Hardware) -> tuple[float, str]:
    return time_of(analyze(model, params, hardware))


def cached_prefix(prompt: int, hit: float, block: int = KV_BLOCK) -> int:
    """Prompt tokens prefix caching finds in the cache when a share ``hit`` of each prompt is
    shared: whole pages of ``block`` tokens only (vLLM caches full blocks), and never the
    whole prompt (its last token is computed to give the first output token)."""
    if not 0 <= hit < 1:
        raise WorkloadError(f"the prefix hit rate is a share from 0 to below 1, got {hit}")
    return min(int(prompt * hit) // block * block, (prompt - 1) // block * block)


def plan(model: ModelSpec, params: WorkloadParams, hardware: Hardware, prompt: int, output: int,
         ttft_target_s: float | None = None, tpot_target_s: float | None = None,
         price_per_device_hour: float | None = None, block: int = KV_BLOCK,
         speculation: Speculation | None = None, prefix_hit: float = 0.0,
         prefill_chunk: int | None = None, kv_offload_bytes: float = 0.0,
         arrival_rate: float | None = None) -> Plan:
    """The operating points of serving ``model`` on ``hardware`` with ``params``' layout and
    precisions, for requests of ``prompt`` + ``output`` tokens, and the best that meets the
    targets. A ``WorkloadError`` says why there is none to serve (the weights do not fit, a
    layout the model cannot take, a model that does not decode). With ``arrival_rate``
    (requests/s) the points are the batches that keep up with that load (``serving_load``)."""
    check_request(model, prompt, output)
    # a serving step's rows: a window's prefill prefix or training rows do not apply
    params = replace(params, prefix=0, **{name: BY_NAME[name].default for name in TRAINING_ONLY})
    if speculation is not None and (prefill_chunk is not None or kv_offload_bytes):
        raise WorkloadError("speculative decoding with chunked prefill or KV offload is not modelled: give "
                            "one of them")
    paged = decode_params(params, prompt, output, block)
    decode = decode_params(params, prompt, output)
    cached = cached_prefix(prompt, prefix_hit, block)
    wall, ttft, source = _wall_and_prefill(model, params, paged, hardware, speculation, prompt, cached)
    offload = Offload.of(model, paged, hardware, wall, kv_offload_bytes) if kv_offload_bytes else None
    timing = _Timing(model, decode, hardware, output, prompt - cached, cached, ttft, speculation,
                     prefill_chunk, offload)
    wall = offload.wall if offload else wall
    limit = timing.sustained(wall)
    point = partial(_point, timing, paged.split.devices, price_per_device_hour, hardware.specs.tdp_w)
    knees = {limit, *([min(offload.device_wall, limit)] if offload else [])}  # the device's wall too
    steps = 1.15 if arrival_rate is not None else 2  # under a load: finer, to find the best batch
    batches = {round(steps ** k) for k in range(int(math.log(MAX_BATCH, steps)) + 1)}
    points = {b: point(b) for b in {*(b for b in batches if b <= limit), *knees}}
    if tpot_target_s is not None:
        _find_edge(points, point, lambda p: p.tpot_s <= tpot_target_s)
    ordered = [points[b] for b in sorted(points)]
    if arrival_rate is not None:  # the batches that keep up, each with its wait for a slot
        ordered = under_load(ordered, arrival_rate, output, paged.split.devices,
                             partial(_economics, price_per_device_hour, hardware.specs.tdp_w))
    ok = [p for p in ordered if (tpot_target_s is None or p.tpot_s <= tpot_target_s)
          and (ttft_target_s is None or p.ttft_s <= ttft_target_s)]
    notes = _notes(paged, speculation, prompt, cached) + timing.notes(limit, wall)
    if arrival_rate is not None:
        chosen, note = choose(ok, arrival_rate, output, ordered)
        notes += (note,)
    else:
        chosen = max(ok, key=lambda p: p.tokens_per_s_per_device, default=None)
        if chosen is not None:
            chosen = replace(chosen, limited_by=_limit(chosen, ordered, wall, tpot_target_s, timing))
    device_wall = offload.device_wall if offload else wall
    return Plan(tuple(ordered), device_wall, chosen, source, paged.split.devices, notes,
                str(params.efficiency), wall - device_wall, arrival_rate)


def _wall_and_prefill(model: ModelSpec, params: WorkloadParams, paged: WorkloadParams, hardware: Hardware,
                      speculation: Speculation | None, prompt: int, cached: int) -> tuple[int, float, str]:
    """(the KV wall, one prompt's prefill after its ``cached`` tokens, whose time that is);
    a ``WorkloadError`` where the weights do not fit or the layout cannot be."""
    try:
        draft = speculation.draft if speculation is not None else None
        wall = max_batch_that_fits(model, replace(paged, batch=paged.split.batch_share), hardware, draft)
        ttft, source = _step_s(model, replace(params, phase="prefill", seq=prompt - cached, prefix=cached,
                                              batch=1), hardware)
    except parallel.ParallelError as error:
        raise WorkloadError(str(error)) from None
    if wall < 1:
        weights, budget = weights_and_kv(model, paged)[0], memory_budget(hardware, paged)
        raise WorkloadError(f"{model.name} does not fit on {hardware.name}: its weights take "
                            f"{format_bytes(weights)} a device of the {format_bytes(budget)} the memory "
                            "share leaves; spread it over more devices (--tp, --pp) or store it in fewer "
                            "bits (--weight-dtype)")
    return wall, ttft, source


@dataclass(frozen=True)
class _Timing:
    """How a batch's time per token, time to first token and cycle are worked out. A cycle
    is what each replica does while its ``local`` sequences produce ``output`` tokens each
    and are replaced: prefills on their own between decode steps (``chunk`` None), or with
    continuous batching the prompts' chunks riding on decode steps (``mixed_step``), with
    prefill-only steps where the chunks outnumber the decode steps."""

    model: ModelSpec
    decode: WorkloadParams
    hardware: Hardware
    output: int
    work: int  # prompt tokens each request prefills (the cached prefix left out)
    cached: int
    ttft: float  # one prompt's prefill on its own
    speculation: Speculation | None
    chunk: int | None
    offload: Offload | None = None

    @property
    def size(self) -> int:
        """Prompt tokens a step prefills: a chunk, or the whole prompt when it is shorter (one
        prompt a step)."""
        return min(self.chunk or self.work, self.work)

    @property
    def chunk_steps(self) -> int:
        return math.ceil(self.work / self.size)

    def sustained(self, wall: int) -> int:
        """The largest batch that can run: the KV wall, and with chunked prefill the batch each
        replica can refill in a cycle (its chunks no more than its decode steps)."""
        if self.chunk is None:
            return wall
        per_replica = max(1, self.output // self.chunk_steps)
        return max(1, min(wall, per_replica * self.decode.split.batch_share))

    def times(self, batch: int) -> tuple[float, float, float]:
        """(TPOT, TTFT, a replica's cycle in seconds) at ``batch``."""
        local = math.ceil(batch / self.decode.split.batch_share)
        if self.speculation is not None:
            tpot = speculative_tpot(self.model, self.decode, self.hardware, batch, self.speculation)
            return tpot, self.ttft, self.output * tpot + local * self.ttft
        offloaded = self.offload.step_s(batch, self.decode.split.batch_share) if self.offload else 0.0
        plain = _step_s(self.model, replace(self.decode, batch=batch), self.hardware)[0] + offloaded
        if self.chunk is None:
            return plain, self.ttft, self.output * plain + local * self.ttft
        step = mixed_step(self.model, self.decode, self.hardware, batch, self.decode.context, self.size,
                          self.cached + (self.work - self.size) // 2)
        chunks = local * self.chunk_steps
        carried = min(chunks, self.output)
        decoding = carried * (step.time_s + offloaded) + (self.output - carried) * plain
        alone = time_of(step.chunk)[0] * (chunks - carried)  # prefill-only steps
        return decoding / self.output, self.chunk_steps * (step.time_s + offloaded), decoding + alone

    def notes(self, limit: int, wall: int) -> tuple[str, ...]:
        """What the plan's notes say of offload and chunks, the batches stopping at ``limit``."""
        out, limited = [], limit < wall
        if self.offload is not None and limit > self.offload.device_wall:
            o = self.offload
            out.append(f"KV offload: beyond the devices' {o.device_wall:,} sequences, host memory holds the "
                       f"caches of {o.wall - o.device_wall:,} more, each read over {o.link.name} "
                       f"({format_si(o.link.per_direction_bytes_per_s, 'B/s')} a direction) every step and "
                       "not overlapped with it: an upper bound on the time")
        if self.chunk is not None:
            out.append(f"continuous batching with chunked prefill: {self.size:,}-token chunks of the prompts "
                       "(at most one prompt a step) ride on the decode steps, reading the weights once for "
                       "both, in as many steps as the finished sequences need; TPOT is the average decode "
                       "step, TTFT a prompt's chunks one a step"
                       + (", and the batch is as large as the chunks can refill" if limited else ""))
        return tuple(out)


def _point(timing: _Timing, devices: int, price_per_device_hour: float | None, tdp: float | None,
           batch: int) -> Point:
    tpot, ttft, cycle = timing.times(batch)
    rate = batch * timing.output / cycle / devices  # each request's prefill counted
    return Point(batch, tpot, ttft, rate, 1 / tpot, *_economics(price_per_device_hour, tdp, rate))


def _economics(price_per_device_hour: float | None, tdp: float | None, rate: float) -> tuple:
    """($ per million tokens, joules a token) at ``rate`` tokens/s a device."""
    price = None if price_per_device_hour is None else cost_per_million_tokens(price_per_device_hour, 1, rate)
    return price, tdp / rate if tdp else None


def _find_edge(points: dict, point, holds) -> None:
    """Add to ``points`` the largest batch for which ``holds`` (within the TPOT target, or
    short of the load) and the next, by bisection between the batches tried (``holds``
    holds for the small batches)."""
    meets = [b for b in points if holds(points[b])]
    misses = [b for b in points if not holds(points[b]) and b > min(meets, default=0)]
    if not (meets and misses):
        return
    low, high = max(b for b in meets if b < min(misses)), min(misses)
    while high - low > 1:
        middle = (low + high) // 2
        points[middle] = point(middle)
        low, high = (middle, high) if holds(points[middle]) else (low, middle)


def _notes(paged: WorkloadParams, speculation: Speculation | None, prompt: int,
           cached: int) -> tuple[str, ...]:
    notes = ("an inference pipeline is costed one batch at a time: its tokens/s are a lower bound",) \
        if paged.split.pp > 1 else ()
    if cached:
        notes += (f"prefix caching: {cached:,} of each prompt's {prompt:,} tokens are found in the cache "
                  f"(whole pages), so a prefill computes the other {prompt - cached:,} over them; each "
                  "request is still given its own copy of the shared pages, so the KV wall is a lower bound",)
    if speculation is not None:
        notes += (f"speculative decoding with {speculation.draft.name}: {speculation.tokens} drafted tokens "
                  f"accepted at {speculation.acceptance:g} give "
                  f"{tokens_per_target_step(speculation.acceptance, speculation.tokens):.2f} tokens a step; "
                  f"the check is costed as a decode of {speculation.tokens + 1} tokens a sequence (an upper "
                  "bound on its attention, which reads each cache once); the draft's weights and cache "
                  "share the memory",)
    return notes


def speculative_tpot(model: ModelSpec, decode: WorkloadParams, hardware: Hardware, batch: int,
                     speculation: Speculation) -> float:
    """Time per output token with speculation: γ draft steps and one target step checking
    γ + 1 tokens a sequence, over the tokens a step yields. At a small batch the check reads
    the weights once, as a decode step does (why speculation helps a memory-bound decode);
    at a large one its arithmetic grows γ + 1 times."""
    draft = _step_s(speculation.draft, replace(decode, batch=batch), hardware)[0]
    check = _step_s(model, replace(decode, batch=batch * (speculation.tokens + 1)), hardware)[0]
    return (speculation.tokens * draft + check) / tokens_per_target_step(speculation.acceptance,
                                                                         speculation.tokens)


def _limit(chosen: Point, points: list[Point], wall: int, tpot_target_s: float | None,
           timing: _Timing) -> str:
    """Why the next larger batch is not taken."""
    sustained = timing.sustained(wall)
    if chosen.batch >= sustained and sustained < wall:
        return (f"the prefill chunk: {sustained + 1:,} sequences finish faster than {timing.size:,}-token "
                "chunks, one a step, can prefill their successors")
    if chosen.batch >= wall:
        if wall >= MAX_BATCH:
            return f"the largest batch costed here ({MAX_BATCH:,}): the KV cache holds more"
        if timing.offload is not None:
            return "the KV cache in device and host memory: no more sequences fit"
        return "the KV-cache wall: no more sequences fit"
    larger = next((p for p in points if p.batch > chosen.batch), chosen)
    if tpot_target_s is not None and larger.tpot_s > tpot_target_s:
        return f"the TPOT target: batch {larger.batch:,} takes {larger.tpot_s * 1e3:.1f} ms a token"
    return "nothing: a larger batch gives fewer tokens/s per device"
