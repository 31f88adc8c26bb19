"""What the window's parts (the mixins ``WindowMenus``, ``WindowTools``, ``SessionFiles``,
``ModelConfigFiles`` and ``NarrowLayout``) use of ``MainWindow``: declared once here, for
the type checker, which sees a ``QMainWindow``; ``MainWindow`` sets and defines it. At run
time the class is empty and its base is ``object`` (``MainWindow`` adds ``QMainWindow``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6 import QtCore, QtGui, QtWidgets

if TYPE_CHECKING:
    from explorer.core.model.session import Session
    from explorer.document.files import Autosaver, RecentFiles, Recovery
    from explorer.runs import Jobs
    from explorer.state import AppState
    from explorer.ui.caption_bar import CaptionBar
    from explorer.ui.chart.roofline_plot import RooflinePlot
    from explorer.ui.lazy_panel import LazyPanel
    from explorer.ui.notice_bar import NoticeBar
    from explorer.ui.panels.details_panel import DetailsPanel
    from explorer.ui.panels.explain_panel import ExplainPanel
    from explorer.ui.panels.hardware_panel import HardwarePanel
    from explorer.ui.panels.kernel_panel import KernelPanel
    from explorer.ui.panels.workload_panel import WorkloadPanel
    from explorer.ui.presentation import Presentation
    from explorer.ui.profile_import import ProfileImport
    from explorer.ui.save_banner import SaveBanner
    from explorer.ui.scene_player import ScenePlayer

    _Base = QtWidgets.QMainWindow
else:
    _Base = object


class WindowHost(_Base):
    """The fields and methods of ``MainWindow`` its parts use (nothing here at run time)."""

    state: AppState
    settings: QtCore.QSettings
    session_path: Path | None
    runs: Jobs
    chart: RooflinePlot
    caption_bar: CaptionBar
    player: ScenePlayer
    notice: NoticeBar
    save_banner: SaveBanner
    presentation: Presentation
    hardware_panel: HardwarePanel
    workload_panel: WorkloadPanel
    kernel_lab: LazyPanel
    details_panel: DetailsPanel
    explain_panel: ExplainPanel
    scaling_panel: LazyPanel
    docks: dict[str, QtWidgets.QDockWidget]
    summary_label: QtWidgets.QLabel
    backend_label: QtWidgets.QLabel
    profile_import: ProfileImport
    recent: RecentFiles
    recovery: Recovery
    unchanged_session: Session
    autosaver: Autosaver
    recent_menu: QtWidgets.QMenu
    # The actions (``MainWindow._build_actions``, ``WindowTools``).
    act_new: QtGui.QAction
    act_open: QtGui.QAction
    act_save: QtGui.QAction
    act_save_as: QtGui.QAction
    act_quit: QtGui.QAction
    act_open_workload: QtGui.QAction
    act_open_config: QtGui.QAction
    act_import_profile: QtGui.QAction
    act_hide_profile: QtGui.QAction
    act_save_workload: QtGui.QAction
    act_export: QtGui.QAction
    act_copy: QtGui.QAction
    act_undo: QtGui.QAction
    act_redo: QtGui.QAction
    act_fit: QtGui.QAction
    act_reset: QtGui.QAction
    act_run: QtGui.QAction
    act_find: QtGui.QAction
    act_present: QtGui.QAction
    act_next: QtGui.QAction
    act_previous: QtGui.QAction
    act_stop_scene: QtGui.QAction
    act_lab: QtGui.QAction
    act_layouts: QtGui.QAction
    act_serving: QtGui.QAction
    act_energy: QtGui.QAction

    if TYPE_CHECKING:
        @property
        def kernel_panel(self) -> KernelPanel: ...

        def _action(self, text: str, slot: Callable[..., Any], shortcut: Any = None,
                    tip: str = "") -> QtGui.QAction: ...

        def _update_title(self, clean: bool | None = None) -> None: ...

        def _fill_recent(self) -> None: ...

        def _about(self) -> None: ...

        def set_theme(self, name: str, remember: bool = True) -> None: ...

        def open_session(self, path: str | Path) -> bool: ...

        def open_model_config(self, path: str | Path, name: str = "") -> bool: ...


def call_with(call: Callable[..., object], *args: object) -> Callable[[], None]:
    """A slot that takes nothing and calls ``call(*args)`` (an action made in a loop)."""
    def slot() -> None:
        call(*args)

    return slot
