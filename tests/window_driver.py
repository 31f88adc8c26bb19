"""The real window in a process of its own, driven the way a user would, for the crash
tests (tests/test_crash_recovery_window.py). Lines on stdout say what happened:

- ``asked`` when the window offers to restore a session; ``ANSWER`` says what the user
  answers: ``yes``, ``no`` or ``wait`` (the dialog stays open);
- ``ready <batch> <results> <points>`` once the window is up and the question answered;
- ``edit <batch> <time>`` for each edit, every ``EDIT_EVERY`` seconds (0: no edits);
- ``point <n>`` for each point of a kernel run started when ``RUN_KERNELS`` is set.

``CLOSE_AFTER`` seconds after ``ready`` the window is closed as a user closes it.
"""

import os
import sys
import time

from PySide6 import QtCore, QtWidgets

from explorer.commands import main as cli
from explorer.ui import application
from explorer.ui.main_window import MainWindow

ANSWER = os.environ.get("ANSWER", "no")
EDIT_EVERY = float(os.environ.get("EDIT_EVERY", "0"))
CLOSE_AFTER = float(os.environ.get("CLOSE_AFTER", "0"))
_question = QtWidgets.QMessageBox.question


def say(*words) -> None:
    print(*words, flush=True)


def question(parent, title, text, *args, **kwargs):
    say("asked")
    if ANSWER == "wait":
        return _question(parent, title, text, *args, **kwargs)
    buttons = QtWidgets.QMessageBox.StandardButton
    return buttons.Yes if ANSWER == "yes" else buttons.No


def begin(window: MainWindow) -> None:
    results = dict(window.state.results())
    say("ready", window.state.session.params.batch, len(results),
        sum(len(r.points) for r in results.values()))
    if EDIT_EVERY:
        def edit() -> None:
            batch = window.state.session.params.batch + 1
            window.state.set_params(batch=batch)
            say("edit", batch, time.time())

        timer = QtCore.QTimer(window, interval=int(EDIT_EVERY * 1000))
        timer.timeout.connect(edit)
        timer.start()
    if os.environ.get("RUN_KERNELS"):
        panel = window.kernel_panel
        for name, box in panel.suites.items():
            box.setChecked(name in ("stream", "intensity"))
        panel.preset.setCurrentText("quick")
        window.runs.sig_progress.connect(
            lambda job, p: p.point is not None and say("point", len(panel._live)))
        panel.start()
    if CLOSE_AFTER:
        QtCore.QTimer.singleShot(int(CLOSE_AFTER * 1000), window.close)


def main() -> int:
    QtWidgets.QMessageBox.question = staticmethod(question)
    offer_restore = MainWindow.offer_restore

    def offer_then_begin(window: MainWindow) -> None:  # the app calls it after the first paint
        offer_restore(window)
        begin(window)

    MainWindow.offer_restore = offer_then_begin
    return application.run_window(cli.parse_args([]))


if __name__ == "__main__":
    sys.exit(main())
