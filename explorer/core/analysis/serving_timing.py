"""How a batch is served: its time per output token, time to first token and a replica's
cycle (prefills on their own or in chunks riding on decode steps, KV offload, speculation),
and the operating point they give with its price and energy."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from explorer.core.analysis.analysis import Analysis, analyze
from explorer.core.analysis.expected import Expected, expected_for
from explorer.core.analysis.kv_offload import Offload
from explorer.core.analysis.mixed_step import mixed_step
from explorer.core.analysis.serving_energy import TokenEnergy, token_energy
from explorer.core.analysis.serving_request import cost_per_million_tokens, time_and_band, time_of
from explorer.core.analysis.speculation import Speculation, speculative_tpot
from explorer.core.hardware.hardware import Hardware
from explorer.core.model.models import ModelSpec
from explorer.core.model.workload import WorkloadParams
from explorer.core.units import format_si


@dataclass(frozen=True)
class Point:
    """One operating point: ``batch`` concurrent requests."""

    batch: int
    tpot_s: float
    ttft_s: float
    tokens_per_s_per_device: float
    tokens_per_s_per_user: float  # output ÷ a replica's cycle: a request's start to its last token
    cost_per_million_tokens: float | None  # None: no price given
    joules_per_token: float | None  # at TDP; None: the device states no TDP
    limited_by: str = ""  # why no larger batch is taken (on the chosen point)
    tpot_band_s: tuple[float, float] | None = None  # (low, high): the decode step's band; None: the bound
    joules_per_token_estimate: float | None = None  # the power model's (serving_energy); None: no TDP
    # or no expected time, or speculative decoding


@dataclass(frozen=True)
class Timing:
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
    prefill: Analysis | None = None  # one prompt's prefill (for its energy), None: not costed
    # batch → the plain decode step and its expected time, each worked out once (0: the prefill)
    _steps: dict[int, tuple[Analysis, Expected | None]] = field(
        default_factory=dict, init=False, compare=False, repr=False)

    def step(self, batch: int) -> tuple[Analysis, Expected | None]:
        """The plain decode step at ``batch`` and its expected time (None: the bound)."""
        if batch not in self._steps:
            a = analyze(self.model, replace(self.decode, batch=batch), self.hardware)
            self._steps[batch] = a, expected_for(a)
        return self._steps[batch]

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

    def band(self, batch: int, tpot: float) -> tuple[float, float] | None:
        """The band of ``tpot`` at ``batch``: the plain decode step's ``Expected.band`` as
        shares of its time, times ``tpot`` (None where the time is the bound)."""
        share = time_and_band(*self.step(batch))[1]
        return None if share is None else (share[0] * tpot, share[1] * tpot)

    def times(self, batch: int) -> tuple[float, float, float, tuple[float, float] | None]:
        """(TPOT, TTFT, a replica's cycle in seconds, TPOT's band) at ``batch``."""
        local = math.ceil(batch / self.decode.split.batch_share)
        if self.speculation is not None:
            tpot = speculative_tpot(self.model, self.decode, self.hardware, batch, self.speculation)
            return tpot, self.ttft, self.output * tpot + local * self.ttft, self.band(batch, tpot)
        offloaded = self.offload.step_s(batch, self.decode.split.batch_share) if self.offload else 0.0
        alone_s, share = time_and_band(*self.step(batch))
        plain = alone_s + offloaded

        def band(tpot: float) -> tuple[float, float] | None:
            return None if share is None else (share[0] * tpot, share[1] * tpot)

        if self.chunk is None:
            return plain, self.ttft, self.output * plain + local * self.ttft, band(plain)
        step = mixed_step(self.model, self.decode, self.hardware, batch, self.decode.context, self.size,
                          self.cached + (self.work - self.size) // 2)
        chunks = local * self.chunk_steps
        carried = min(chunks, self.output)
        decoding = carried * (step.time_s + offloaded) + (self.output - carried) * plain
        alone = time_of(step.chunk)[0] * (chunks - carried)  # prefill-only steps
        tpot = decoding / self.output
        return tpot, self.chunk_steps * (step.time_s + offloaded), decoding + alone, band(tpot)

    def energy(self, batch: int, cycle_s: float, outputs: float | None = None) -> TokenEnergy | None:
        """Per output token at ``batch``, a replica's cycle ``cycle_s``: the power model's shares
        (``serving_energy``); None without the prefill's analysis, with speculative decoding
        (its draft and check steps are not split into the two shares), or as ``token_energy``."""
        if self.prefill is None or self.speculation is not None:
            return None
        if 0 not in self._steps:
            self._steps[0] = self.prefill, expected_for(self.prefill)
        (decode, d), p = self.step(batch), self._steps[0][1]
        if d is None or p is None:
            return None
        offloaded = self.offload.step_s(batch, self.decode.split.batch_share) if self.offload else 0.0
        return token_energy(decode, d.time_s, self.prefill, batch, self.output, cycle_s,
                            self.chunk is not None, offloaded, outputs)

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


def operating_point(timing: Timing, devices: int, price_per_device_hour: float | None, tdp: float | None,
           batch: int) -> Point:
    """The point at ``batch``: in a replica's cycle of C seconds its L sequences each make
    ``output`` tokens, so tokens/s a device = batch × output ÷ C ÷ devices (each request's
    prefill counted) and tokens/s a user = output ÷ C: a request's output over the time
    from its start to its last token, the other requests' prefills it waits through
    included (= tokens/s a device × devices ÷ batch, up to the rounding of L)."""
    tpot, ttft, cycle, band = timing.times(batch)
    rate = batch * timing.output / cycle / devices  # each request's prefill counted
    energy = timing.energy(batch, cycle)
    return Point(batch, tpot, ttft, rate, timing.output / cycle, *economics(price_per_device_hour, tdp, rate),
                 tpot_band_s=band, joules_per_token_estimate=None if energy is None else energy.joules())


def economics(price_per_device_hour: float | None, tdp: float | None,
              rate: float) -> tuple[float | None, float | None]:
    """($ per million tokens, joules a token) at ``rate`` tokens/s a device."""
    price = None if price_per_device_hour is None else cost_per_million_tokens(price_per_device_hour, 1, rate)
    return price, tdp / rate if tdp else None

