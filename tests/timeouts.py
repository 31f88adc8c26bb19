"""A guard against work that does not end: fails the test once the process has spent
``seconds`` of CPU time in it (a hang detector set well above the goal, never a timing
assertion: CPU time, so a machine busy with other work does not trip it)."""

import signal
from contextlib import contextmanager


class Hang(AssertionError):
    pass


@contextmanager
def no_hang(seconds: float):
    fired = []

    def stop(*_):
        fired.append(True)
        raise Hang(f"still running after {seconds} s of CPU time")

    previous = signal.signal(signal.SIGPROF, stop)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
    if fired:  # the alarm came inside a callback that swallowed it (a garbage collector hook)
        raise Hang(f"took more than {seconds} s of CPU time")


@contextmanager
def no_block(seconds: float = 10.0):
    """Fail when the block waits ``seconds`` of wall time: a read that blocks forever (a
    FIFO with no writer) spends no CPU time, so ``no_hang`` cannot see it. A detector for
    a wait that never ends, set far above any real wait, not a timing assertion."""

    def stop(*_):
        raise Hang(f"blocked for {seconds} s (a read that never returns?)")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
