"""How long an energy reading must last, learnt from the counter itself.

An energy counter does not advance continuously: NVML's total energy moves about every
100 ms on recent GPUs, RAPL's about every millisecond. A read between two updates returns
the last update, so the energy of a window is off by up to one update's worth: its power is
uncertain by power × period / window. ``counter_step`` reads a counter until it has moved
twice and records the step (how often, by how much); a window then lasts ``WINDOW_STEPS``
periods at least (and a source's own floor), which holds that uncertainty under
1 / ``WINDOW_STEPS``; ``fill_window`` repeats a kernel until its window is filled.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from explorer.kernels.timing import CancelToken

WINDOW_STEPS = 10  # periods of the counter in one window: ≤ 10 % from its steps
STEP_TIMEOUT_S = 2.0  # a counter that has not moved twice by then is not read
POLL_S = 1e-3
BATCH_S = 0.1  # launches issued between two synchronisations while a window fills
FIRST_BATCH = 100  # launches before the wall time of one is known (issuing may outlast running)


@dataclass(frozen=True)
class CounterStep:
    """How an energy counter advances: every ``seconds``, by ``joules`` (when it was read),
    in units of ``resolution_j``."""

    seconds: float
    joules: float
    resolution_j: float

    def window_s(self, floor_s: float) -> float:
        """The shortest window whose power is within 1 / ``WINDOW_STEPS`` of the truth."""
        return max(floor_s, WINDOW_STEPS * self.seconds)

    def uncertainty_w(self, watts: float, seconds: float) -> float:
        """± on a power of ``watts`` read over ``seconds``: one update's energy at that power,
        and one unit of the counter, spread over the window."""
        return (watts * self.seconds + self.resolution_j) / seconds

    def describe(self) -> str:
        return f"moves every {self.seconds * 1e3:.3g} ms (by {self.joules:.3g} J when probed)"


def counter_step(read: Callable[[], float], resolution_j: float, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep, timeout_s: float = STEP_TIMEOUT_S
                 ) -> CounterStep | None:
    """The step of the counter ``read`` returns (joules): read until it has moved twice; the
    time and energy between the two moves. None when it did not move twice in ``timeout_s``."""
    start = clock()
    last = read()
    moves: list[tuple[float, float]] = []
    while len(moves) < 2:
        if clock() - start > timeout_s:
            return None
        sleep(POLL_S)
        value, now = read(), clock()
        if value != last:
            moves.append((now, value))
            last = value
    (t1, v1), (t2, v2) = moves
    return CounterStep(t2 - t1, v2 - v1, resolution_j)


def fill_window(launch: Callable[[], object], sync: Callable[[], None], until: float, launch_s: float,
                cancel: CancelToken | None = None, clock: Callable[[], float] = time.monotonic) -> bool:
    """Launch until ``clock()`` reaches ``until``, in batches of about ``BATCH_S`` with a
    synchronisation after each, so the device stays busy and the window ends when its work
    does. The first batch is sized from a launch's measured ``launch_s``, the next ones from
    the wall time the last one took (issuing a launch can take longer than running it).
    Returns whether the window was filled: False when ``cancel`` came first (the caller keeps
    its timing and drops the short window's energy)."""
    cancel = cancel or CancelToken()
    per_launch, filling = max(launch_s, 1e-7), False
    while (now := clock()) < until:
        if cancel.cancelled:
            return False
        batch = max(1, min(10_000 if filling else FIRST_BATCH, round(min(BATCH_S, until - now) / per_launch)))
        filling = True
        for _ in range(batch):
            launch()
        sync()
        per_launch = max((clock() - now) / batch, 1e-7)
    return True
