"""The longest time the window's GUI thread stops handling events during each long operation
the window offers: how long a user who clicks, types or drags meanwhile waits.

A QTimer on the GUI thread is asked to tick every 5 ms (a precise timer); a tick comes late
when the GUI thread was busy, or waited for Python's lock that a worker held, or (on a busy
machine) was not given a core, so the longest gap between two ticks from the operation's
start, less the 5 ms asked for, is its longest stall. Each operation is started from the
event loop, the way a click starts it, in the window as the app builds it (1366×768), and
the loop runs until the operation has shown its result (the profile on the chart, the
layouts in the dialog's table, the file on disk…); the time that takes is its total. Each
runs ``--rounds`` times (3; calibrate once): the median of the rounds' longest stalls is
its figure, each round's printed beside it (a stall that other programs cause falls in one
round, not in most). The operations, at the sizes the issue names (``--quick``: small
ones, for a test):

- import a PyTorch profiler trace of 10, 50 and 250 MB (``profile_size.make_trace``);
- list the models of a (made) Hugging Face cache of 1,000 repositories;
- calibrate with the quick preset (the foreign-load check off, so that a busy machine does
  not make it wait), for at most two minutes (``--quick``: cancelled after 2 s);
- export the chart from the export dialog: PNG at its default width, PNG at its widest, PDF;
- the Parallel layouts dialog searching 1,024 and 16,384 devices (DeepSeek-V3 decoding, the
  preset with the most layouts; the dialog opened before the clock starts);
- a live kernel run (the stream suite, smoke sizes);
- open a large session: the largest trace's profile and 20 measurement files (each the live
  kernel run's; ``--quick``: 5).

The goal (issue 59): no stall over 100 ms. Offscreen, and on a real X server (Xvfb, Qt's xcb
platform) when Xvfb is here: ``--platform both`` runs this script again under Xvfb.

    python benchmarks/gui_stalls.py [--quick] [--rounds 3] [--platform offscreen|x11|both]
                                    [--only KIND,…] [--json FILE]

The figures depend on the machine and its load (``watched`` prints the load around the run).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from peak_memory import reset_peak, status_mb  # (beside this script)

TICK_S = 0.005  # the timer's interval
GOAL_S = 0.100  # the longest stall allowed
LIMIT_S = 900.0  # an operation still running after this long is stopped and said so
LAYOUTS_MODEL = "deepseek-v3"
CALIBRATE_LIMIT_S = 120.0  # a quick calibration of a busy 2-core machine takes many minutes


@dataclass
class Operation:
    """A long operation: ``start`` begins it (from the event loop, as a click would);
    ``done`` says when its result is shown; ``finish`` tidies up after it (untimed)."""

    name: str
    start: Callable[[], None]
    done: Callable[[], bool]
    finish: Callable[[], None] = lambda: None
    limit_s: float = LIMIT_S
    note: str = ""


@dataclass
class Row:
    name: str
    stall_s: float  # the longest gap between two ticks, less the interval
    ticks: int
    total_s: float
    finished: bool  # False: stopped at its limit
    note: str = ""
    at_s: float = 0.0  # when the longest stall began, from the start
    rounds: tuple[float, ...] = ()  # each round's longest stall (``over_rounds``)
    peak_mb: float | None = None  # the peak resident memory above the start (None: not read here)


def over_rounds(rows: list[Row]) -> Row:
    """One operation's rounds as one row: the median of their longest stalls, ticks and
    totals (a stall that comes from the machine's other programs, not from the GUI thread,
    falls in one round, not in most), with each round's longest stall kept."""
    stalls = [r.stall_s for r in rows]
    first = rows[0]
    return Row(first.name, statistics.median(stalls), round(statistics.median(r.ticks for r in rows)),
               statistics.median(r.total_s for r in rows), all(r.finished for r in rows), first.note,
               statistics.median(r.at_s for r in rows), tuple(stalls), _most(r.peak_mb for r in rows))


def _most(values) -> float | None:
    """The largest of the rounds' peaks (memory is what a round needs, not a chance delay)."""
    known = [v for v in values if v is not None]
    return max(known) if known else None


class Clock:
    """The ticks of one operation: the longest gap between two, from the first tick after
    it was started (the gap that holds the start counts: a click that starts it waits too)."""

    def __init__(self) -> None:
        self.last: float | None = None
        self.started: float | None = None
        self.ended: float | None = None
        self.longest, self.at, self.ticks = 0.0, 0.0, 0

    def tick(self, now: float) -> None:
        if self.started is not None and self.last is not None and now - self.last - TICK_S > self.longest:
            self.longest = now - self.last - TICK_S
            self.at = max(0.0, self.last - self.started)
        if self.started is not None:
            self.ticks += 1
        self.last = now


def stalls(operation: Operation) -> Row:
    """Run ``operation`` in a local event loop with a 5 ms timer ticking on the GUI thread."""
    from PySide6 import QtCore

    loop = QtCore.QEventLoop()
    clock = Clock()
    finished = False

    def tick() -> None:
        nonlocal finished
        now = time.perf_counter()
        clock.tick(now)
        if clock.started is None or clock.ended is not None:
            return
        if operation.done() or now - clock.started > operation.limit_s:
            finished = operation.done()
            clock.ended = now
            loop.quit()

    before = _resident()

    def begin() -> None:
        clock.started = time.perf_counter()
        operation.start()

    timer = QtCore.QTimer()
    timer.setTimerType(QtCore.Qt.TimerType.PreciseTimer)
    timer.setInterval(round(TICK_S * 1000))
    timer.timeout.connect(tick)
    timer.start()
    QtCore.QTimer.singleShot(20, begin)
    loop.exec()
    timer.stop()
    assert clock.started is not None and clock.ended is not None  # (the loop ends once it ended)
    peak = _peak_above(before)
    operation.finish()
    return Row(operation.name, clock.longest, clock.ticks, clock.ended - clock.started, finished,
               operation.note, clock.at, (), peak)


def _resident() -> float | None:
    """The resident memory now, with the peak set back to it (None where Linux's /proc
    cannot do that: no memory figure then)."""
    try:
        return status_mb("VmRSS") if reset_peak() else None
    except (OSError, KeyError):
        return None


def _peak_above(before: float | None) -> float | None:
    if before is None:
        return None
    return max(0.0, status_mb("VmHWM") - before)


def settle(seconds: float = 0.3) -> None:
    """Let the window handle what is pending (a paint, a queued report) between operations."""
    from PySide6 import QtCore

    loop = QtCore.QEventLoop()
    QtCore.QTimer.singleShot(round(seconds * 1000), loop.quit)
    loop.exec()


# -- the operations ------------------------------------------------------------------------------
def profile_import(window, trace: Path, label: str) -> Operation:
    """Into a new session (made, and drawn, before the clock starts)."""
    window.new_session()
    settle()
    return Operation(f"import profile, {label}", lambda: window.profile_import.start(trace),
                     lambda: not window.profile_import.running and window.state.profiles != ())


def fake_cache(folder: Path, repositories: int) -> Path:
    """A Hugging Face cache of ``repositories`` models, each a snapshot with a config.json."""
    config = json.dumps({"architectures": ["MistralForCausalLM"], "model_type": "mistral",
                         "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
                         "num_hidden_layers": 32, "num_key_value_heads": 8, "vocab_size": 32000,
                         "max_position_embeddings": 32768, "torch_dtype": "bfloat16", "head_dim": 128})
    for i in range(repositories):
        snapshot = folder / f"models--bench--model-{i:05d}" / "snapshots" / "r1"
        snapshot.mkdir(parents=True, exist_ok=True)
        (snapshot / "config.json").write_text(config)
    return folder


def cache_listing(window, folder: Path, repositories: int) -> Operation:
    menu = window.cached_models

    def start() -> None:
        menu.folder = lambda: folder
        menu.listing = None
        menu._read_for = None
        menu.menu.aboutToShow.emit()  # as opening the menu does

    return Operation(f"list cached models, {repositories:,} repositories", start,
                     lambda: menu.listing is not None and not window.runs.running("hf-cache"))


def calibrate(window, quick: bool) -> Operation:
    import explorer.runs as runs

    panel = window.kernel_panel
    real = runs.run
    began: list[float] = []

    def start() -> None:
        runs.run = functools.partial(real, load="off")  # (the load check off: a busy machine would wait)
        panel.preset.setCurrentText("quick")
        began.append(time.perf_counter())
        panel.calibrate()

    def done() -> bool:
        if quick and began and time.perf_counter() - began[0] > 2.0 and window.runs.running("kernels"):
            panel.cancel_button.click()
        return bool(began) and not window.runs.running("kernels")

    def finish() -> None:
        runs.run = real
        window.runs.cancel("kernels")
        while window.runs.running("kernels"):
            settle(0.05)

    return Operation("calibrate, quick preset", start, done, finish, limit_s=CALIBRATE_LIMIT_S,
                     note="cancelled after 2 s" if quick else f"at most {CALIBRATE_LIMIT_S:.0f} s")


def export(window, folder: Path, suffix: str, width: int | None, label: str) -> Operation:
    from explorer.ui.export_dialog import ExportDialog

    held: list = []
    path = folder / f"chart-{len(list(folder.glob('chart-*')))}.{suffix}"  # (a new file each time)

    def start() -> None:
        dialog = ExportDialog(window.state, path, window, theme=window.chart.theme.name, runs=window.runs)
        held.append(dialog)
        if width is not None:
            dialog.width_px.setValue(width)
        dialog.show()
        dialog.save_button.click()

    def finish() -> None:
        held[0].close()
        held[0].deleteLater()

    return Operation(f"export dialog, {label}", start, lambda: bool(held) and held[0].written is not None
                     and path.exists(), finish)


def layouts(window, devices: int) -> Operation:
    """DeepSeek-V3 decoding (an MoE model: the most layouts of the presets), the dialog
    opened on 8 devices before the clock starts, then asked for ``devices``."""
    from explorer.ui.layouts_dialog import LayoutsDialog

    window.state.set_model(LAYOUTS_MODEL)
    window.state.set_params(phase="decode")
    dialog = LayoutsDialog(window.state, window, window.runs)
    dialog.show()
    while dialog.searching:
        settle(0.05)
    settle(0.5)  # (its first paint, too, before the clock starts)
    wanted = f"of {devices:,} devices"

    def finish() -> None:
        dialog.close()
        dialog.deleteLater()

    return Operation(f"layouts search, {devices:,} devices", lambda: dialog.devices.setValue(devices),
                     lambda: wanted in dialog.summary.text() and not dialog.searching, finish,
                     note=LAYOUTS_MODEL)


def kernel_run(window) -> Operation:
    panel = window.kernel_panel
    began: list[float] = []

    def start() -> None:
        panel.preset.setCurrentText("smoke")
        for name, box in panel.suites.items():
            box.setChecked(name == "stream")
        began.append(time.perf_counter())
        panel.start()

    return Operation("live kernel run, stream (smoke)", start,
                     lambda: bool(began) and not window.runs.running("kernels"),
                     lambda: window.runs.cancel("kernels"))


def large_session(window, folder: Path, profiled: Path, copies: int) -> Path:
    """A session with the largest trace's profile (``profiled``, saved by its import) and
    ``copies`` measurement files, each the live kernel run's results."""
    from dataclasses import replace

    from explorer.core.model.session import load_session

    results = window.runs.results.get("kernels")
    paths = []
    for i in range(copies if results is not None else 0):
        paths.append(folder / f"run-{i:02d}.json")
        results.save(paths[-1])
    session = load_session(profiled, window.state.catalog, window.state.models)
    path = folder / "large-session.yaml"
    replace(session, results=tuple(str(p) for p in paths)).save(path)
    return path


def open_session(window, path: Path, label: str) -> Operation:
    """From a new session (made, and drawn, before the clock starts)."""
    window.new_session()
    settle()
    return Operation(f"open session, {label}", lambda: window.open_session(path),
                     lambda: window.session_path == path and window.state.profiles != ()
                     and not getattr(window, "opening_session", False))


# -- the run -----------------------------------------------------------------------------------
def build_window(folder: Path):
    from PySide6 import QtCore

    from explorer.commands import main as cli
    from explorer.ui.application import build_window as build

    os.environ["ROOFLINE_EXPLORER_DATA"] = str(folder / "data")
    settings = QtCore.QSettings(str(folder / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    args = argparse.Namespace(**{**vars(cli.parse_args([])), "size": (1366, 768)})
    window = build(args, settings)
    window.show()
    settle(1.0)
    return window


def operations(window, folder: Path, quick: bool) -> list[tuple[str, Callable[[], Operation]]]:
    """Each operation's kind and its maker, called when its turn comes (the session it opens
    is saved by the import before it)."""
    from profile_size import make_trace

    megabytes = (1, 3) if quick else (10, 50, 250)
    repositories = 50 if quick else 1000
    devices = (64, 256) if quick else (1024, 16384)
    out: list[tuple[str, Callable[[], Operation]]] = []
    profiled = folder / "profile-session.yaml"

    def traced(mb: float) -> Operation:
        trace = folder / f"trace-{mb:g}mb.pt.trace.json"
        if not trace.exists():
            make_trace(trace, mb)
        operation = profile_import(window, trace, f"{mb:g} MB trace")
        finish = operation.finish

        def saved() -> None:  # the largest trace's profile makes the large session
            finish()
            window.state.session.save(profiled)

        operation.finish = saved
        return operation

    out += [("import", functools.partial(traced, mb)) for mb in megabytes]
    hub = folder / f"hub-{repositories}"
    out.append(("cache", lambda: cache_listing(window, fake_cache(hub, repositories), repositories)))
    out.append(("calibrate", lambda: calibrate(window, quick)))
    widest = 1600 if quick else 16384
    for width, suffix, label in ((None, "png", "PNG, default width"), (widest, "png", f"PNG, {widest:,} px"),
                                 (None, "pdf", "PDF")):
        out.append(("export", functools.partial(export, window, folder, suffix, width, label)))
    out += [("layouts", functools.partial(layouts, window, n)) for n in devices]
    out.append(("kernel", lambda: kernel_run(window)))
    copies = 5 if quick else 20

    def session() -> Operation:
        path = large_session(window, folder, profiled, copies)
        return open_session(window, path, f"a profile and {copies} runs")

    out.append(("session", session))
    return out


def _quiet(kind, context, message: str) -> None:
    """Qt's messages, less the offscreen platform's note on every dialog shown."""
    if "propagateSizeHints" not in message:
        print(message, file=sys.stderr)


def run(quick: bool, only: str | None, rounds: int = 1) -> list[Row]:
    from PySide6 import QtCore, QtWidgets

    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(["roofline-explorer"])
    QtCore.qInstallMessageHandler(_quiet)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="gui-stalls-") as name:
        folder = Path(name)
        window = build_window(folder)
        try:
            for kind, make in operations(window, folder, quick):
                if only and kind not in only.split(","):
                    continue
                measured = []
                for _ in range(1 if kind == "calibrate" else rounds):  # (minutes of ticks: one round)
                    measured.append(stalls(make()))
                    settle()
                rows.append(over_rounds(measured))
        finally:
            window.runs.shutdown()
            window.close()
            app.processEvents()
    return rows


def table(rows: list[Row], platform: str) -> str:
    count = len(rows[0].rounds) if rows else 0
    lines = [f"GUI stalls ({platform}): the longest gap between 5 ms ticks on the GUI thread, less 5 ms "
             f"(median of {count} round{'s' if count != 1 else ''}, and each round's); "
             f"goal ≤ {GOAL_S * 1000:.0f} ms",
             f"{'operation':46s} {'longest stall':>14s} {'ticks':>7s} {'total':>9s} {'peak':>8s}  "
             "goal  rounds (ms)"]
    for r in rows:
        verdict = "met" if r.stall_s <= GOAL_S else "NOT MET"
        extra = "" if r.finished else " (stopped at its limit)"
        note = f" ({r.note})" if r.note else ""
        each = " ".join(f"{s * 1000:.0f}" for s in r.rounds)
        peak = f"{r.peak_mb:5.0f} MB" if r.peak_mb is not None else "       –"
        lines.append(f"{r.name:46s} {r.stall_s * 1000:11.0f} ms {r.ticks:7d} {r.total_s:8.2f} s {peak}  "
                     f"{verdict}  {each}{extra}{note}")
    return "\n".join(lines)


def x11(argv: list[str]) -> int:
    """This script again under an Xvfb of its own (Qt's xcb platform)."""
    from drag_x11 import missing, start_server

    why = missing()
    if why:
        print(f"GUI stalls on X11: not run: {why}")
        if "--json" in argv:  # (an earlier run's rows must not pass for this one's: doc_tables.py)
            Path(argv[argv.index("--json") + 1]).unlink(missing_ok=True)
        return 0
    server, display = start_server()
    try:
        env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb"}
        return subprocess.run([sys.executable, __file__, *argv, "--platform", "here"], env=env).returncode
    finally:
        server.terminate()
        server.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (seconds), for a test")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each operation (default 3)")
    parser.add_argument("--platform", choices=("offscreen", "x11", "both", "here"), default="both")
    parser.add_argument("--only", metavar="KIND[,KIND…]", help="only these: import, cache, calibrate, "
                        "export, layouts, kernel, session (session needs import before it)")
    parser.add_argument("--json", type=Path, help="also write the rows here, as JSON (one platform)")
    args = parser.parse_args(argv)
    passed = [*(["--quick"] if args.quick else []), *(["--only", args.only] if args.only else []),
              "--rounds", str(args.rounds)]
    if args.json and args.platform == "both":
        parser.error("--json needs one --platform")
    passed_json = [*passed, *(["--json", str(args.json)] if args.json else [])]
    if args.platform == "x11":
        return x11(passed_json)
    if args.platform == "offscreen":
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    if args.platform == "both":
        code = subprocess.run([sys.executable, __file__, *passed, "--platform", "offscreen"]).returncode
        return code or x11(passed)
    rows = run(args.quick, args.only, args.rounds)
    platform = os.environ.get("QT_QPA_PLATFORM", "default")
    print(table(rows, "X11, Xvfb" if platform == "xcb" else platform))
    if args.json:
        args.json.write_text(json.dumps([vars(r) for r in rows], indent=1))
    return 0


if __name__ == "__main__":
    from common import watched

    with watched():
        code = main()
    sys.exit(code)
