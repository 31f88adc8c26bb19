"""Start-up on a real X server: process start to the first frame painted for the server,
our window against a bare pyqtgraph PlotWidget window and a bare PySide6 window, each in a
fresh interpreter on its own Xvfb through Qt's xcb platform, in interleaved rounds whose
foreign load is read (as ``app_responsiveness.py`` times them offscreen, where a ``grab``
stands for the first frame). Here each process shows its window and runs its event loop
until the widget that shows the content (the chart; the plot's viewport; the bare window)
has handled its first paint event, as the server asked for it. Goal: ≤ 1.0× the bare
pyqtgraph window and ≤ 3× the bare PySide6 window, on the whole process's clock: from the
moment this script spawns the interpreter to that first frame (what a user waits for). The
in-process clock, from the interpreter's first line, is printed beside it: it leaves out the
interpreter's own start, the same for all three, so its ratios are wider.

    python benchmarks/startup_x11.py [--rounds 9]

Needs Xvfb (Debian: xvfb, libxcb-cursor0); says so and stops without it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from functools import partial

from common import IN_PROCESS, STAMP, child_env, compile_app, describe, start_up, two_clocks
from drag_x11 import start_server

# Each process ends on its own first painted frame: ``target``'s first paint event handled.
FIRST_PAINT = """
import sys, time
start = time.perf_counter()
{setup}
from PySide6 import QtCore

class FirstPaint(QtCore.QObject):
    def eventFilter(self, watched, event):
        if watched is target and event.type() == QtCore.QEvent.Type.Paint and not painted:
            painted.append(True)
            QtCore.QTimer.singleShot(0, done)  # after the paint (and its flush) returns
        return False

def done():
    print(time.perf_counter() - start)
    {stamp}
    app.quit()

painted = []
first = FirstPaint()
target.installEventFilter(first)
w.show()
QtCore.QTimer.singleShot(20000, app.quit)  # a window never painted ends without a time
app.exec()
{after}
"""

SETUPS = {
    "bare": ("from PySide6 import QtWidgets\n"
             "app = QtWidgets.QApplication(sys.argv[:1])\n"
             "w = QtWidgets.QMainWindow(); w.resize(1366, 768); target = w", ""),
    "pyqtgraph": ("from PySide6 import QtWidgets\nimport pyqtgraph as pg\n"
                  "app = QtWidgets.QApplication(sys.argv[:1])\n"
                  "w = QtWidgets.QMainWindow(); plot = pg.PlotWidget(); w.setCentralWidget(plot)\n"
                  "w.resize(1366, 768); target = plot.viewport()", ""),
    "ours": ("from explorer.commands import window_options\nfrom explorer.app import window_module\n"
             "build_window = window_module().build_window\nfrom PySide6 import QtWidgets\n"
             "app = QtWidgets.QApplication(sys.argv[:1])\n"
             "w = build_window(window_options.parse(['--size', '1366x768'])); target = w.chart",
             "w.runs.shutdown()"),
}


def first_paint(kind: str, env: dict) -> tuple[float, float]:
    """Seconds to a fresh interpreter's first painted frame: from its spawn, and from its
    first line."""
    setup, after = SETUPS[kind]
    try:
        whole, in_process, _ = start_up(FIRST_PAINT.format(setup=setup, after=after, stamp=STAMP), env=env,
                                        timeout=120)
    except RuntimeError as exc:
        raise SystemExit(f"the {kind} window was not painted on the X server: {exc}") from None
    return whole, in_process


def main(argv: list[str] | None = None) -> int:
    from drag_x11 import missing

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args(argv)
    why = missing()
    if why:
        print(f"start-up on X11: not run: {why}")
        return 0
    compile_app()  # an installed app runs from compiled bytecode, as pyqtgraph does here
    server, display = start_server()
    env = child_env(DISPLAY=display, QT_QPA_PLATFORM="xcb",
                    ROOFLINE_EXPLORER_DATA=os.environ.get("ROOFLINE_EXPLORER_DATA")
                    or tempfile.mkdtemp(prefix="roofline-bench-"))
    try:
        measured = two_clocks({kind: partial(first_paint, kind, env) for kind in SETUPS}, args.rounds)
    finally:
        server.terminate()
        server.wait()
    print(f"start-up to the first frame painted on X11 (Xvfb, xcb), {args.rounds} interleaved rounds:")
    clocks = (("whole process, from the spawn (the goals' clock)", "", ("goal <= 1.0", "goal <= 3")),
              ("in-process, from the interpreter's first line (context)", IN_PROCESS, ("", "")))
    for clock, suffix, (to_graph, to_bare) in clocks:
        print(f" {clock}:")
        medians = {kind: statistics.median(measured.times[kind + suffix]) * 1e3 for kind in SETUPS}
        print("  medians of every round: " + ", ".join(f"{kind} {ms:.0f} ms" for kind, ms in medians.items()))
        ours, graph = "ours" + suffix, "pyqtgraph" + suffix
        print(describe("ours ÷ a bare pyqtgraph window", measured.ratio(ours, graph), to_graph))
        print(describe("ours ÷ a bare PySide6 window", measured.ratio(ours, "bare" + suffix), to_bare))
    return 0


if __name__ == "__main__":
    from common import watched

    with watched():
        code = main()
    sys.exit(code)
