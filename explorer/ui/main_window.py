"""The main window: the chart in the centre, dockable panels, menus, toolbar, status bar,
sessions (open, save, recent, autosave and restore) and a clean shutdown."""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING, cast

from PySide6 import QtCore, QtGui, QtWidgets

from explorer import __version__, defaults
from explorer.about import version_text
from explorer.core.analysis.report_words import step_summary
from explorer.core.hardware.efficiency import Source, calibrated
from explorer.core.words.scenes import View
from explorer.document.files import Autosaver, RecentFiles, Recovery
from explorer.runs import KERNELS, Jobs
from explorer.state import AppState
from explorer.ui import theme as window_theme
from explorer.ui.caption_bar import CaptionBar, chart_with_caption
from explorer.ui.chart.roofline_plot import RooflinePlot
from explorer.ui.elided_label import ElidedLabel
from explorer.ui.follow import Follower
from explorer.ui.history_messages import say_what_undo_does
from explorer.ui.keys import redo_keys
from explorer.ui.lazy_panel import LazyPanel
from explorer.ui.model_config_files import ModelConfigFiles
from explorer.ui.narrow_layout import NarrowLayout
from explorer.ui.notice_bar import NoticeBar
from explorer.ui.panels.details_panel import DetailsPanel
from explorer.ui.panels.explain_panel import ExplainPanel
from explorer.ui.panels.hardware_panel import HardwarePanel
from explorer.ui.panels.workload_panel import WorkloadPanel
from explorer.ui.presentation import SCALE, Presentation
from explorer.ui.profile_import import ProfileImport
from explorer.ui.question_bar import QuestionBar
from explorer.ui.question_play import QuestionPlay
from explorer.ui.save_banner import SaveBanner
from explorer.ui.scene_player import ScenePlayer
from explorer.ui.scrolled import Scrolled
from explorer.ui.toolbar import build_toolbar, fixed_twin
from explorer.ui.window_menus import WindowMenus
from explorer.ui.window_sessions import SessionFiles
from explorer.ui.window_tools import WindowTools

if TYPE_CHECKING:
    from explorer.ui.panels.kernel_panel import KernelPanel
    from explorer.ui.panels.scaling_panel import ScalingPanel

AUTOSAVE_TICK_MS = 1000  # how often the autosaver looks whether a save is due


def _kernel_panel(state, runs):
    from explorer.ui.panels.kernel_panel import KernelPanel  # the kernel lab's suites and runner

    return KernelPanel(state, runs)


def _scaling_panel(state):
    from explorer.ui.panels.scaling_panel import ScalingPanel  # imports pyqtgraph

    return ScalingPanel(state)


class MainWindow(WindowMenus, WindowTools, SessionFiles, ModelConfigFiles, NarrowLayout,
                 QtWidgets.QMainWindow):
    def __init__(self, state: AppState, settings: QtCore.QSettings | None = None) -> None:
        super().__init__()
        self.state = state
        self.setAcceptDrops(True)  # a config.json or a session dropped on the window opens
        self.settings = settings or QtCore.QSettings()
        self.session_path: Path | None = None
        self.runs = Jobs(lambda: state.catalog, self)
        self._build_centre()
        self._build_docks()
        self._build_status_bar()
        self._start_autosave()
        self._build_actions()
        self._build_menus()
        self._build_toolbar()
        self.caption_bar.sig_previous.connect(self.player.previous)
        self.caption_bar.sig_next.connect(self.player.next)
        self.caption_bar.sig_stop.connect(self.player.stop)
        self.player.sig_changed.connect(self._on_scene_changed)
        self.set_theme(str(self.settings.value("theme", "light")))
        self._on_scene_changed()
        self._connect_messages()
        self.notice.add([*state.catalog.skipped, *self.player.skipped])
        self._follower = Follower(state, (state.sig_session_changed,), self._on_session_changed, self)
        state.undo_stack.cleanChanged.connect(self._update_title)
        self.runs.sig_started.connect(lambda _job, label: self.backend_label.setText(f"Kernel lab: {label}"))
        self.resize(1366, 768)
        self._restore_layout()
        self._update_title()
        self._on_session_changed()

    def _build_centre(self) -> None:
        """The chart with the scene's caption below it and the banners above it."""
        self.chart = RooflinePlot(self.state, self)
        self.caption_bar = CaptionBar()
        self.player = ScenePlayer(self.state, parent=self)
        central = chart_with_caption(self.chart, self.caption_bar)
        column = central.layout()
        assert isinstance(column, QtWidgets.QVBoxLayout)  # (``chart_with_caption``'s)
        self.notice = NoticeBar()  # the user's files that could not be loaded
        column.insertWidget(0, self.notice)
        self.save_banner = SaveBanner()  # autosave cannot write
        column.insertWidget(0, self.save_banner)
        self.question_bar = QuestionBar()  # a scene step's question, over its caption
        column.insertWidget(column.indexOf(self.caption_bar), self.question_bar)
        self.questions = QuestionPlay(self.state, self.player, self.runs, self.chart, self.question_bar, self)
        self.setCentralWidget(central)
        self.presentation = Presentation(self, self.chart, self.caption_bar, self.player)
        self.presentation.sig_toggled.connect(self.notice.set_presenting)
        self.presentation.sig_toggled.connect(lambda on: self.question_bar.set_scale(SCALE if on else 1.0))
        self.presentation.sig_toggled.connect(lambda _on: self.questions.refresh())  # keys to the guess box

    def _build_docks(self) -> None:
        """The panels, docked: hardware and details on the left, the rest tabbed on the right."""
        state = self.state
        self.hardware_panel = HardwarePanel(state, self.runs)
        self.workload_panel = WorkloadPanel(state)
        self.kernel_lab = LazyPanel(lambda: _kernel_panel(state, self.runs))  # on first show or use
        self.details_panel = DetailsPanel(state)
        self.explain_panel = ExplainPanel(state)
        self.scaling_panel = LazyPanel(lambda: _scaling_panel(state))  # pyqtgraph: on first show
        area = QtCore.Qt.DockWidgetArea
        left, right = area.LeftDockWidgetArea, area.RightDockWidgetArea
        self.docks = {
            "hardware": self._dock("Hardware", self.hardware_panel, left),
            "workload": self._dock("Workload", Scrolled(self.workload_panel), right),
            "kernels": self._dock("Kernel lab", self.kernel_lab, right),
            "details": self._dock("Details", self.details_panel, left),
            "explain": self._dock("Explain", self.explain_panel, right),
            "scaling": self._dock("Scaling laws", self.scaling_panel, right),
        }
        self.tabifyDockWidget(self.docks["workload"], self.docks["kernels"])
        self.tabifyDockWidget(self.docks["kernels"], self.docks["explain"])
        self.tabifyDockWidget(self.docks["explain"], self.docks["scaling"])
        self.scaling_panel.follow(self.docks["scaling"])
        self.kernel_lab.follow(self.docks["kernels"])
        self.explain_panel.follow(self.docks["explain"])
        self.docks["workload"].raise_()
        self._docks_sized = False  # sized to the window when first shown (unless restored)

    @property
    def kernel_panel(self) -> KernelPanel:
        """The Kernel lab, built now if it was not yet (it is built when first shown)."""
        return cast("KernelPanel", self.kernel_lab.panel)  # (``_kernel_panel`` builds it)

    def _build_status_bar(self) -> None:
        self.summary_label = ElidedLabel()  # ends in "…" where the bar is too narrow (its tooltip: whole)
        self.summary_label.setToolTip("The workload on the primary device (predicted)")
        self.backend_label = QtWidgets.QLabel(textFormat=QtCore.Qt.TextFormat.PlainText)
        self.statusBar().addWidget(self.summary_label, 1)
        # A message takes the summary's place (Qt hides it only when it was visible then: a
        # message said before the window showed would be drawn over it)
        self.statusBar().messageChanged.connect(lambda message: self.summary_label.setVisible(not message))
        self.statusBar().addPermanentWidget(self.backend_label)
        self.profile_import = ProfileImport(self, self.runs, self._show_profile, self._refuse_profile,
                                            lambda: self.presentation.active)

    def _start_autosave(self) -> None:
        """Recent files, crash recovery and the autosaver, which looks every tick whether a save
        is due."""
        self.recent = RecentFiles()
        self.recovery = Recovery()
        self.unchanged_session = self.state.session
        self.autosaver = Autosaver(self._write_autosave)
        self._autosave_timer = QtCore.QTimer(self, interval=AUTOSAVE_TICK_MS)
        self._autosave_timer.timeout.connect(self._autosave_tick)
        self._autosave_timer.start()

    def _connect_messages(self) -> None:
        """What the state and the banners say goes to the status bar or to a save dialog."""
        self.state.sig_message.connect(lambda text: self.statusBar().showMessage(text, 6000))
        say_what_undo_does(self.statusBar(), self.act_undo, self.act_redo, self.state.history)
        self.notice.sig_message.connect(lambda text: self.statusBar().showMessage(text, 6000))
        self.save_banner.sig_save_as.connect(self.save_session_as)
        self.save_banner.sig_other_folder.connect(self.autosave_into)

    def _dock(self, title: str, widget: QtWidgets.QWidget, area) -> QtWidgets.QDockWidget:
        dock = QtWidgets.QDockWidget(title, self)
        dock.setObjectName(f"dock-{title.lower().replace(' ', '-')}")
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    # -- actions ---------------------------------------------------------------------------------
    def _action(self, text: str, slot, shortcut=None, tip: str = "") -> QtGui.QAction:
        action = QtGui.QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QtGui.QKeySequence(shortcut))
        if tip:
            action.setToolTip(tip)
            action.setStatusTip(tip)
        action.triggered.connect(slot)
        return action

    def _build_actions(self) -> None:
        keys = QtGui.QKeySequence.StandardKey
        self.act_new = self._action("&New session", self.new_session, keys.New)
        self.act_open = self._action("&Open session…", self.open_session_dialog, keys.Open)
        self.act_save = self._action("&Save session", self.save_session, keys.Save)
        self.act_save_as = self._action("Save session &as…", self.save_session_as, keys.SaveAs)
        self.act_quit = self._action("&Quit", self.close, keys.Quit)
        self.act_open_workload = self._action("Open &workload…", self.open_workload_dialog,
                                              tip="Load a model and its parameters from a YAML file")
        self.act_open_config = self._action("Open &model config…", self.open_model_config_dialog,
                                            "Ctrl+Shift+M",
                                            tip="A Hugging Face config.json (Llama, Mistral, Mixtral, Qwen, "
                                                "Gemma, Phi-3, GPT-2): the model's shape, read offline. "
                                                "Dropping one on the window opens it too.")
        self.act_import_profile = self._action("&Import profile…", self.import_profile_dialog,
                                               tip="A profile of a real run (Nsight Compute CSV, PyTorch "
                                                   "profiler trace, rocprof-compute pmc_perf.csv): its "
                                                   "kernels beside the prediction, kept in the session. "
                                                   "Dropping one (or a rocprof-compute workload folder) "
                                                   "works too.")
        self.act_hide_profile = self._action("&Hide profile", lambda: self.state.hide_profile(),
                                             tip="Take the imported profile off the chart (undo brings it "
                                                 "back)")
        self.act_hide_profile.setEnabled(False)
        self.state.sig_results_changed.connect(
            lambda: self.act_hide_profile.setEnabled(bool(self.state.profiles)))
        self.act_save_workload = self._action("Save wor&kload as…", self.save_workload_dialog,
                                              tip="Save the model and its parameters as YAML")
        self.act_export = self._action("&Export chart…", self.export_dialog, "Ctrl+E",
                                       "PNG, SVG or PDF for slides (16:9 or 4:3)")
        self.act_copy = self._action("&Copy chart", self.copy_chart, "Ctrl+Shift+C",
                                     "Copy the chart to the clipboard as an image")
        self.act_undo = self.state.undo_stack.createUndoAction(self, "&Undo")
        self.act_undo.setShortcut(keys.Undo)
        self.act_redo = self.state.undo_stack.createRedoAction(self, "&Redo")
        self.act_redo.setShortcuts(redo_keys())
        self.act_fit = self._action("&Fit chart", self.chart.fit_view, "Ctrl+0",
                                    "Show every roof and point again after zooming or panning")
        self.act_reset = self._action("&Reset what-ifs", lambda: self.state.reset_what_ifs(), "Ctrl+Shift+R",
                                      "Put every dragged roof back on its datasheet value")
        self.act_run = self._action("&Run kernels", lambda: self.kernel_panel.start(), "Ctrl+R",
                                    "Run the Kernel lab's chosen suites")
        self.act_find = self._action("&Find device", self._find_device, keys.Find,
                                     "Jump to the Hardware panel's search field")
        self.act_present = self._action("&Presentation mode", self.presentation.toggle, "F5",
                                        "Full screen, large text, the clicker steps the scene; Esc leaves")
        self.act_next = self._action("&Next step", self.player.next, "Alt+Right",
                                     "The scene's next step (Right, Space or Page Down when presenting)")
        self.act_previous = self._action("&Previous step", self.player.previous, "Alt+Left",
                                         "The scene's previous step (Left or Page Up when presenting)")
        self.act_stop_scene = self._action("&Leave scene", self.player.stop, tip=(
            "Show again what was shown before the scene"))
        self._build_tool_actions()

    def _build_toolbar(self) -> None:
        undo, redo = fixed_twin(self.act_undo, "Undo", self), fixed_twin(self.act_redo, "Redo", self)
        build_toolbar(self, [self.act_open, self.act_save, undo, redo, self.act_fit, self.act_reset,
                             self.act_run, self.act_present])

    def _find_device(self) -> None:
        self.docks["hardware"].show()
        self.docks["hardware"].raise_()
        self.hardware_panel.search.setFocus()
        self.hardware_panel.search.selectAll()

    # -- scenes, presentation and theme -----------------------------------------------------------
    def _on_scene_changed(self) -> None:
        player = self.player
        scene = player.scene
        self.caption_bar.show_step(scene.title if scene else "", player.caption(), player.step,
                                   len(scene.steps) if scene else 0)
        for action in (self.act_previous, self.act_next, self.act_stop_scene):
            action.setEnabled(scene is not None)
        topic = player.topic()
        if topic:
            self.explain_panel.show_topic(topic)
        self._show_view(player.view())
        budget = player.scaling_budget()
        if budget is not None:  # the step's point is the scaling laws: their panel comes to the front
            self.docks["scaling"].show()
            self.docks["scaling"].raise_()
            cast("ScalingPanel", self.scaling_panel.panel).show_budget(budget)  # (``_scaling_panel``'s)

    def _show_view(self, view) -> None:
        """The window's own view of what a scene step names, brought forward (the serving
        chart is a modal dialog, the expected ops a slide's: those stay with the chart)."""
        if view == View.ENERGY:
            self.open_energy()
            self.activateWindow()  # the scene's keys stay with the window
        elif view == View.MEMORY:  # the memory bar, under the workload panel's totals
            self.docks["workload"].show()
            self.docks["workload"].raise_()

    def set_theme(self, name: str, remember: bool = True) -> None:
        """The window's colours: light, dark or high contrast (remembered between runs when
        chosen in the window; ``--theme`` on the command line is for that run only)."""
        if name not in defaults.THEMES:
            name = defaults.THEME
        self.chart.set_theme(name)
        window_theme.apply(self.chart.theme)  # docks, tables, toolbar, menus and dialogs too
        self.caption_bar.set_theme(self.chart.theme)
        self.question_bar.set_theme(self.chart.theme)
        if self.energy_dialog is not None:
            self.energy_dialog.set_theme(name)
        for action in self.theme_group.actions():
            action.setChecked(action.data() == name)
        if remember:
            self.settings.setValue("theme", name)

    # -- state -----------------------------------------------------------------------------------
    def _on_session_changed(self) -> None:
        summary = step_summary(self.state.analysis(), self.state.expected())
        self.summary_label.setText(summary)
        self.summary_label.setToolTip(f"The workload on the primary device (predicted): {summary}")  # (whole)
        if not self.runs.running(KERNELS):
            # the short name (the summary needs the room), the full one in its tooltip
            self.backend_label.setText(f"Primary: {self.state.primary.label}")
            self.backend_label.setToolTip(f"Primary device: {self.state.primary.name}")
        if self.state.session.params.efficiency == Source.CALIBRATED:  # (its files are read then)
            self.notice.add(calibrated()[1])  # a calibration file that cannot be read, named once
        self._update_title()
        self.autosaver.changed()

    def _update_title(self, clean: bool | None = None) -> None:
        """``clean`` comes with the undo stack's signal (the stack may be going away)."""
        if clean is None:
            clean = self.state.undo_stack.isClean()
        name = self.session_path.name if self.session_path else "untitled session"
        dirty = "" if clean else " *"
        self.setWindowTitle(f"{name}{dirty} — Roofline Explorer")

    # -- layout and closing ----------------------------------------------------------------------
    def _restore_layout(self) -> None:
        # Hand-edited or foreign settings hold anything: restore only what Qt can read.
        geometry = self.settings.value("geometry")
        if isinstance(geometry, QtCore.QByteArray | bytes):
            self.restoreGeometry(geometry)
        layout = self.settings.value("window-state")
        if isinstance(layout, QtCore.QByteArray | bytes):
            self._docks_sized = self.restoreState(layout)

    def showEvent(self, event: QtGui.QShowEvent) -> None:
        super().showEvent(event)
        if not self._docks_sized:  # the chart gets at least half of the width
            self._docks_sized = True
            width = self.width()
            self.resizeDocks([self.docks["hardware"], self.docks["workload"]],
                             [max(200, round(0.2 * width)), max(290, round(0.27 * width))],
                             QtCore.Qt.Orientation.Horizontal)
        self.fit_docks_to_width()
        self.caption_bar.refit()

    def resizeEvent(self, event: QtGui.QResizeEvent) -> None:
        super().resizeEvent(event)
        if self.isVisible():
            self.fit_docks_to_width()
        self.caption_bar.refit()  # presenting: the caption keeps to its share of the height

    def closeEvent(self, event: QtGui.QCloseEvent) -> None:
        if not self.state.undo_stack.isClean() and self.session_path is not None:
            answer = QtWidgets.QMessageBox.question(
                self, "Save changes?", f"Save the changes to {self.session_path.name}?",
                QtWidgets.QMessageBox.StandardButton.Save | QtWidgets.QMessageBox.StandardButton.Discard
                | QtWidgets.QMessageBox.StandardButton.Cancel)
            if answer == QtWidgets.QMessageBox.StandardButton.Cancel:
                event.ignore()
                return
            if answer == QtWidgets.QMessageBox.StandardButton.Save and not self.save_session():
                event.ignore()
                return
        self.presentation.leave()  # the saved layout is the window's, not the presentation's
        self.runs.shutdown()
        self._autosave_timer.stop()
        self.settings.setValue("geometry", self.saveGeometry())
        self.settings.setValue("window-state", self.saveState())
        self.recovery.release()  # a clean exit: nothing to recover
        event.accept()

    def _about(self) -> None:
        QtWidgets.QMessageBox.about(
            self, "About Roofline Explorer",
            f"<b>Roofline Explorer {__version__}</b><p>Why deep learning runs on GPUs: where a "
            "workload sits between a machine's two ceilings, peak arithmetic and memory "
            "bandwidth.</p><p>Hollow points are predictions: FLOPs and bytes from the model's "
            "configuration, time = max(FLOPs / peak, bytes / bandwidth). Filled points are "
            "measured in the Kernel lab. Peaks are dense (no sparsity) datasheet figures; "
            "dashed roofs are derived or what-if values, not published ones.</p>"
            f"<p>{html.escape(version_text())}</p>")
