"""A scene question played on a real X server from the keyboard alone (run by
``test_questions_ui.py`` with DISPLAY set): presentation mode, a guess typed with the
number keys and Enter, Page Down to reveal, Page Down to step on; the keys pressed through
the XTest extension, as a keyboard's (or a clicker's) presses arrive. Prints one JSON line."""

from __future__ import annotations

import ctypes
import json
import sys
import time

from PySide6 import QtCore, QtGui, QtWidgets

from explorer.commands import main as cli
from explorer.ui.application import build_window

SCENE = "predict-then-measure"


def wait(app: QtCore.QCoreApplication, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)


def main(settings_path: str) -> int:
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv[:1])
    settings = QtCore.QSettings(settings_path, QtCore.QSettings.Format.IniFormat)
    window = build_window(cli.parse_args(["--size", "1024x768"]), settings)
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

    def press(name: str) -> None:
        code = x11.XKeysymToKeycode(display, x11.XStringToKeysym(name.encode()))
        xtst.XTestFakeKeyEvent(display, code, 1, 0)
        xtst.XTestFakeKeyEvent(display, code, 0, 0)
        x11.XSync(display, 0)
        wait(app, 0.15)

    player = window.player
    player.start(SCENE, 4)  # at what batch does down_proj turn compute-bound?
    window.presentation.enter(full_screen=False)
    wait(app, 0.5)
    seen: dict[str, object] = {"caption": window.caption_bar.caption.text(),
                               "focus": type(QtWidgets.QApplication.focusWidget()).__name__}
    for name in ("3", "0", "0", "Return", "1", "k", "Return"):
        press(name)
    seen["guesses"] = list(window.state.session.guesses_for(f"{SCENE}/5"))
    press("Next")  # Page Down: reveals
    wait(app, 2.0)  # the answer's move
    seen.update(step=player.step + 1, revealed=player.revealed, result=window.question_bar.result.text())
    press("Next")  # Page Down again: the next step
    wait(app, 0.3)
    seen.update(then=player.step + 1, then_revealed=player.revealed)
    print(json.dumps(seen))
    window.runs.shutdown()
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
