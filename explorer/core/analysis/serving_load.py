"""A serving plan under a load: requests arriving at random (Poisson) at ``rate`` a second.
Each batch of B concurrent requests is B slots, each held for a request's time in service:
the plan's cycle, in which a replica's sequences produce their output and are replaced
(output × TPOT and the prefills it waits for: B ÷ S requests/s is the plan's own rate);
arrivals that find every slot busy wait in a queue (Erlang's
M/M/c model: the chance to wait is Erlang C of the offered load A = rate × S over B slots,
the mean wait C × S ÷ (B − A)). A batch whose slots cannot keep up (A ≥ B) lets the queue
grow without end. Under the load each device gives the load's tokens (rate × output over
the devices), so a plan under load takes the batch with the shortest time in the system
(the wait, the first token and the output) within the targets, not the most tokens/s."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from explorer.core.analysis.serving_energy import idling
from explorer.core.analysis.serving_timing import Point


def erlang_c(servers: int, load: float) -> float:
    """The chance an arrival waits when ``load`` (arrival rate × service time) is offered
    to ``servers`` (load < servers), by the recurrence of Erlang B (stable for thousands)."""
    blocked = 1.0
    for k in range(1, servers + 1):
        blocked = load * blocked / (k + load * blocked)
    return servers * blocked / (servers - load * (1 - blocked))


def queue_wait(batch: int, rate: float, service_s: float) -> float | None:
    """The mean wait (s) for a free slot among ``batch``; None when the slots cannot keep up."""
    load = rate * service_s
    if load >= batch:
        return None
    return erlang_c(batch, load) * service_s / (batch - load)


def under_load(points: list[Point], rate: float, output: int, devices: int,
               economics: Callable[[float], tuple[float | None, float | None]]) -> list[Point]:
    """The batches (``serving_timing.Point``) that keep up with ``rate`` requests/s, each with its
    wait in the TTFT and the load's tokens/s a device; ``economics(tokens/s a device)``
    gives the price and joules a token at that rate. The estimate is the one at the batch the
    load keeps in service (the smallest whose own rate carries it, at most the point's), its
    devices idle for the time the load leaves them (``serving_energy.idling``)."""
    tokens = rate * output / devices
    price, joules = economics(tokens)
    # continuous batching runs each step with the requests in service, not the batch limit: at
    # this load, about the smallest batch whose own rate carries it, whatever the limit above
    carrying = min((q for q in points if q.tokens_per_s_per_device >= tokens), key=lambda q: q.batch,
                   default=None)
    out: list[Point] = []
    for p in points:
        served = carrying if carrying is not None and carrying.batch <= p.batch else p
        held = p.batch * output / (p.tokens_per_s_per_device * devices)  # the plan's cycle: its own rate
        wait = queue_wait(p.batch, rate, held)
        if wait is not None:
            out.append(replace(p, ttft_s=p.ttft_s + wait, tokens_per_s_per_device=tokens,
                               cost_per_million_tokens=price, joules_per_token=joules,
                               joules_per_token_estimate=idling(served.joules_per_token_estimate,
                                                                served.joules_per_token, joules)))
    return out


def choose(ok: list[Point], rate: float, output: int, everything: list[Point]) -> tuple[Point | None, str]:
    """The batch within the targets with the shortest time in the system, and a note."""
    if not everything:
        return None, (f"an arrival rate of {rate:g} requests/s: no batch keeps up with it; the queue would "
                      "grow without end")
    if not ok:
        return None, (f"an arrival rate of {rate:g} requests/s: no batch that keeps up with it meets the "
                      "targets")
    best = min(ok, key=lambda p: p.ttft_s + output * p.tpot_s)
    system = best.ttft_s + output * best.tpot_s
    words = f"the load: {rate:g} requests/s spend least time in the system at batch {best.batch:,}"
    return replace(best, limited_by=words), (
        f"an arrival rate of {rate:g} requests/s (Poisson arrivals, Erlang's M/M/c queue): batch "
        f"{best.batch:,} gives the shortest time in the system, {system:,.3g} s, its first token "
        f"after {best.ttft_s * 1e3:,.0f} ms with the wait for a free slot; batches that cannot keep up "
        "are left out")
