"""A guard against work that does not end: fails the test after ``seconds`` (a hang
detector set well above the goal, never a timing assertion)."""

import signal
from contextlib import contextmanager


class Hang(AssertionError):
    pass


@contextmanager
def no_hang(seconds: float):
    def stop(*_):
        raise Hang(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
