"""Window responsiveness, measured offscreen in this process and in fresh subprocesses.

1. Drags, motion-to-photon: ``benchmarks/drag_latency.py`` (real mouse moves at 60 Hz to
   the paint that shows them; goal: p99 and the first move ≤ 16.7 ms), run from here.
2. Start-up: process start to the first painted main window, against a bare pyqtgraph
   PlotWidget window and a bare PySide6 window in the same run (each in a fresh
   interpreter, interleaved, foreign load read each round). Goal: ≤ 1.0× the
   bare pyqtgraph window and ≤ 3× the bare PySide6 window; CuPy is not imported before the
   first paint.
3. Soak: 1000 repaints and 200 full drags (press, moves, release) without a crash.

    QT_QPA_PLATFORM=offscreen python benchmarks/app_responsiveness.py [--steps 300]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("ROOFLINE_EXPLORER_DATA", tempfile.mkdtemp(prefix="roofline-bench-"))

from common import Ratio, child_env, compile_app, describe, interleaved
from PySide6 import QtCore, QtWidgets

BARE = """
import time, sys
start = time.perf_counter()
from PySide6 import QtWidgets
app = QtWidgets.QApplication(sys.argv[:1])
w = QtWidgets.QMainWindow(); w.resize(1366, 768); w.show(); w.grab()
print(time.perf_counter() - start)
"""

BARE_PYQTGRAPH = """
import time, sys
start = time.perf_counter()
from PySide6 import QtWidgets
import pyqtgraph as pg
app = QtWidgets.QApplication(sys.argv[:1])
w = QtWidgets.QMainWindow(); w.setCentralWidget(pg.PlotWidget()); w.resize(1366, 768); w.show(); w.grab()
print(time.perf_counter() - start)
"""

OURS = """
import time, sys, os
start = time.perf_counter()
from explorer.commands import window_options  # what the app's entry point parses for the window
from explorer.app import window_module  # and imports, in its order (Qt-free modules first)
build_window = window_module().build_window
from PySide6 import QtWidgets
app = QtWidgets.QApplication(sys.argv[:1])
w = build_window(window_options.parse(['--size', '1366x768']))
w.show(); w.grab()
print(time.perf_counter() - start)
print('cupy' in sys.modules)
w.runs.shutdown()
"""


def _run(code: str, env) -> list[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          check=True).stdout.split()


def startup_ratios(rounds: int) -> tuple[Ratio, Ratio, bool]:
    """(ours ÷ the bare pyqtgraph window, ours ÷ the bare PySide6 window, whether CuPy was
    imported before our first paint), each process to its first painted frame, in
    interleaved rounds whose foreign load is read (``common.interleaved``)."""
    # An installed app runs from compiled bytecode, as pyqtgraph does here; an editable
    # checkout (and PYTHONDONTWRITEBYTECODE) would compile every module on every start.
    compile_app()
    env = child_env(QT_QPA_PLATFORM="offscreen")
    cupy = []

    def ours() -> float:
        out = _run(OURS, env)
        cupy.append(out[1] == "True")
        return float(out[0])

    runs = {"bare": lambda: float(_run(BARE, env)[0]),
            "pyqtgraph": lambda: float(_run(BARE_PYQTGRAPH, env)[0]), "ours": ours}
    measured = interleaved(runs, rounds)
    return measured.ratio("ours", "pyqtgraph"), measured.ratio("ours", "bare"), any(cupy)


def startup(rounds: int) -> None:
    to_graph, to_bare, cupy_loaded = startup_ratios(rounds)
    print("start-up to the first painted window, each in a fresh interpreter:")
    print(describe("ours ÷ a bare pyqtgraph window", to_graph, "goal <= 1.0"))
    print(describe("ours ÷ a bare PySide6 window", to_bare, "goal <= 3"))
    print(f"cupy imported before the first paint: {cupy_loaded}")


def drags_and_soak() -> None:
    from drag_latency import DEVICES, own_settings
    from drag_latency import main as drag_latency

    from explorer.commands import main as cli
    from explorer.core.model.session import Session
    from explorer.ui.application import build_window

    drag_latency([])
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv[:1])
    window = build_window(cli.parse_args(["--size", "1366x768"]), own_settings())
    window.show()
    window.state.replace_session(Session(hardware=DEVICES, model="llama-3-70b"), "benchmark")
    app.processEvents()
    soak(window, app)
    window.runs.shutdown()
    window.close()


def soak(window, app) -> None:
    import math

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
    from tests.ui import mouse

    plot = window.chart
    for _ in range(1000):
        plot.repaint()
    for i in range(200):
        start = mouse.to_pixels(plot, -1.5, math.log10(plot.state.primary.bandwidth_bytes_per_s) - 1.5)
        end = QtCore.QPointF(start.x(), start.y() + (-30 if i % 2 else 30))
        mouse.drag(plot, start, end, steps=3)
        app.processEvents()
    print(f"soak: 1000 repaints and 200 drags done; undo steps recorded: {window.state.undo_stack.count()}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", choices=("drag", "startup"), help="run one part")
    args = parser.parse_args()
    if args.only != "startup":
        drags_and_soak()
    if args.only != "drag":
        startup(args.rounds)
    return 0


if __name__ == "__main__":
    from common import watched  # (run as a script: benchmarks/ is on the path)

    with watched():
        code = main()
    sys.exit(code)
