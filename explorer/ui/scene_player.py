"""Plays a guided scene: each step replaces the session (one undo step each), the caption
and step counter follow, and stopping brings back what was shown before the scene."""

from __future__ import annotations

from dataclasses import replace

from PySide6 import QtCore

from explorer.core.files.datafile import DataFileError
from explorer.core.model.session import Session
from explorer.core.words.scenes import Scene, SceneCatalog, open_scenes
from explorer.state import AppState


class ScenePlayer(QtCore.QObject):
    sig_changed = QtCore.Signal()  # a scene started, stepped or stopped

    def __init__(self, state: AppState, scenes: SceneCatalog | None = None, parent=None) -> None:
        super().__init__(parent)
        self.state = state
        self.error = ""  # why no scenes could be loaded
        if scenes is None:
            try:
                scenes = open_scenes(state.catalog, state.models)
            except DataFileError as exc:  # a broken scene file must not stop the app
                self.error = str(exc)
        self.scenes = scenes or {}
        self.scene: Scene | None = None
        self.step = 0
        self._before: Session | None = None

    @property
    def active(self) -> bool:
        return self.scene is not None

    def start(self, ident: str, step: int = 0) -> None:
        if self.scene is None:
            self._before = self.state.session
        self.scene = self.scenes[ident]
        self.go(step)

    def go(self, step: int) -> None:
        scene = self.scene
        if scene is None:
            return
        self.step = max(0, min(step, len(scene.steps) - 1))
        self.state.show_session(self._keeping_user_data(scene.session_at(self.step)),
                                f"scene step {self.step + 1}/{len(scene.steps)}")
        self.sig_changed.emit()

    def next(self) -> bool:
        """One step on; False at the last step (nothing changes)."""
        if self.scene is None or self.step + 1 >= len(self.scene.steps):
            return False
        self.go(self.step + 1)
        return True

    def previous(self) -> bool:
        if self.scene is None or self.step == 0:
            return False
        self.go(self.step - 1)
        return True

    def stop(self) -> None:
        """Leave the scene and show again what was shown before it (one undo step)."""
        if self.scene is None:
            return
        title, before = self.scene.title, self._before
        self.scene, self._before = None, None
        if before is not None:
            self.state.show_session(self._keeping_user_data(before), f"Left the scene {title}")
        self.sig_changed.emit()

    def _keeping_user_data(self, session: Session) -> Session:
        """``session`` with the user's measurements and custom stack as they are now: a
        scene sets what is shown, not the user's data."""
        current = self.state.session
        return replace(session, results=current.results, measured_roofs=current.measured_roofs,
                       custom_layers=current.custom_layers)

    def caption(self) -> str:
        return self.scene.caption_at(self.step, self.state.catalog, self.state.models) if self.scene else ""

    def topic(self) -> str | None:
        return self.scene.topic_at(self.step) if self.scene else None
