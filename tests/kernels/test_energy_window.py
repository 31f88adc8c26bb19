"""Reading an energy counter's step at run time, and filling a window by repeating a kernel,
on a simulated counter that moves every 100 ms (as NVML's does on Hopper) and a fake clock."""

import pytest

from explorer.kernels.energy_window import POLL_S, CounterStep, counter_step, fill_window
from explorer.kernels.timing import CancelToken


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_the_step_is_read_between_two_moves_of_the_counter():
    clock = Clock()
    clock.now = 0.037  # the probe starts between two updates

    def counter() -> float:  # 300 W, updated every 100 ms
        return 30.0 * int(clock.now / 0.1 + 1e-9)

    step = counter_step(counter, 1e-3, clock, clock.sleep)
    assert step.seconds == pytest.approx(0.1, abs=2 * POLL_S) and step.joules == pytest.approx(30.0)
    assert step.window_s(1.0) == pytest.approx(1.0, abs=0.02)
    assert step.window_s(0.05) == pytest.approx(1.0, abs=0.02)
    assert step.uncertainty_w(300.0, 1.0) == pytest.approx(300.0 * step.seconds + 1e-3)


def test_a_counter_that_does_not_move_twice_gives_no_step():
    clock = Clock()
    assert counter_step(lambda: 5.0, 1e-3, clock, clock.sleep, timeout_s=2.0) is None
    assert clock.now == pytest.approx(2.0, abs=2 * POLL_S)  # it waited no longer than asked


def test_a_window_is_filled_by_batches_of_launches_each_synchronised():
    clock, synced = Clock(), []

    def launch():
        clock.now += 0.002  # 2 ms a launch

    fill_window(launch, lambda: synced.append(clock.now), until=1.0, launch_s=0.002, clock=clock)
    assert clock.now >= 1.0 and clock.now < 1.0 + 0.1 + 0.002  # at most one batch past the end
    assert len(synced) == pytest.approx(10, abs=1)  # batches of about 100 ms


def test_a_window_stops_at_a_cancel_and_says_it_was_not_filled():
    clock, token = Clock(), CancelToken()

    def launch():
        clock.now += 0.01
        token.cancel()

    assert fill_window(launch, lambda: None, until=5.0, launch_s=0.01, cancel=token, clock=clock) is False
    assert clock.now < 0.2


def test_batches_follow_the_wall_time_a_launch_takes_not_its_device_time():
    """A small kernel that runs in 1 µs but takes 2 ms to issue: a batch sized from its
    device time (10,000 launches, 20 s) would overrun the window twentyfold."""
    clock, synced = Clock(), []

    def launch():
        clock.now += 0.002

    assert fill_window(launch, lambda: synced.append(clock.now), until=1.0, launch_s=1e-6, clock=clock)
    assert clock.now < 1.0 + 0.1 + 0.002  # at most one batch past the end, as for any kernel


def test_the_step_says_how_often_the_counter_moves():
    assert CounterStep(0.1, 30.0, 1e-3).describe() == "moves every 100 ms (by 30 J when probed)"
