"""Motion-to-photon of a chart drag on a real X server: the window on Xvfb through Qt's xcb
platform, the mouse moved by another process through the XTest extension (as a real
mouse's events arrive: through the server, the xcb connection and Qt's event compression),
and each move timed from the moment it was sent to the end of the paint that shows it
(as ``drag_latency.py`` times it; the copy of the painted window to the X server that
follows is not in it).
llama-3-70b and four devices, 1366×768, moves at 60 Hz, a roof drag (up and down) and a
star drag (sideways), with the devices in either order. Goal: p99 and the first move
≤ 16.7 ms.

Each move is told apart by a pixel that the drag does not read (a roof drag reads only
the height, a star drag only the position along the axis): the sixteen moves in flight
at most never share a place, every move makes an X event (a move to the same pixel makes
none) and the paint that shows a move is known even where Qt merges queued moves. Both
processes read the same monotonic clock.

    python benchmarks/drag_x11.py [--moves 240] [--rounds 3]

Needs Xvfb and libXtst (Debian: xvfb, libxtst6, libxcb-cursor0); says so and stops
without them.
"""

from __future__ import annotations

import argparse
import ctypes.util
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SPREAD = 16  # moves told apart by their pixel: more than are ever in flight at once

INJECT = r"""
import ctypes, json, math, sys, time
x11, xtst = ctypes.CDLL("libX11.so.6"), ctypes.CDLL("libXtst.so.6")
x11.XOpenDisplay.restype = ctypes.c_void_p
x11.XSync.argtypes = (ctypes.c_void_p, ctypes.c_int)
xtst.XTestFakeMotionEvent.argtypes = (ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                      ctypes.c_ulong)
xtst.XTestFakeButtonEvent.argtypes = (ctypes.c_void_p, ctypes.c_uint, ctypes.c_int, ctypes.c_ulong)
display = x11.XOpenDisplay(None)
x0, y0, moves, spread = (int(v) for v in sys.argv[1:5])
kind = sys.argv[5]
def move(x, y):
    xtst.XTestFakeMotionEvent(display, -1, x, y, 0)
    x11.XSync(display, 0)
move(x0, y0)
time.sleep(0.2)
xtst.XTestFakeButtonEvent(display, 1, 1, 0)
x11.XSync(display, 0)
time.sleep(0.1)
sent, start = [], time.perf_counter()
for i in range(moves):
    while time.perf_counter() < start + i / 60:
        time.sleep(0.0005)
    tag = 1 + i % spread  # (the press is at 0: a move there would make no event)
    if kind == "roof":  # the height moves the roof; the side tells the move apart
        x, y = x0 + tag, y0 - round(60 * math.sin(i / 15))
    else:  # along the axis moves the batch; the height tells the move apart
        x, y = x0 + round(120 * math.sin(i / 20)), y0 + tag
    sent.append(time.perf_counter())  # before the call: XSync returns after the app may have painted
    move(x, y)
time.sleep(0.3)
xtst.XTestFakeButtonEvent(display, 1, 0, 0)
x11.XSync(display, 0)
print(json.dumps(sent))
"""


def missing() -> str | None:
    """Why this machine cannot run it (None: it can)."""
    if shutil.which("Xvfb") is None:
        return "Xvfb is not installed (Debian: apt install xvfb)"
    if ctypes.util.find_library("Xtst") is None:
        return "libXtst is not installed (Debian: apt install libxtst6)"
    return None


def _end_with_parent() -> None:
    """(In the server's process before it starts) end it when this benchmark ends, even
    killed: no server is left behind."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def start_server() -> tuple[subprocess.Popen, str]:
    """An Xvfb of its own on a display number it picks free (``-displayfd``)."""
    server = subprocess.Popen(["Xvfb", "-displayfd", "1", "-screen", "0", "1600x1000x24", "-nolisten", "tcp"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              preexec_fn=_end_with_parent)
    assert server.stdout is not None  # stdout=PIPE
    ready, _, _ = select.select([server.stdout], [], [], 10.0)
    number = server.stdout.readline().strip() if ready else ""
    if not number.isdigit():
        server.kill()
        raise SystemExit("Xvfb did not start (it named no display within 10 s)")
    return server, f":{number}"


class Probe:
    """From inside the chart: the newest move each rebuilt chart holds, and when each
    paint ended (move numbers unwrapped from their ``SPREAD`` places)."""

    def __init__(self) -> None:
        self.origin: tuple[int, int] = (0, 0)
        self.kind = "roof"
        self.latest = -1  # the newest move read
        self.built = -1  # the newest move in the chart being painted
        self.painted = -1  # the newest move painted
        self.paints: list[tuple[float, int]] = []
        self.sent: list[float] = []  # the last drag's moves, when each was sent

    def install(self, cls) -> None:
        move, redraw, paint, apply = cls.mouseMoveEvent, cls.redraw, cls.paintEvent, cls._apply_pending
        probe = self

        def on_apply(plot):
            """A move that changes nothing (the batch snaps to whole numbers) is on the
            screen as soon as it has been read, or, while the paint of an earlier move's
            change is still to come, when that paint ends."""
            seen, before = probe.latest, plot.state.session
            apply(plot)
            if plot.state.session == before:
                if probe.built > probe.painted:
                    probe.built = seen
                else:
                    probe.paints.append((time.perf_counter(), seen))

        def on_move(plot, event):
            point = event.globalPosition()
            x, y = point.x() - probe.origin[0], point.y() - probe.origin[1]
            probe.seen(round(x if probe.kind == "roof" else y) - 1)
            move(plot, event)

        def on_redraw(plot, *args, **kwargs):
            seen = probe.latest
            redraw(plot, *args, **kwargs)
            probe.built = seen

        def on_paint(plot, event):
            paint(plot, event)
            probe.paints.append((time.perf_counter(), probe.built))
            probe.painted = probe.built

        cls.mouseMoveEvent, cls.redraw, cls.paintEvent = on_move, on_redraw, on_paint
        cls._apply_pending = on_apply

    def seen(self, tag: int) -> None:
        """A move read, told by its place ``tag`` (its number modulo ``SPREAD``; -1 the
        press's): the newest move is the nearest number ahead with that tag (Qt may have
        merged the moves between)."""
        self.latest += (tag - self.latest) % SPREAD

    def latencies(self, sent: list[float]) -> list[float]:
        """Each move's time from being sent to the end of the first paint showing it or a later move."""
        out, p = [], 0
        for i, t in enumerate(sent):
            while p < len(self.paints) and (self.paints[p][1] < i or self.paints[p][0] < t):
                p += 1
            if p == len(self.paints):
                break
            out.append(self.paints[p][0] - t)
        return out


def wait(app, seconds: float) -> None:
    from PySide6 import QtCore

    loop = QtCore.QEventLoop()
    QtCore.QTimer.singleShot(round(seconds * 1000), loop.quit)
    loop.exec()


def drag(app, window, probe: Probe, kind: str, moves: int) -> list[float]:
    from PySide6 import QtCore

    plot = window.chart
    chart = plot.chart
    if kind == "roof":
        primary = window.state.primary
        (y0, y1) = chart.y_range
        y = y0 * (y1 / y0) ** 0.25
        local = QtCore.QPointF(chart.x_px(y / primary.bandwidth_bytes_per_s), chart.y_px(y))
    else:
        [star] = [m for m in chart.markers if m.kind == "step"]
        local = QtCore.QPointF(*star.center)
    start = plot.mapToGlobal(local.toPoint())
    probe.origin, probe.kind = (start.x(), start.y()), kind
    probe.latest, probe.built, probe.painted, probe.paints = -1, -1, -1, []
    arguments = [str(v) for v in (start.x(), start.y(), moves, SPREAD)]
    injector = subprocess.Popen([sys.executable, "-c", INJECT, *arguments, kind], stdout=subprocess.PIPE,
                                text=True)
    loop = QtCore.QEventLoop()  # the app waits for events as it does for a real mouse (no polling loop)
    timer = QtCore.QTimer(interval=50)
    held = set()  # what the press took hold of

    def check() -> None:
        held.add(None if plot._drag is None else plot._drag.kind.value)
        if injector.poll() is not None:
            loop.quit()

    timer.timeout.connect(check)
    timer.start()
    loop.exec()
    timer.stop()
    app.processEvents()
    assert injector.stdout is not None  # stdout=PIPE
    sent = json.loads(injector.stdout.read())
    roof_moved = window.state.session.what_if(window.state.primary.id).active
    if kind not in held or (kind == "roof" and not roof_moved):
        raise SystemExit(f"the press at {start.x()}, {start.y()} missed the {kind} it means to drag "
                         f"(it took hold of {held - {None} or 'nothing'})")
    window.state.undo_stack.undo()
    wait(app, 0.7)  # the panels' catch-up after the drag (every half second) and what it redraws
    latencies = probe.latencies(sent)
    probe.sent = sent
    if len(latencies) < len(sent):
        raise SystemExit(f"{len(sent) - len(latencies)} of the {kind} drag's moves were never painted")
    return latencies


def run(moves: int, rounds: int, trace=None, charged: list | None = None) -> dict[str, list[list[float]]]:
    from PySide6 import QtCore, QtWidgets

    from explorer.commands import main as cli
    from explorer.core.model.session import Session
    from explorer.ui.application import build_window, settle
    from explorer.ui.chart import roofline_plot

    if trace:
        trace.install()
    probe = Probe()
    probe.install(roofline_plot.RooflinePlot)
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv[:1])
    from drag_latency import DEVICES, own_settings

    window = build_window(cli.parse_args(["--size", "1366x768"]), own_settings())
    window.move(0, 0)
    window.show()
    settled, place = 0, None
    for _ in range(300):  # until the window has stood still (placed and laid out) a while
        app.processEvents()
        time.sleep(0.01)
        now = (window.windowHandle().isExposed(), window.chart.mapToGlobal(QtCore.QPoint(0, 0)),
               window.chart.size())
        settled, place = (settled + 1 if now == place and now[0] else 0), now
        if settled == 20:
            break

    results: dict[str, list[list[float]]] = {}
    for order, devices in (("", DEVICES), (", devices reversed", tuple(reversed(DEVICES)))):
        window.state.replace_session(Session(hardware=devices, model="llama-3-70b"), "benchmark")
        wait(app, 0.7)
        settle()
        for _ in range(rounds):
            for kind in ("roof", "star"):
                if trace:
                    trace.spans.clear()
                latencies = drag(app, window, probe, kind, moves)
                results.setdefault(f"{kind} drag{order}", []).append(latencies)
                if trace and charged is not None:
                    charged += zip(latencies, trace.charge(probe.sent, latencies), strict=True)
    window.runs.shutdown()
    window.close()
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=240)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", metavar="PATH", help="write every move's latency and the figures here")
    parser.add_argument("--trace", action="store_true",
                        help="say what the moves later than a frame spent their time on (drag_latency.Trace)")
    args = parser.parse_args(argv)
    why = missing()
    if why:
        print(f"drag on X11: not run: {why}")
        return 0
    server, display = start_server()
    os.environ.update(DISPLAY=display, QT_QPA_PLATFORM="xcb")
    os.environ.setdefault("ROOFLINE_EXPLORER_DATA", tempfile.mkdtemp(prefix="roofline-bench-"))
    try:
        from drag_latency import Trace, report, summary, trace_report

        trace, charged = (Trace() if args.trace else None), list[tuple[float, dict[str, float]]]()
        results = run(args.moves, args.rounds, trace, charged)
    finally:
        server.terminate()
        server.wait()
    print(f"motion-to-photon on X11 (Xvfb, xcb, moves sent through XTest), llama-3-70b, 4 devices, "
          f"1366x768, moves at 60 Hz, {args.rounds} rounds:")
    for name, measured in results.items():
        report(name, measured)  # (move 0 is at the press: one pixel aside, which the drag does not read)
    summary(results, args.json)
    if trace:
        trace_report(charged)
    return 0


if __name__ == "__main__":
    from common import watched

    with watched():
        code = main()
    sys.exit(code)
