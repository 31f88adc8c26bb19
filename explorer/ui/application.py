"""Creating the QApplication and the window, the excepthook, and offscreen screenshots."""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sys
import traceback
from typing import cast

from PySide6 import QtCore, QtGui, QtWidgets

from explorer.core.files.atomic import write_bytes_atomic
from explorer.core.files.datafile import DataFileError
from explorer.core.files.parse_cache import parse_cache
from explorer.core.files.registry import UnknownIdError
from explorer.core.hardware.catalog import open_catalogue
from explorer.core.model.hf_config import chosen_model, stored_precision
from explorer.core.model.parameters import PARAMETERS
from explorer.core.model.presets import load_models
from explorer.core.model.session import Session, model_choice
from explorer.core.model.workload import WorkloadParams
from explorer.core.words.scenes import StepError, fill_every_step
from explorer.paths import resource_path, user_file
from explorer.state import AppState
from explorer.ui.main_window import MainWindow

log = logging.getLogger(__name__)
PARSE_CACHE = ("cache", "parsed-yaml.bin")  # in the user's data folder (``parse_cache``)


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


def build_state(args: argparse.Namespace) -> tuple[AppState, list]:
    """The state for the command-line choices (raises DataFileError / UnknownIdError), and
    the user's files it had to skip."""
    _check_choices(args)
    catalog = open_catalogue()  # a broken file of the user's is skipped, not fatal
    models = load_models()
    if getattr(args, "session", None):
        state = AppState(catalog, models)
        return state, state.open_session(args.session)
    ids = tuple(args.hardware.split(",")) if isinstance(args.hardware, str) else tuple(args.hardware)
    for ident in ids:
        catalog[ident]  # unknown ids fail here, with close matches
    spec = chosen_model(models, args.model, getattr(args, "model_config", None))
    params = WorkloadParams.from_options(args)
    if getattr(spec, "config", "") and params.dtype == WorkloadParams().dtype:  # a config.json's; no --dtype
        params = stored_precision(params, spec)
    session = Session(hardware=ids, params=params, **model_choice(spec))
    return AppState(catalog, models, session), []


def _check_choices(args: argparse.Namespace) -> None:
    """Refuse options that would be ignored: a step with no scene, and workload options
    beside a session (it holds its own)."""
    if getattr(args, "step", None) is not None and not getattr(args, "scene", None):
        raise UsageError("--step chooses a step of --scene ID: name the scene too")
    if getattr(args, "session", None):
        given = [p.flag for p in PARAMETERS if getattr(args, p.name, p.default) != p.default]
        if given:
            raise UsageError(f"{', '.join(given)} would be ignored: --session opens the workload the "
                             "session holds (open it, then change the workload in the window)")


def fills_on_the_gui_thread() -> None:
    """Keep Qt's raster fills and blends on the GUI thread. Qt 6 splits each one taller than
    about 96 rows across a pool of threads and waits for them; the window's fills are
    widgets' (a scroll bar's groove, a panel's background), a few microseconds of work each,
    and each split costs the GUI thread a sleep and a wake-up. Measured offscreen on a 2-core
    VM (four devices, 1366×768): a full repaint of the window took 6.7–10.2 ms with the pool
    and 2.3–4.4 ms without; a step of a window resize (layouts, the chart's, the paint)
    22–30 ms and 17–25 ms, 2.6 ms less in the median of six pairs; drags and the first paint
    did not change (other machines not measured). Qt reads the variable when it
    first wants its pool, so this runs before the window's first paint; set by the user, it
    stays set (Qt asks only whether it is)."""
    os.environ.setdefault("QT_NO_GUI_THREADPOOL", "1")


def build_window(args: argparse.Namespace, settings: QtCore.QSettings | None = None) -> MainWindow:
    fills_on_the_gui_thread()
    with parse_cache(user_file(*PARSE_CACHE)):  # the data files are the same at every start
        state, skipped = build_state(args)
        window = MainWindow(state, settings)
    window.notice.add(skipped)
    if args.size:
        window.resize(*args.size)
    if getattr(args, "theme", None):
        window.set_theme(args.theme, remember=False)  # this run's: a screenshot leaves no trace
    if getattr(args, "scene", None):
        try:
            scene = window.player.scenes[args.scene]  # an unknown id names the close ones
            step = 1 if getattr(args, "step", None) is None else args.step
            if not 1 <= step <= len(scene.steps):
                raise UsageError(f"the scene {args.scene} has steps 1 to {len(scene.steps)}, not {step}")
            fill_every_step(scene, state.catalog, state.models)  # (the player fills it in on start)
        except (UnknownIdError, UsageError, StepError) as exc:
            window.runs.shutdown()  # nothing is left running behind the refusal
            window.deleteLater()
            if isinstance(exc, StepError):
                raise UsageError(f"the scene cannot be played: {exc}") from None
            raise
        window.player.start(args.scene, step - 1)
    if getattr(args, "presentation", False):
        window.presentation.enter(full_screen=not args.size)
    return window


class UsageError(ValueError):
    """Command-line choices the window cannot show (a scene's step that does not exist)."""


# Qt's offscreen platform (screenshots, CI) warns of what it cannot do to a window; nothing
# is wrong, and the line hid real messages.
HARMLESS = ("This plugin does not support propagateSizeHints()", "This plugin does not support raise()")


def _qt_message(kind, context, message: str) -> None:
    if message not in HARMLESS:
        print(message, file=sys.stderr)


def run_window(args: argparse.Namespace) -> int:
    QtCore.qInstallMessageHandler(_qt_message)
    app = cast(QtWidgets.QApplication,  # (instance() is the QApplication made here or before)
               QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv[:1]))
    app.setApplicationName("Roofline Explorer")
    app.setOrganizationName("roofline-explorer")
    app.setDesktopFileName("roofline-explorer")  # Wayland finds the menu entry's icon by it
    app.setWindowIcon(QtGui.QIcon(str(resource_path("icons", "roofline-explorer.svg"))))
    try:
        # A screenshot must not depend on, or change, the user's saved window layout.
        settings = QtCore.QSettings(str(user_file("screenshot.ini")), QtCore.QSettings.Format.IniFormat) \
            if args.screenshot else None
        window = build_window(args, settings)
    except (DataFileError, UnknownIdError, FileNotFoundError, ValueError) as exc:
        if args.screenshot:
            print(f"roofline-explorer: error: {exc}", file=sys.stderr)
        else:
            QtWidgets.QMessageBox.critical(None, "Roofline Explorer cannot start", str(exc))
        # The same statuses as the headless commands: 2 for bad input, 1 for broken data.
        return 1 if isinstance(exc, DataFileError | FileNotFoundError) else 2
    if args.screenshot:
        code = save_screenshot(window, args.screenshot)
        window.runs.shutdown()
        return code
    _install_excepthook()
    window.show()
    # After the first paint: look for a GPU (importing CuPy takes seconds) and offer to
    # restore a session an unclean exit left behind.
    QtCore.QTimer.singleShot(0, window.hardware_panel.probe_gpu)
    QtCore.QTimer.singleShot(0, window.offer_restore)
    QtCore.QTimer.singleShot(0, settle)
    return app.exec()


def settle() -> None:
    """Once the window is up: move every object alive now (catalogue, models, widgets'
    wrappers, about 56,000 of them) out of the garbage collector's sight. They live as long
    as the app, and a full collection that walks them takes about 45 ms, a visible stutter
    in the middle of a drag; frozen, it takes well under a millisecond."""
    gc.collect()
    gc.freeze()


def save_screenshot(window: QtWidgets.QWidget, path: str) -> int:
    from explorer.ui.chart.export import png_bytes  # (not at start-up: exports are rare)

    window.show()
    QtWidgets.QApplication.processEvents()
    try:
        write_bytes_atomic(path, png_bytes(window.grab().toImage()))
    except (OSError, ValueError) as exc:
        print(f"roofline-explorer: error: could not write {path}: {getattr(exc, 'strerror', None) or exc}",
              file=sys.stderr)
        return 1
    print(f"wrote {path} ({window.width()}×{window.height()})")
    return 0
