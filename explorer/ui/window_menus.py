"""The main window's menu bar: File, Edit, View (docks, compute roofs, theme), Scenes,
Kernels and Help, built from the window's actions (a mixin of ``MainWindow``)."""

from __future__ import annotations

from PySide6 import QtGui, QtWidgets

from explorer import defaults
from explorer.ui.cached_models_menu import CachedModelsMenu
from explorer.ui.shortcuts_dialog import ShortcutsDialog
from explorer.ui.window_host import WindowHost, call_with


class WindowMenus(WindowHost):
    """Menus for a window that has the actions (``act_*``), ``docks``, ``player``,
    ``state``, ``runs``, ``open_model_config``, ``_action``, ``_fill_recent``, ``set_theme``
    and ``_about``."""

    def _build_menus(self) -> None:
        bar = self.menuBar()
        self._build_file_menu(bar)
        edit = bar.addMenu("&Edit")
        edit.addAction(self.act_undo)
        edit.addAction(self.act_redo)
        edit.addSeparator()
        edit.addAction(self.act_find)
        self._build_view_menu(bar)
        self._build_scenes_menu(bar)
        kernels = bar.addMenu("&Kernels")
        kernels.addAction(self.act_run)
        help_menu = bar.addMenu("&Help")
        help_menu.addAction(self._action("&Keyboard and mouse…", lambda: ShortcutsDialog(self).exec(), "F1",
                                         "Every shortcut and what the chart does with the mouse"))
        help_menu.addAction(self._action("&About Roofline Explorer", self._about))

    def _build_file_menu(self, bar: QtWidgets.QMenuBar) -> None:
        file_menu = bar.addMenu("&File")
        for action in (self.act_new, self.act_open):
            file_menu.addAction(action)
        self.recent_menu = file_menu.addMenu("Open &recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        for action in (self.act_save, self.act_save_as):
            file_menu.addAction(action)
        file_menu.addSeparator()
        file_menu.addAction(self.act_open_workload)
        file_menu.addAction(self.act_save_workload)
        file_menu.addAction(self.act_open_config)
        self.cached_menu = file_menu.addMenu("Models on this &machine")
        self.cached_menu.setToolTip("The models in this machine's Hugging Face cache (their config.json) "
                                    "and the GGUF files of LM Studio and Ollama, read offline, in the "
                                    "background")
        self.cached_models = CachedModelsMenu(self.cached_menu, self.runs, self.open_model_config,
                                              taken=list(self.state.models))
        compare = self.workload_panel.compare_box  # it lists the read's hf- and gguf- ids too
        self.cached_models.sig_listed.connect(compare.show_listed)
        compare.sig_opening.connect(self.cached_models.refresh)
        file_menu.addAction(self.act_import_profile)
        file_menu.addAction(self.act_hide_profile)
        file_menu.addSeparator()
        file_menu.addAction(self.act_export)
        file_menu.addAction(self.act_copy)
        file_menu.addSeparator()
        file_menu.addAction(self.act_quit)

    def _build_view_menu(self, bar: QtWidgets.QMenuBar) -> None:
        view = bar.addMenu("&View")
        view.addAction(self.act_fit)
        view.addAction(self.act_reset)
        view.addAction(self.act_layouts)
        view.addAction(self.act_serving)
        view.addAction(self.act_energy)
        self.roofs_menu = view.addMenu("Compute &roofs")
        self.roofs_menu.aboutToShow.connect(self._fill_roofs_menu)
        view.addSeparator()
        for dock in self.docks.values():
            view.addAction(dock.toggleViewAction())
        view.addSeparator()
        self.theme_menu = view.addMenu("&Theme")
        self.theme_group = QtGui.QActionGroup(self)
        for name, text in defaults.THEMES.items():
            action = self.theme_menu.addAction(text, call_with(self.set_theme, name))
            action.setCheckable(True)
            action.setData(name)
            self.theme_group.addAction(action)
        view.addAction(self.act_present)

    def _build_scenes_menu(self, bar: QtWidgets.QMenuBar) -> None:
        """Every scene (filled in when the menu first opens: the shipped scenes are read
        then, not at start-up), the design lab and the stepping actions."""
        scenes = self.scenes_menu = bar.addMenu("&Scenes")
        scenes.setToolTipsVisible(True)
        scenes.aboutToShow.connect(self.fill_scenes_menu)
        scenes.addSeparator()
        scenes.addAction(self.act_lab)
        scenes.addSeparator()
        for action in (self.act_previous, self.act_next, self.act_stop_scene):
            scenes.addAction(action)

    def fill_scenes_menu(self) -> None:
        """Put every scene above the design lab, once (a broken scenes file says so,
        disabled, rather than leaving the menu silently short)."""
        menu = self.scenes_menu
        if menu.property("filled"):
            return
        menu.setProperty("filled", True)
        first = menu.actions()[0]
        for scene in self.player.scenes.values():
            action = QtGui.QAction(scene.title, menu)
            action.triggered.connect(lambda _checked=False, ident=scene.id: self.player.start(ident))
            action.setToolTip(scene.summary)
            action.setStatusTip(scene.summary)
            menu.insertAction(first, action)
        if self.player.error:
            broken = QtGui.QAction("Scenes could not be loaded (see the tooltip)", menu)
            broken.setEnabled(False)
            broken.setToolTip(self.player.error)
            broken.setStatusTip(self.player.error)
            menu.insertAction(first, broken)

    def _fill_roofs_menu(self) -> None:
        """Which precisions' compute roofs are drawn: automatic (the workload's and fp32) or
        a chosen set."""
        from explorer.core.units import PRECISIONS

        menu, chosen = self.roofs_menu, self.state.session.precisions
        menu.clear()
        auto = menu.addAction("Automatic: the workload's precision and fp32")
        auto.setCheckable(True)
        auto.setChecked(not chosen)
        auto.triggered.connect(lambda: self.state.set_precisions(()))
        menu.addSeparator()
        shown = chosen or tuple(dict.fromkeys(
            (self.state.analysis().roofs.matrix.precision, "fp32")))
        for precision in PRECISIONS:
            action = menu.addAction(precision)
            action.setCheckable(True)
            action.setChecked(precision in shown)
            action.toggled.connect(lambda on, p=precision, shown=shown: self.state.set_precisions(
                tuple(q for q in PRECISIONS if (q in shown and q != p) or (q == p and on)) or ("fp32",)))
