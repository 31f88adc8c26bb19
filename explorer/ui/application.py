"""Creating the QApplication and the window, the excepthook, and offscreen screenshots."""

from __future__ import annotations

import argparse
import logging
import sys
import traceback

from PySide6 import QtCore, QtWidgets

from explorer.core.analysis import analyze
from explorer.core.catalog import load_catalog
from explorer.core.datafile import DataFileError
from explorer.core.models import load_models
from explorer.core.registry import UnknownIdError
from explorer.core.workload import WorkloadParams
from explorer.ui.main_window import MainWindow

log = logging.getLogger(__name__)


def _install_excepthook() -> None:
    """Report unexpected errors in a dialog and keep running (a slot raising must not kill
    the app and lose the user's work)."""

    def hook(kind, value, tb):
        text = "".join(traceback.format_exception(kind, value, tb))
        log.error("unexpected error:\n%s", text)
        app = QtWidgets.QApplication.instance()
        if app is not None and not QtCore.QCoreApplication.closingDown():
            box = QtWidgets.QMessageBox(QtWidgets.QMessageBox.Icon.Critical, "Unexpected error",
                                        f"{kind.__name__}: {value}\n\nThe app keeps running; "
                                        "the details are in the log.")
            box.setDetailedText(text)
            box.exec()

    sys.excepthook = hook


def build_window(args: argparse.Namespace) -> MainWindow:
    """The window for the command-line choices (raises DataFileError / UnknownIdError)."""
    hardware = load_catalog()[args.hardware]
    model = load_models()[args.model]
    window = MainWindow(analyze(model, WorkloadParams(), hardware))
    if args.size:
        window.resize(*args.size)
    else:
        window.resize(1280, 800)
    return window


def run_window(args: argparse.Namespace) -> int:
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv[:1])
    app.setApplicationName("Roofline Explorer")
    app.setOrganizationName("roofline-explorer")
    try:
        window = build_window(args)
    except (DataFileError, UnknownIdError, FileNotFoundError) as exc:
        if args.screenshot:
            print(f"roofline-explorer: error: {exc}", file=sys.stderr)
        else:
            QtWidgets.QMessageBox.critical(None, "Roofline Explorer cannot start", str(exc))
        # The same statuses as the headless commands: 2 for bad input, 1 for broken data.
        return 2 if isinstance(exc, UnknownIdError) else 1
    if args.screenshot:
        return save_screenshot(window, args.screenshot)
    _install_excepthook()
    window.show()
    return app.exec()


def save_screenshot(window: QtWidgets.QWidget, path: str) -> int:
    window.show()
    QtWidgets.QApplication.processEvents()
    if not window.grab().save(path):
        print(f"roofline-explorer: error: could not write {path}", file=sys.stderr)
        return 1
    print(f"wrote {path} ({window.width()}×{window.height()})")
    return 0
