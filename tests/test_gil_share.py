"""explorer.runs.GilShare: a job's worker lets go of Python's lock for a moment every 5 ms of
its own work, so that the GUI thread waiting for the lock runs (benchmarks/gui_stalls.py)."""

from explorer.runs import GIL_SHARE_EVERY_S, GIL_SHARE_SLEEP_S, GilShare


def test_it_sleeps_only_once_the_interval_has_passed_since_its_last_sleep():
    now, slept = [0.0], []
    share = GilShare(clock=lambda: now[0], sleep=slept.append)
    assert GIL_SHARE_EVERY_S == 0.005
    for t, expected in ((0.001, False), (0.0049, False), (0.005, True), (0.0099, False), (0.0101, True)):
        now[0] = t
        assert share() is expected, t
    assert slept == [GIL_SHARE_SLEEP_S, GIL_SHARE_SLEEP_S]

