"""The window on a real X server (run by ``test_keys_x11.py`` with DISPLAY set): a scene
played to its third step, then Ctrl+Z, Ctrl+Shift+Z, Ctrl+Z and Ctrl+Y pressed through
the XTest extension, as a keyboard's presses arrive. Prints one JSON line: the scene's
step and the batch before and after each key."""

from __future__ import annotations

import ctypes
import json
import sys
import time

from PySide6 import QtCore, QtGui, QtWidgets

from explorer.commands import main as cli
from explorer.ui.application import build_window

KEYS = (("Ctrl+Z", ("Control_L", "z")), ("Ctrl+Shift+Z", ("Control_L", "Shift_L", "z")),
        ("Ctrl+Z", ("Control_L", "z")), ("Ctrl+Y", ("Control_L", "y")))


def wait(app: QtCore.QCoreApplication, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)


def main(settings_path: str) -> int:
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv[:1])
    settings = QtCore.QSettings(settings_path, QtCore.QSettings.Format.IniFormat)
    window = build_window(cli.parse_args(["--size", "1366x768"]), settings)
    window.move(0, 0)
    window.show()
    window.activateWindow()
    for _ in range(500):  # until it is shown and has the keyboard
        app.processEvents()
        time.sleep(0.01)
        if QtGui.QGuiApplication.focusWindow() is window.windowHandle() and window.isActiveWindow():
            break
    else:
        print(json.dumps({"error": "the window never got the keyboard focus"}))
        return 1

    x11, xtst = ctypes.CDLL("libX11.so.6"), ctypes.CDLL("libXtst.so.6")
    x11.XOpenDisplay.restype = ctypes.c_void_p
    x11.XStringToKeysym.restype = ctypes.c_ulong
    x11.XStringToKeysym.argtypes = (ctypes.c_char_p,)
    x11.XKeysymToKeycode.argtypes = (ctypes.c_void_p, ctypes.c_ulong)
    x11.XSync.argtypes = (ctypes.c_void_p, ctypes.c_int)
    xtst.XTestFakeKeyEvent.argtypes = (ctypes.c_void_p, ctypes.c_uint, ctypes.c_int, ctypes.c_ulong)
    display = x11.XOpenDisplay(None)

    def press(names: tuple[str, ...]) -> None:
        codes = [x11.XKeysymToKeycode(display, x11.XStringToKeysym(n.encode())) for n in names]
        for code in codes:
            xtst.XTestFakeKeyEvent(display, code, 1, 0)
        for code in reversed(codes):
            xtst.XTestFakeKeyEvent(display, code, 0, 0)
        x11.XSync(display, 0)

    state, player = window.state, window.player
    player.start("decode-batching")
    window.act_next.trigger()
    window.act_next.trigger()
    wait(app, 0.3)
    seen: list[dict[str, object]] = [{"key": None, "step": player.step + 1, "batch": state.params.batch}]
    for label, names in KEYS:
        press(names)
        wait(app, 0.5)
        seen.append({"key": label, "step": player.step + 1, "batch": state.params.batch})
    print(json.dumps({"redo": [k.toString() for k in window.act_redo.shortcuts()], "seen": seen}))
    window.runs.shutdown()
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
