"""The X11 drag benchmark's bookkeeping: a move read is told by its place among
``SPREAD``, the moves Qt merged are counted as read, and each move's latency ends at the
first paint that shows it or a later one. With Xvfb here it also runs end to end."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
try:
    import drag_x11
finally:
    sys.path.pop(0)


def test_a_move_is_told_by_its_place_and_merged_moves_count_as_read():
    probe = drag_x11.Probe()
    probe.seen(-1)  # the hover at the press
    assert probe.latest == -1
    for tag in (0, 1, 2):
        probe.seen(tag)
    assert probe.latest == 2
    probe.seen(6)  # Qt merged moves 3 to 5 into 6
    assert probe.latest == 6
    probe.seen((6 + drag_x11.SPREAD - 1) % drag_x11.SPREAD)  # 15 moves later, wrapped around
    assert probe.latest == 6 + drag_x11.SPREAD - 1


def test_each_move_ends_at_the_first_paint_showing_it_or_a_later_one():
    probe = drag_x11.Probe()
    probe.paints = [(0.005, -1), (0.012, 0), (0.030, 1), (0.045, 3)]  # move 2 merged into 3
    sent = [0.0, 0.016, 0.033, 0.040, 0.050]
    assert probe.latencies(sent) == pytest.approx([0.012, 0.014, 0.012, 0.005])  # move 4 never shown


def test_a_paint_before_a_move_was_sent_does_not_show_it():
    probe = drag_x11.Probe()
    probe.paints = [(0.010, 5), (0.030, 5)]
    assert probe.latencies([0.020]) == pytest.approx([0.010])


@pytest.mark.slow
@pytest.mark.skipif(drag_x11.missing() is not None, reason=str(drag_x11.missing()))
def test_the_drags_run_through_a_real_x_server():
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "drag_x11.py"), "--moves", "40",
                          "--rounds", "1"], capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = [line for line in out.stdout.splitlines() if line.startswith(("roof drag", "star drag"))]
    assert len(lines) == 4 and all("; 40 moves" in line for line in lines), out.stdout
    pooled = [line for line in out.stdout.splitlines() if line.startswith("pooled over every move")]
    assert len(pooled) == 1 and ", of 160 moves." in pooled[0], out.stdout  # 4 drags of 40 moves


@pytest.mark.slow
@pytest.mark.skipif(drag_x11.missing() is not None, reason=str(drag_x11.missing()))
def test_start_up_is_timed_to_the_first_frame_painted_on_a_real_x_server():
    """Each of the three windows is painted for the server and timed; ours after the bare
    PySide6 window, which paints one empty widget (a check that the time is the paint's,
    not a process that ended before any)."""
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "startup_x11.py"), "--rounds", "1"],
                         capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    line = out.stdout.split("every round: ", 1)[1].splitlines()[0]  # "bare 136 ms, pyqtgraph 543 ms, …"
    medians = dict(part.split()[:2] for part in line.split(", "))
    bare, graph, ours = (float(medians[kind]) for kind in ("bare", "pyqtgraph", "ours"))
    assert 0 < bare < ours and graph > 0
    assert out.stdout.count("goal <= ") == 2
