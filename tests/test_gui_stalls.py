"""benchmarks/gui_stalls.py: the longest gap between a GUI-thread timer's ticks, from the
operation's start, and one row an operation over its rounds (their median); its quick mode
runs every long operation the window offers in a window of its own and reports each. No
time is asserted: the figures depend on the machine."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
try:
    import gui_stalls
finally:
    sys.path.pop(0)


def test_the_longest_stall_is_the_longest_gap_less_the_interval_from_the_start():
    clock = gui_stalls.Clock()
    clock.tick(0.000)
    clock.tick(0.200)  # before the start: not the operation's
    clock.started = 0.203
    for now in (0.205, 0.260, 0.265, 0.290):
        clock.tick(now)
    assert clock.longest == pytest.approx(0.260 - 0.205 - gui_stalls.TICK_S)  # 50 ms
    assert clock.at == pytest.approx(0.205 - 0.203) and clock.ticks == 4


def test_the_gap_that_holds_the_start_counts():
    clock = gui_stalls.Clock()
    clock.tick(1.000)
    clock.started = 1.002  # the operation starts, and keeps the GUI thread 120 ms
    clock.tick(1.125)
    assert clock.longest == pytest.approx(0.120) and clock.at == 0.0


def test_rounds_make_one_row_of_their_medians_keeping_each_round_s_stall():
    rows = [gui_stalls.Row("export", stall, ticks, total, True, "") for stall, ticks, total in
            ((0.020, 60, 0.30), (0.300, 40, 0.50), (0.030, 70, 0.31))]
    row = gui_stalls.over_rounds(rows)
    assert (row.stall_s, row.ticks, row.total_s) == (0.030, 60, 0.31)
    assert row.rounds == (0.020, 0.300, 0.030) and row.finished
    assert row.peak_mb is None  # no round read its memory


def test_the_rows_peak_is_the_largest_round_s():
    rows = [gui_stalls.Row("import", 0.01, 10, 1.0, True, "", peak_mb=peak) for peak in (310.0, None, 295.5)]
    assert gui_stalls.over_rounds(rows).peak_mb == 310.0


@pytest.mark.slow
def test_quick_mode_runs_and_reports_every_operation(tmp_path):
    out = tmp_path / "rows.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ROOFLINE_NO_APT": "1"}
    script = str(ROOT / "benchmarks" / "gui_stalls.py")
    done = subprocess.run([sys.executable, script, "--quick", "--rounds", "1", "--platform", "offscreen",
                           "--json", str(out)], capture_output=True, text=True, env=env, timeout=300,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = json.loads(out.read_text())
    assert [r["name"] for r in rows] == [
        "import profile, 1 MB trace", "import profile, 3 MB trace", "list cached models, 50 repositories",
        "calibrate, quick preset", "export dialog, PNG, default width", "export dialog, PNG, 1,600 px",
        "export dialog, PDF", "layouts search, 64 devices", "layouts search, 256 devices",
        "live kernel run, stream (smoke)", "open session, a profile and 5 runs"]
    assert all(r["finished"] and r["ticks"] >= 1 and r["total_s"] > 0 and len(r["rounds"]) == 1 for r in rows)
    assert all(r["peak_mb"] is not None and r["peak_mb"] >= 0 for r in rows)  # (Linux: /proc is read)
    table = done.stdout
    assert "GUI stalls (offscreen)" in table and all(r["name"] in table for r in rows)
    assert list(tmp_path.iterdir()) == [out]  # its traces, cache and files went with it


def test_without_xvfb_an_earlier_runs_x11_rows_are_removed_not_kept(tmp_path, monkeypatch):
    """doc_tables.py writes whatever stalls-x11.json holds: where this run cannot reach an X
    server, an earlier run's rows must not pass for this one's."""
    import types

    stale = tmp_path / "stalls-x11.json"
    stale.write_text("[]")
    monkeypatch.setitem(sys.modules, "drag_x11", types.SimpleNamespace(
        missing=lambda: "Xvfb is not installed", start_server=None))
    assert gui_stalls.x11(["--rounds", "1", "--json", str(stale)]) == 0
    assert not stale.exists()
