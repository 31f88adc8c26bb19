"""Serving a model: how many requests fit, at what latency, for what price.

A serving engine decodes the active sequences together, one token each per step, so the
batch is the number of concurrent requests. For a request of ``prompt`` tokens that
generates ``output`` tokens:

- the **KV-cache wall**: the most sequences whose KV cache fits beside the weights and
  activations in the memory budget (``memory.max_batch_that_fits``), in whole pages of
  ``kv_block`` tokens (vLLM's PagedAttention: 16) at full length (prompt + output: the last
  step must fit too); with **KV offload** host memory holds more, read over the host link
  every step (``kv_offload``);
- **TPOT** (time per output token): the decode step at that batch, at the middle context
  (prompt + output / 2); **TTFT** (time to first token): the prefill of one prompt, with no
  queueing (a steady stream of arrivals adds its wait, not modelled here); with **prefix
  caching** (``prefix_hit``: the share of each prompt shared with earlier requests, in whole
  pages) the prefill computes only the rest, attending over the cached part;
- **tokens/s per device**: in steady state each request is prefilled once and decoded
  ``output`` times, so in a cycle each replica's L = batch ÷ replicas sequences yield
  L × output tokens in output × TPOT + L × TTFT seconds (prefills not overlapped with
  decode steps), over its devices; **per user** = output ÷ the cycle (output × TPOT +
  L × TTFT): a request's tokens over the time from its start to its last token, the other
  requests' prefills it waits through included (per user × batch = per device × devices). With
  **continuous batching and chunked prefill** (``prefill_chunk``) the prompts are
  prefilled in chunks riding on the decode steps (``mixed_step``: one weight read for
  both): a cycle's L × ⌈prompt ÷ chunk⌉ chunks take that many of its ``output`` decode
  steps, and any beyond them are prefill-only steps; TPOT is the average decode step, TTFT a
  prompt's chunks one a step, and the batch at most what the chunks can refill within a
  cycle;
- **the compute roof**: from the smallest batch where each doubling adds less than ``FLAT``
  (2 %) to the tokens/s a device (its double's, and every larger batch's, per doubling), the
  plan stops: a larger batch costs each user speed and buys next to no throughput;
- **price**: $ per million output tokens = price per device-hour × devices ÷ (tokens/s ×
  3,600) × 10⁶, all devices' tokens counted;
- **energy**: at TDP, every device at its TDP all the time, joules per token = TDP ÷ tokens/s
  per device (None where the catalogue has no TDP), an upper figure, not a bound; and the
  power model's estimate (``serving_energy``: the decode and prefill shares of the cycle, each
  at its occupancy's power, the model checked against published measurements in
  ``energy_validation``), at most the figure at TDP and at least its idle share (None without a
  TDP, without an expected time, or with speculative decoding); under a load the devices idle
  between requests, at the idle share of their TDP.

An inference pipeline (``pp`` > 1) is costed one batch at a time: its tokens/s are a lower
bound (engines keep a micro-batch in every stage).

Each time is the expected one where the device's family has published efficiency, else the
roofline bound (``time_source`` says which).

A request's terms: ``serving_request``; a batch's times and operating point:
``serving_timing``; speculative decoding: ``speculation``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial

from explorer.core.analysis.analysis import Analysis, analyze
from explorer.core.analysis.engine_terms import efficiency_unchecked
from explorer.core.analysis.kv_offload import Offload
from explorer.core.analysis.memory import max_batch_that_fits, memory_budget, weights_and_kv
from explorer.core.analysis.serving_load import choose, under_load
from explorer.core.analysis.serving_request import (
    KV_BLOCK,
    cached_prefix,
    check_request,
    decode_params,
    last_step_params,
    time_of,
)
from explorer.core.analysis.serving_timing import Point, Timing, economics, operating_point
from explorer.core.analysis.speculation import Speculation, tokens_per_target_step
from explorer.core.hardware.hardware import Hardware
from explorer.core.model import parallel
from explorer.core.model.applicability import Phase
from explorer.core.model.models import ModelSpec
from explorer.core.model.parameters import BY_NAME, MAX_BATCH, TRAINING_ONLY
from explorer.core.model.workload import WorkloadError, WorkloadParams
from explorer.core.units import format_bytes


@dataclass(frozen=True)
class Plan:
    points: tuple[Point, ...]  # batch 1, 2, 4, … up to the KV wall (and the target's edge)
    kv_wall_sequences: int  # sequences whose cache fits at full length (prompt + output)
    chosen: Point | None  # the point with the most tokens/s per device that meets the targets
    time_source: str  # "expected" or "bound"
    devices: int
    notes: tuple[str, ...] = ()
    efficiency: str = "published"  # where the expected times' factors come from
    offloaded_sequences: int = 0  # beyond the KV wall, sequences whose cache host memory holds
    arrival_rate: float | None = None  # the load planned for (requests/s), None: the most tokens/s
    # how its TPOT band was not checked against published runs ("for speculative decoding"; "":
    # a plain decode step's band with published efficiency, as the held-out runs were)
    band_unchecked: str = ""


FLAT = 0.02  # doubling the batch adds less than this share of tokens/s a device: the compute roof

def plan(model: ModelSpec, params: WorkloadParams, hardware: Hardware, prompt: int, output: int,
         ttft_target_s: float | None = None, tpot_target_s: float | None = None,
         price_per_device_hour: float | None = None, block: int = KV_BLOCK,
         speculation: Speculation | None = None, prefix_hit: float = 0.0,
         prefill_chunk: int | None = None, kv_offload_bytes: float = 0.0,
         arrival_rate: float | None = None, batches: tuple[int, ...] = ()) -> Plan:
    """The operating points of serving ``model`` on ``hardware`` with ``params``' layout and
    precisions, for requests of ``prompt`` + ``output`` tokens, and the best that meets the
    targets. A ``WorkloadError`` says why there is none to serve (the weights do not fit, a
    layout the model cannot take, a model that does not decode). With ``arrival_rate``
    (requests/s) the points are the batches that keep up with that load (``serving_load``).
    ``batches``: more batches to cost besides the doublings (those beyond the wall left out)."""
    check_request(model, prompt, output)
    # a serving step's rows: a window's prefill prefix or training rows do not apply
    params = replace(params, prefix=0, **{name: BY_NAME[name].default for name in TRAINING_ONLY})
    if speculation is not None and (prefill_chunk is not None or kv_offload_bytes):
        raise WorkloadError("speculative decoding with chunked prefill or KV offload is not modelled: give "
                            "one of them")
    paged = decode_params(params, prompt, output, block)
    full = last_step_params(params, prompt, output, block)  # the wall: every cache at its last token
    decode = decode_params(params, prompt, output)
    cached = cached_prefix(prompt, prefix_hit, block)
    wall, prefill = _wall_and_prefill(model, params, full, hardware, speculation, prompt, cached)
    (ttft, source), offload = time_of(prefill), None
    if kv_offload_bytes:
        offload = Offload.of(model, paged, hardware, wall, kv_offload_bytes, full)
    timing = Timing(model, decode, hardware, output, prompt - cached, cached, ttft, speculation,
                     prefill_chunk, offload, prefill)
    wall = offload.wall if offload else wall
    limit = timing.sustained(wall)
    point = partial(operating_point, timing, paged.split.devices, price_per_device_hour, hardware.specs.tdp_w)
    knees = {limit, *([min(offload.device_wall, limit)] if offload else [])}  # the device's wall too
    steps = 1.15 if arrival_rate is not None else 2  # under a load: finer, to find the best batch
    grid = {round(steps ** k) for k in range(int(math.log(MAX_BATCH, steps)) + 1)} | set(batches)
    points = {b: point(b) for b in {*(b for b in grid if 1 <= b <= limit), *knees}}
    if tpot_target_s is not None:
        _find_edge(points, point, lambda p: p.tpot_s <= tpot_target_s)
    ordered = [points[b] for b in sorted(points)]
    if arrival_rate is not None:  # the batches that keep up, each with its wait for a slot
        ordered = under_load(ordered, arrival_rate, output, paged.split.devices,
                             partial(economics, price_per_device_hour, hardware.specs.tdp_w))
    ok = [p for p in ordered if (tpot_target_s is None or p.tpot_s <= tpot_target_s)
          and (ttft_target_s is None or p.ttft_s <= ttft_target_s)]
    notes = _notes(paged, speculation, prompt, cached) + timing.notes(limit, wall)
    if arrival_rate is not None:
        chosen, note = choose(ok, arrival_rate, output, ordered)
        notes += (note,)
    else:
        chosen = max(ok, key=lambda p: p.tokens_per_s_per_device, default=None)
        flat = _compute_roof(ok, ordered, chosen, limit, point)
        if flat is not None:
            chosen = flat
        elif chosen is not None:
            chosen = replace(chosen, limited_by=_limit(chosen, ordered, wall, tpot_target_s, timing))
    device_wall = offload.device_wall if offload else wall
    return Plan(tuple(ordered), device_wall, chosen, source, paged.split.devices, notes,
                str(params.efficiency), wall - device_wall, arrival_rate,
                _band_unchecked(params, speculation, prefill_chunk, offload is not None))


def _band_unchecked(params: WorkloadParams, speculation: Speculation | None, chunk: int | None,
                    offloaded: bool) -> str:
    """How a plan's TPOT band departs from the steps its coverage was measured on (published
    efficiency, a plain decode step): ``engine_terms.band_words``'s ``unchecked``."""
    ways = [efficiency_unchecked(params.efficiency),
            "for speculative decoding" if speculation is not None else "",
            "for decode steps that carry prompt chunks" if chunk is not None else "",
            "with KV offload" if offloaded else ""]
    return " or ".join(w for w in ways if w)


def _wall_and_prefill(model: ModelSpec, params: WorkloadParams, paged: WorkloadParams, hardware: Hardware,
                      speculation: Speculation | None, prompt: int, cached: int) -> tuple[int, Analysis]:
    """(the KV wall, one prompt's prefill after its ``cached`` tokens); a ``WorkloadError``
    where the weights do not fit or the layout cannot be."""
    try:
        draft = speculation.draft if speculation is not None else None
        wall = max_batch_that_fits(model, replace(paged, batch=paged.split.batch_share), hardware, draft)
        prefill = analyze(model, replace(params, phase=Phase.PREFILL, seq=prompt - cached, prefix=cached,
                                         batch=1), hardware)
    except parallel.ParallelError as error:
        raise WorkloadError(str(error)) from None
    if wall < 1:
        weights, budget = weights_and_kv(model, paged)[0], memory_budget(hardware, paged)
        raise WorkloadError(f"{model.name} does not fit on {hardware.name}: its weights take "
                            f"{format_bytes(weights)} a device of the {format_bytes(budget)} the memory "
                            "share leaves; spread it over more devices (--tp, --pp) or store it in fewer "
                            "bits (--weight-dtype)")
    return wall, prefill


def _find_edge(points: dict[int, Point], point: Callable[[int], Point],
               holds: Callable[[Point], bool]) -> None:
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
    notes: tuple[str, ...]
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


def _compute_roof(ok: list[Point], every: list[Point], best: Point | None, limit: int,
                  point: Callable[[int], Point]) -> Point | None:
    """The smallest batch within the targets, short of ``best``, from which no larger batch
    (its double, within ``limit``, and every larger point costed) adds ``FLAT`` or more
    tokens/s a device for each doubling, with why it is taken; None: none (the throughput
    still grows up to ``best``)."""
    if best is None:
        return None
    for p in ok:
        if p.batch >= best.batch or 2 * p.batch > limit:
            break
        double = point(2 * p.batch)
        larger = [double, *(q for q in every if q.batch > p.batch)]
        rate = p.tokens_per_s_per_device
        if all(q.tokens_per_s_per_device < rate * (1 + FLAT) ** math.log2(q.batch / p.batch) for q in larger):
            gain = double.tokens_per_s_per_device / rate - 1
            return replace(p, limited_by=(
                f"the compute roof: throughput no longer grows with the batch (batch {double.batch:,} "
                f"gives {gain:+.2%} tokens/s a device, less than {FLAT:.0%} a doubling, at "
                f"{double.tpot_s * 1e3:,.1f} ms a token)"))
    return None


def _limit(chosen: Point, points: list[Point], wall: int, tpot_target_s: float | None,
           timing: Timing) -> str:
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
