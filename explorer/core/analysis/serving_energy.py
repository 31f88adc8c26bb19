"""The power model's energy of a served output token (``energy.power_w``), one function for
``serve``'s estimate and for the check against published measurements
(``energy_validation.cost``), so the two cannot drift apart.

A replica's cycle is ``output`` decode steps at the batch and its requests' prefills (on their
own, or in chunks riding on the decode steps: ``serving_timing.Timing``). Per output token,
every device together, it costs

- **the decode share**: the plain decode step's expected time (and any KV-offload transfer,
  the roofs idle) over the batch, at the step's occupancy, its compute time plus its memory
  time over its time;
- **the prefill share**: what the prompts add to the cycle (the cycle over the batch's
  output less the decode share's time), at the prefill's occupancy: its compute time plus its
  memory time (less the weight reads a chunk shares with its decode step) over the output,
  each replica prefilling its own share of the batch.

Each share draws ``power_w(TDP, occupancy)`` a device over its seconds: at most the TDP, so the
estimate is at most the figure at TDP (TDP over tokens/s a device), and at least the idle
share of it."""

from __future__ import annotations

import math
from dataclasses import dataclass

from explorer.core.analysis.analysis import Analysis
from explorer.core.analysis.energy import IDLE_SHARE, power_w
from explorer.core.analysis.energy_report import device_busy_s


@dataclass(frozen=True)
class TokenEnergy:
    """Per output token, every device's: the seconds and the roofs' busy seconds (compute
    time plus memory time) of the decode and prefill shares."""

    tdp_w: float
    devices: int
    decode_s: float  # the decode step's expected time over the batch
    decode_busy_s: float  # its compute time plus memory time over the batch
    prefill_s: float  # what the prompts add to the cycle, over the output
    prefill_busy_s: float

    def joules(self, idle_share: float = IDLE_SHARE) -> float:
        """J/token at the expected time: each share at its own occupancy's power."""
        def share(seconds: float, busy: float) -> float:
            return power_w(self.tdp_w, busy / seconds, idle_share) * seconds if seconds > 0 else 0.0
        return self.devices * (share(self.decode_s, self.decode_busy_s)
                               + share(self.prefill_s, self.prefill_busy_s))

    def at_seconds(self, seconds: float, idle_share: float = IDLE_SHARE) -> float:
        """J/token of the same work over ``seconds`` a token (one occupancy for both shares)."""
        busy = (self.decode_busy_s + self.prefill_busy_s) / seconds
        return self.devices * power_w(self.tdp_w, busy, idle_share) * seconds


def token_energy(decode: Analysis, step_s: float, prefill: Analysis, batch: int, output: int, cycle_s: float,
                 chunked: bool, offloaded_s: float = 0.0, outputs: float | None = None) -> TokenEnergy | None:
    """Per output token, the shares of a replica's ``cycle_s`` in which each of its sequences
    makes ``output`` tokens: ``decode`` the plain decode step at ``batch`` (every replica's
    sequences) and ``step_s`` its expected time, ``prefill`` one prompt's (timed as expected),
    ``chunked`` where the prompts ride on the decode steps, ``offloaded_s`` the KV-offload
    transfer each decode step waits for. ``outputs``: the output tokens a request's prefill is
    spread over (a measured average; ``output`` unless given). None where the device states no
    TDP."""
    tdp = decode.hardware.specs.tdp_w
    if not tdp:
        return None
    decode_s = (step_s + offloaded_s) / batch  # every replica's sequences share the devices' time
    prefill_s = cycle_s / (batch * output) - decode_s  # what the prompts add, over the output
    dt, pt = decode.totals, prefill.totals
    prefill_busy = device_busy_s(prefill)
    if chunked:  # the chunk reads the weights with the decode step
        shared = min(float(pt.weight_bytes), float(dt.weight_bytes))
        prefill_busy -= shared / prefill.roofs.bandwidth_bytes_per_s
    decode_busy = device_busy_s(decode) / batch
    replica = math.ceil(batch / decode.params.split.batch_share) / batch  # a replica's share of the batch
    return TokenEnergy(tdp, decode.params.split.devices, decode_s, decode_busy, max(prefill_s, 0.0),
                       max(prefill_busy, 0.0) / (outputs or output) * replica)


def idling(estimate: float | None, at_tdp: float | None, at_tdp_slower: float | None) -> float | None:
    """``estimate`` (J/token) of the same work served more slowly: the devices idle for the rest,
    at ``IDLE_SHARE`` of their TDP. ``at_tdp`` and ``at_tdp_slower`` are the figures at TDP (TDP
    over tokens/s a device) at the two rates: their difference is the TDP's joules over the
    device-seconds a token gains."""
    if estimate is None or at_tdp is None or at_tdp_slower is None:
        return None
    return estimate + IDLE_SHARE * max(at_tdp_slower - at_tdp, 0.0)
