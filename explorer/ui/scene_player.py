"""Plays a guided scene: each step replaces the session (one undo step each), the caption
and step counter follow, and stopping brings back what was shown before the scene.

The caption always describes what is shown: when the session changes otherwise (undo,
redo, an edit), the player follows it to the step that shows it, leaves the scene when
undo went back to before it, and otherwise says the chart has changed since the step."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from PySide6 import QtCore

from explorer.core.files.datafile import DataFileError
from explorer.core.model.session import Session
from explorer.core.words.scenes import (
    Scene,
    SceneCatalog,
    StepError,
    View,
    fill_every_step,
    load_scenes,
    merged,
    topic_ids,
    user_scenes,
)
from explorer.state import AppState


class ScenePlayer(QtCore.QObject):
    sig_changed = QtCore.Signal()  # a scene started, stepped or stopped

    def __init__(self, state: AppState, scenes: SceneCatalog | None = None, parent=None) -> None:
        super().__init__(parent)
        self.state = state
        self.error = ""  # why the shipped scenes could not be loaded
        self._scenes: Mapping[str, Scene] | None = scenes
        self._mine: list[Scene] = []  # the user's own, read at start: a broken one is named at once
        self.skipped = list(getattr(scenes, "skipped", ()))
        self._topics: set[str] = set()
        if scenes is None:
            try:
                self._topics = topic_ids(state.catalog, state.models)
                self._mine, self.skipped = user_scenes(state.catalog, state.models, self._topics)
            except DataFileError as exc:  # a broken topics file must not stop the app
                self.error = str(exc)
        self.scene: Scene | None = None
        self.step = 0
        self.changed = False  # the session shown is none of the scene's steps
        self._before: Session | None = None
        self._steps: list[Session] = []  # each step's session, user data left out
        self._applying = False
        self.revealed = False  # the step's question has been answered (a step without one: unused)
        self.before_next: Callable[[], bool] | None = None  # True: it used "next" (a question revealed)
        state.sig_session_changed.connect(self._follow)

    @property
    def scenes(self) -> Mapping[str, Scene]:
        """Every scene by id: the shipped ones read when first asked for (the Scenes menu
        opened, a scene started; not at start-up), their captions filled in when their
        scene starts; the user's own in their place."""
        if self._scenes is None:
            shipped: Mapping[str, Scene] = {}
            if not self.error:
                try:
                    shipped = load_scenes(self.state.catalog, self.state.models, self._topics, fill=False)
                except DataFileError as exc:  # a broken scene file must not stop the app
                    self.error = str(exc)
            self._scenes = merged(shipped, self._mine, self.skipped)
        return self._scenes

    @scenes.setter
    def scenes(self, scenes: Mapping[str, Scene]) -> None:
        self._scenes = scenes

    @property
    def active(self) -> bool:
        return self.scene is not None

    def start(self, ident: str, step: int = 0) -> bool:
        """Play scene ``ident`` from ``step``; False (and a message saying why) where one of
        its steps cannot be shown with the devices loaded (a user's file replacing a
        shipped device can take away what a caption names)."""
        try:
            fill_every_step(self.scenes[ident], self.state.catalog, self.state.models)
        except StepError as exc:
            self.state.sig_message.emit(f"The scene cannot be played: {exc}")
            return False
        if self.scene is None:
            self._before = self.state.session
        self.scene = self.scenes[ident]
        self._steps = [_shown(self.scene.session_at(i)) for i in range(len(self.scene.steps))]
        self.go(step)
        return True

    def go(self, step: int) -> None:
        scene = self.scene
        if scene is None:
            return
        self.step = max(0, min(step, len(scene.steps) - 1))
        self.changed, self.revealed = False, False
        self._applying = True
        try:
            self.state.show_session(self._keeping_user_data(scene.session_at(self.step)),
                                    f"scene step {self.step + 1}/{len(scene.steps)}")
        finally:
            self._applying = False
        self.sig_changed.emit()

    def _follow(self) -> None:
        """The session changed other than by a step (see the module's note)."""
        if self.scene is None or self._applying:
            return
        shown = _shown(self.state.session)
        if shown in self._steps:
            step = self._steps.index(shown) if self._steps[self.step] != shown else self.step
            if (step, self.changed) != (self.step, False):
                self.step, self.changed = step, False
                self.sig_changed.emit()
        elif self._before is not None and shown == _shown(self._before):  # undone to before the scene
            self.scene, self._before, self.changed = None, None, False
            self.sig_changed.emit()
        elif not self.changed:
            self.changed = True
            self.sig_changed.emit()

    def next(self) -> bool:
        """One step on (a question is revealed first); False at the last step (nothing changes)."""
        if self.before_next is not None and self.before_next():
            return True
        if self.scene is None or self.step + 1 >= len(self.scene.steps):
            return False
        self.go(self.step + 1)
        return True

    def previous(self) -> bool:
        if self.scene is None or self.step == 0:
            return False
        self.go(self.step - 1)
        return True

    def reveal(self) -> None:
        """The step's question is answered: its caption is shown."""
        if self.scene is not None and not self.revealed:
            self.revealed = True
            self.sig_changed.emit()

    def stop(self) -> None:
        """Leave the scene and show again what was shown before it (one undo step)."""
        if self.scene is None:
            return
        title, before = self.scene.title, self._before
        self.scene, self._before, self.changed = None, None, False
        if before is not None:
            self.state.show_session(self._keeping_user_data(before), f"Left the scene {title}")
        self.sig_changed.emit()

    def _keeping_user_data(self, session: Session) -> Session:
        """``session`` with the user's measurements and custom stack as they are now: a
        scene sets what is shown, not the user's data."""
        current = self.state.session
        return replace(session, results=current.results, measured_roofs=current.measured_roofs,
                       custom_layers=current.custom_layers, guesses=current.guesses)

    def caption(self) -> str:
        if self.scene is None:
            return ""
        if self.changed:
            return (f"The chart has changed since step {self.step + 1}: its caption no longer describes "
                    "it. Undo to go back, or step on.")
        question = self.scene.steps[self.step].question
        if question is not None and not self.revealed:  # the caption would give the answer away
            return f"Question: {question.ask}"
        return self.scene.caption_at(self.step, self.state.catalog, self.state.models)

    def topic(self) -> str | None:
        return self.scene.topic_at(self.step) if self.scene else None

    def view(self) -> View | None:
        """The picture the step names (``Step.view``; None: no scene)."""
        return self.scene.view_at(self.step) if self.scene else None

    def scaling_budget(self) -> float | None:
        """The training budget whose scaling laws the step shows (None: it shows none)."""
        return self.scene.steps[self.step].scaling_budget if self.scene else None


def _shown(session: Session) -> Session:
    """What a scene's caption describes of ``session``: not the user's measurements, custom
    stack, selected op or guesses."""
    return replace(session, results=(), measured_roofs=False, custom_layers=(), selected_op=None, guesses=())
