"""Motion-to-photon of a chart drag: the time from a mouse move to the end of the paint that
shows it, with real mouse events posted to the chart at 60 Hz through the event queue (as
the window system delivers them), llama-3-70b and four devices overlaid, 1366×768,
offscreen. Every hop counts: the event queue, the state update and every panel listening to
it, the chart's layout and the paint. Goal: p99 and the first move after the press
≤ 16.7 ms (one frame at 60 Hz), with the devices in either order.

For comparison the old figure is printed too: a state update plus a synchronous repaint,
without the event loop ("state + repaint").

    QT_QPA_PLATFORM=offscreen python benchmarks/drag_latency.py [--moves 240] [--rounds 3]
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("ROOFLINE_EXPLORER_DATA", tempfile.mkdtemp(prefix="roofline-bench-"))

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from explorer.commands import main as cli
from explorer.core.model.session import Session, WhatIf
from explorer.ui.application import build_window, settle
from explorer.ui.chart import roofline_plot

# In this order the primary device holds llama-3-70b with room for a batch sweep (192 GB);
# reversed, the RTX 4090 is primary and the model does not fit (a track drawn anyway).
DEVICES = ("mi300x", "h100-sxm", "epyc-9654", "rtx-4090")
FRAME_MS = 1000 / 60
LEFT = QtCore.Qt.MouseButton.LeftButton


class Probe:
    """Timestamps from inside the chart widget: moves received, the moves a rebuilt chart
    holds, and paints; each move's latency is resolved by the first paint that shows it."""

    def __init__(self) -> None:
        self.posted: list[float] = []
        self.received = 0
        self.built = 0
        self.resolved = 0
        self.latencies: list[float] = []

    def install(self) -> None:
        cls = roofline_plot.RooflinePlot
        move, redraw, paint, apply = cls.mouseMoveEvent, cls.redraw, cls.paintEvent, cls._apply_pending
        probe = self

        def on_apply(plot):
            """A move that changes nothing (the batch snaps to whole numbers) is shown as
            soon as it has been read (the screen already shows it), or, while the paint of
            an earlier move's change is still to come, by that paint."""
            received, before = probe.received, plot.state.session
            apply(plot)
            if plot.state.session == before:
                if probe.built > probe.resolved:
                    probe.built = received
                else:
                    probe.resolve(received)

        def on_move(plot, event):
            probe.received += 1
            move(plot, event)

        def on_redraw(plot, *args, **kwargs):
            built = probe.received
            redraw(plot, *args, **kwargs)
            probe.built = built

        def on_paint(plot, event):
            paint(plot, event)
            probe.resolve(probe.built)

        # The probe wraps the widget class's own methods for the benchmark's run.
        cls.mouseMoveEvent = on_move  # type: ignore[method-assign]
        cls.redraw = on_redraw  # type: ignore[method-assign, assignment]
        cls.paintEvent = on_paint  # type: ignore[method-assign]
        cls._apply_pending = on_apply  # type: ignore[method-assign]

    def resolve(self, upto: int) -> None:
        """Moves before ``upto`` are on the screen now."""
        now = time.perf_counter()
        for i in range(self.resolved, min(upto, len(self.posted))):
            self.latencies.append(now - self.posted[i])
        self.resolved = max(self.resolved, upto)


def own_settings() -> QtCore.QSettings:
    """Settings of the run's own (the window's layout neither read from nor left in the user's)."""
    return QtCore.QSettings(os.path.join(os.environ["ROOFLINE_EXPLORER_DATA"], "bench.ini"),
                            QtCore.QSettings.Format.IniFormat)


def _event(plot, kind, pos, button, buttons):
    return QtGui.QMouseEvent(kind, QtCore.QPointF(pos), QtCore.QPointF(plot.mapToGlobal(pos.toPoint())),
                             button, buttons, QtCore.Qt.KeyboardModifier.NoModifier)


def drag(app, plot, probe: Probe, start: QtCore.QPointF, path, moves: int) -> None:
    """Press at ``start``, post ``moves`` moves along ``path(i)`` one frame apart, release."""
    probe.posted.clear()
    probe.latencies = []
    probe.received = probe.built = probe.resolved = 0
    app.sendEvent(plot, _event(plot, QtCore.QEvent.Type.MouseButtonPress, start, LEFT, LEFT))
    loop = QtCore.QEventLoop()
    timer = QtCore.QTimer(interval=round(FRAME_MS), timerType=QtCore.Qt.TimerType.PreciseTimer)

    def post() -> None:
        i = len(probe.posted)
        if i == moves:
            timer.stop()
            QtCore.QTimer.singleShot(100, loop.quit)  # the last move's paint
            return
        probe.posted.append(time.perf_counter())
        app.postEvent(plot, _event(plot, QtCore.QEvent.Type.MouseMove, path(i),
                                   QtCore.Qt.MouseButton.NoButton, LEFT))

    timer.timeout.connect(post)
    timer.start()
    loop.exec()
    app.sendEvent(plot, _event(plot, QtCore.QEvent.Type.MouseButtonRelease, path(moves - 1), LEFT,
                               QtCore.Qt.MouseButton.NoButton))
    app.processEvents()


def roof_drag(app, window, probe, moves):
    """Press on the primary device's bandwidth roof a quarter up the plot (wherever that
    device's roof runs), drag it up and down; a press that missed it is an error."""
    plot = window.chart
    primary = window.state.primary
    (y0, y1) = plot.chart.y_range
    y = y0 * (y1 / y0) ** 0.25
    start = QtCore.QPointF(plot.chart.x_px(y / primary.bandwidth_bytes_per_s), plot.chart.y_px(y))
    drag(app, plot, probe, start, lambda i: QtCore.QPointF(start.x(), start.y() - 60 * math.sin(i / 15)),
         moves)
    if not window.state.session.what_if(primary.id).active:
        raise SystemExit(f"the press at {start.x():.0f}, {start.y():.0f} missed {primary.name}'s "
                         "bandwidth roof")
    window.state.undo_stack.undo()


def star_drag(app, window, probe, moves):
    plot = window.chart
    [star] = [m for m in plot.chart.markers if m.kind == "step"]
    start = QtCore.QPointF(*star.center)
    drag(app, plot, probe, start, lambda i: QtCore.QPointF(start.x() + 120 * math.sin(i / 20), start.y()),
         moves)
    window.state.undo_stack.undo()


def state_and_repaint(window, steps: int = 200) -> list[float]:
    """The old measure: a what-if through the state and a synchronous repaint."""
    state, times = window.state, []
    state.begin_gesture("benchmark")
    for i in range(steps):
        start = time.perf_counter()
        state.set_what_if(DEVICES[0], WhatIf(bandwidth_scale=1.0 + 0.5 * math.sin(i / 10) ** 2))
        window.chart.repaint()
        times.append(time.perf_counter() - start)
    state.cancel_gesture()
    return times


def report(name: str, rounds: list[list[float]], first: bool = True) -> None:
    """Median over rounds of each round's p50, p95 and p99, the slowest move, and (a drag)
    the first move after the press, which pays what the press set up."""
    p50, p95, p99 = ([np.percentile(r, q) * 1e3 for r in rounds] for q in (50, 95, 99))
    count = sum(len(r) for r in rounds)
    firsts = [r[1] * 1e3 for r in rounds if len(r) > 1]  # move 0 is at the press: nothing moves
    print(f"{name}: p50 {statistics.median(p50):.1f} ms, p95 {statistics.median(p95):.1f} ms "
          f"(over rounds {min(p95):.1f}–{max(p95):.1f}), p99 {statistics.median(p99):.1f} ms "
          f"(over rounds {min(p99):.1f}–{max(p99):.1f}), slowest {max(max(r) for r in rounds) * 1e3:.1f} ms"
          + (f", first move {statistics.median(firsts):.1f} ms (up to {max(firsts):.1f})" if first else "")
          + f"; {count} moves. Goal: p99 and the first move <= {FRAME_MS:.1f} ms")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=240)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    probe = Probe()
    probe.install()
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv[:1])
    window = build_window(cli.parse_args(["--size", "1366x768"]), own_settings())
    window.show()
    results: dict[str, list[list[float]]] = {}
    for order, devices in (("", DEVICES), (", devices reversed", tuple(reversed(DEVICES)))):
        window.state.replace_session(Session(hardware=devices, model="llama-3-70b"), "benchmark")
        app.processEvents()
        settle()  # as the app does after its first paint
        for _ in range(args.rounds):
            roof_drag(app, window, probe, args.moves)
            results.setdefault(f"roof drag{order}", []).append(list(probe.latencies))
            star_drag(app, window, probe, args.moves)
            results.setdefault(f"star drag{order}", []).append(list(probe.latencies))
            if not order:
                results.setdefault("state + repaint (old measure)", []).append(state_and_repaint(window))
    print(f"motion-to-photon, llama-3-70b, {len(DEVICES)} devices, 1366x768, moves at 60 Hz, "
          f"{args.rounds} rounds:")
    for name, rounds in results.items():
        report(name, rounds, first=not name.startswith("state"))
    window.runs.shutdown()
    window.close()
    return 0


if __name__ == "__main__":
    from common import watched  # (run as a script: benchmarks/ is on the path)

    with watched():
        code = main()
    sys.exit(code)
