"""What a communication op costs: the bytes each device sends in a collective, its steps one
after another, and its time on a link (the α–β model).

All-reduces are timed by the algorithm that runs them (``WorkloadParams.allreduce``: the
engines' custom one, NCCL's ring, tree or NVLS with its protocol, ``collectives``); their
bytes are reported as a ring sends them. The other collectives (all-to-all, sends):
the α–β model of the collective's ring algorithm (Thakur, Rabenseifner
and Gropp 2005, https://doi.org/10.1177/1094342005051521) with NCCL's latencies:
time = base + steps × step latency + bytes sent / link rate, where the bytes one device
sends are 2(n−1)/n × message for a ring all-reduce over n devices (in 2(n−1) steps),
(n−1)/n × message for an all-to-all (n−1 steps) and the message for a send (one step);
the link rate is per direction (a ring sends and receives at once); the base is NCCL's
6.6 µs per collective (``NCCL_BASE_LATENCY_S``) and the step latency the link's own
(catalogue). Two simplifications, stated: the latencies are those of NCCL's LL protocol
(the one it picks for small messages) while the rate is the link's full one (LL reaches
about a quarter of it; large messages use the Simple protocol, 8.4 µs base and a few µs a
step), so large transfers come out optimistic; and a ring over several nodes pays the
network's step latency on every step, where NCCL's model charges it only on the steps
that cross nodes, so small cross-node collectives come out pessimistic.
Communication is not overlapped with compute: the times
add up (an upper bound where a framework overlaps the gradient all-reduce with backward).
"""

from __future__ import annotations

import numpy as np

from explorer.core.hardware.hardware import Link
from explorer.core.model import collectives
from explorer.core.model import ops as op

# NCCL's base latency of a ring collective with the LL protocol (baseLat[Ring][LL] in
# src/graph/tuning.cc at b6475625, the source of every link's step latency here).
NCCL_BASE_LATENCY_S = 6.6e-6


def ring_all_reduce_bytes(message: op.Size, devices: int) -> op.Size:
    """Bytes each device sends in a ring all-reduce of ``message`` bytes over ``devices``:
    2(n−1)/n × message (a reduce-scatter, then an all-gather, each n−1 steps)."""
    return 2 * (devices - 1) * message / devices


def all_to_all_bytes(message: op.Size, devices: int) -> op.Size:
    """Bytes each device sends in an all-to-all where it holds ``message`` bytes bound
    evenly for every device of the group: the (n−1)/n of them bound for the others."""
    return (devices - 1) * message / devices


def collective_steps(role: op.Role, devices: int) -> int:
    """Transfer steps one after another, each paying the link's latency."""
    steps = {op.Role.ALL_REDUCE: 2 * (devices - 1), op.Role.ALL_TO_ALL: devices - 1,
             op.Role.ALL_GATHER: devices - 1, op.Role.SEND_RECV: 1}
    return steps[role]


def link_seconds(link: Link, steps: op.Size, bytes_sent: op.Size) -> op.Size:
    """base + steps × step latency + bytes / per-direction rate (scalars or arrays)."""
    assert link.latency_s is not None  # the catalogue requires it
    return NCCL_BASE_LATENCY_S + steps * link.latency_s + bytes_sent / link.per_direction_bytes_per_s


def all_reduce_choice(link: Link, o: op.Op, training: bool) -> collectives.Choice:
    """The algorithm an all-reduce op runs on ``link`` (``o.algorithm`` asked for): chosen
    for one pass's message (``o.bytes`` is a ring's bytes, 2(n−1)/n of it, per pass)."""
    n = o.group
    message = float(o.bytes) / _passes(o) * n / (2 * (n - 1))
    return collectives.choose(link, n, message, o.algorithm, training)


def _passes(o: op.Op) -> float:
    """How many all-reduces of its message an op stands for (training's passes; ZeRO-3's 1.5)."""
    return float(o.steps) / collective_steps(op.Role.ALL_REDUCE, o.group)


def op_algorithm(link: Link, o: op.Op, training: bool) -> tuple[str, float]:
    """(the algorithm a communication op runs, its latency in seconds) on ``link``: an
    all-reduce's chosen one ("oneshot", "ring/LL", "nvls/Simple"), else NCCL's LL ring
    latencies of ``link_seconds`` ("nccl/LL")."""
    if not o.algorithm:
        return "nccl/LL", float(link_seconds(link, float(o.steps), 0.0))
    choice = all_reduce_choice(link, o, training)
    return choice.label, _passes(o) * choice.latency_s


def op_traffic(link: Link, o: op.Op, training: bool) -> tuple[float, float]:
    """(bytes one device sends, transfer steps) of one occurrence of a communication op by
    the algorithm it runs: an all-reduce's by its chosen algorithm (one-shot sends
    (n−1) × the message in one step, where ``o.bytes`` counts a ring's 2(n−1)/n of it in
    2(n−1) steps), any other op's as it is."""
    if not o.algorithm:
        return float(o.bytes), float(o.steps)
    choice, passes = all_reduce_choice(link, o, training), _passes(o)
    return passes * choice.bytes_sent, passes * choice.steps


def op_link_seconds(link: Link, o: op.Op, bytes_sent: op.Size, training: bool,
                    achieved: collectives.Achieved = collectives.AT_THE_MODEL) -> op.Size:
    """One occurrence of a communication op on ``link`` sending ``bytes_sent`` (its bytes,
    or per batch: arrays), as far from the cost model as ``achieved`` says: an all-reduce
    by the algorithm its message picks (``collectives``; its bytes are a ring's), any other
    (NCCL's sends, gathers and all-to-alls) as ``link_seconds``."""
    if not o.algorithm:
        return (link_seconds(link, float(o.steps), bytes_sent / achieved.nccl_share)
                + achieved.nccl_extra_s)
    n, passes = o.group, _passes(o)
    message = np.asarray(bytes_sent, dtype=float) / passes * n / (2 * (n - 1))
    return passes * collectives.all_reduce_seconds(link, n, message, o.algorithm, training, achieved)
