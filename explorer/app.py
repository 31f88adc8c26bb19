"""Entry point: subcommands run headless; without one, the window opens.

Qt is imported only on the window path, so ``roofline-explorer analyze`` works
on a machine without a display or without PySide6.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
from collections.abc import Mapping, Sequence

from explorer.commands import window_options

log = logging.getLogger("explorer")

# The Qt-free modules the window imports (``window_module``): the chart and the analysis
# (NumPy), the document, the scenes, the device card. A test holds the list to what a start
# imports before its first paint.
WINDOW_QT_FREE = ("explorer.chart.model", "explorer.chart.hits", "explorer.chart.svg", "explorer.document",
                  "explorer.document.files", "explorer.core.words.scenes", "explorer.core.words.why",
                  "explorer.core.analysis.drags", "explorer.core.analysis.engine_terms",
                  "explorer.core.hardware.device_sheet", "explorer.core.hardware.grouping",
                  "explorer.kernels.cpuinfo", "explorer.about", "explorer.commands.common",
                  "explorer.ui.panels.device_html", "explorer.chart.guesses")

# Libraries Qt's xcb plugin loads, and the Debian/Ubuntu packages that hold them. Without
# icccm or keysyms Qt aborts blaming libxcb-cursor0, which misleads.
_XCB_PACKAGES = {"xcb-cursor": "libxcb-cursor0", "xcb-icccm": "libxcb-icccm4",
                 "xcb-keysyms": "libxcb-keysyms1"}


def display_problem(environ: Mapping[str, str] | None = None) -> str | None:
    """Why a window cannot open here (with what to do), or None if it probably can."""
    environ = os.environ if environ is None else environ
    if not sys.platform.startswith("linux"):
        return None
    platform = environ.get("QT_QPA_PLATFORM", "")
    if platform and not platform.startswith("xcb"):
        return None
    if not environ.get("DISPLAY") and not environ.get("WAYLAND_DISPLAY"):
        return ("no display found (DISPLAY and WAYLAND_DISPLAY are unset). Run from a desktop "
                "session, use `roofline-explorer --screenshot out.png` to render offscreen, or "
                "use the headless commands (`roofline-explorer --help`).")
    if environ.get("DISPLAY") and not environ.get("WAYLAND_DISPLAY"):
        import ctypes.util

        missing = [pkg for lib, pkg in _XCB_PACKAGES.items() if ctypes.util.find_library(lib) is None]
        if missing:
            return (f"Qt's X11 plugin needs {', '.join(missing)}; on Debian or Ubuntu: "
                    f"sudo apt install {' '.join(missing)}")
    return None


def main(argv: Sequence[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else list(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if window_options.names_a_command(argv):
        from explorer.commands import main as cli  # every command's parser: not needed to open the window

        args = cli.parse_args(argv)
        if args.command is not None:
            sys.exit(cli.run_to_stdout(args))
    else:
        args = window_options.parse(argv)
    if args.screenshot:
        # Rendering to a file needs no screen.
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    else:
        problem = display_problem()
        if problem:
            print(f"roofline-explorer: cannot open a window: {problem}", file=sys.stderr)
            sys.exit(1)
    sys.exit(window_module().run_window(args))


def window_module():
    """``explorer.ui.application``, imported as a start of the window imports it.

    PySide6 looks for its ``__feature__`` switches in every module imported after it by
    reading the module's source (``inspect.getsource``, once per module: 30–40 ms of a
    0.4–0.6 s start for the 250 modules the window imports, measured on a 2-core VM). The
    window's Qt-free modules, NumPy among them, are imported first, so that only about a
    hundred (those that use Qt, and what they import) are read.
    """
    for name in WINDOW_QT_FREE:
        importlib.import_module(name)
    from explorer.ui import application

    return application
