"""Entry point: subcommands run headless; without one, the window opens.

Qt is imported only on the window path, so ``roofline-explorer analyze`` works
on a machine without a display or without PySide6.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Sequence

from explorer import window_options

log = logging.getLogger("explorer")

# Libraries Qt's xcb plugin loads, and the Debian/Ubuntu packages that hold them. Without
# icccm or keysyms Qt aborts blaming libxcb-cursor0, which misleads.
_XCB_PACKAGES = {"xcb-cursor": "libxcb-cursor0", "xcb-icccm": "libxcb-icccm4",
                 "xcb-keysyms": "libxcb-keysyms1"}


def display_problem(environ: dict[str, str] | None = None) -> str | None:
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
        from explorer import cli  # every command's parser: not needed to open the window

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
    from explorer.ui.application import run_window

    sys.exit(run_window(args))
