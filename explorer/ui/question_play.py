"""Plays a scene step's question: the chart without its answer, guesses typed into the
question bar (each one undo step, kept in the session), then the reveal: the step's kernel
measured live where it names one (the GPU's backend where CuPy found one, else NumPy on
this CPU), else the analysis' answer; the answer moves from the guesses' median to its
place, the caption comes back, and the bar says how far the guesses were."""

from __future__ import annotations

import math

from PySide6 import QtCore, QtGui

from explorer.chart.guesses import hide_answer, on_chart, value_at, with_guesses
from explorer.core.words.questions import (
    MAX_GUESSES,
    Answer,
    Question,
    Spread,
    answer_at,
    guess_key,
    judged,
    measured_answer,
    parse_guess,
)
from explorer.runs import KERNELS, Jobs, gpu_job
from explorer.state import AppState

ANIMATION_MS = 900  # the answer's move from the guesses to its place


class QuestionPlay(QtCore.QObject):
    sig_revealed = QtCore.Signal()  # the answer has reached its place

    def __init__(self, state: AppState, player, runs: Jobs, chart, bar, parent=None) -> None:
        super().__init__(parent)
        self.state, self.player, self.runs, self.chart, self.bar = state, player, runs, chart, bar
        self.preset = "quick"  # the measurement's sizes (``kernels.cases.Preset``)
        self.answer: Answer | None = None
        self.measuring = False
        self._analysed: Answer | None = None
        self._shown: float | None = None  # where the answer is drawn while it moves
        self.animation = QtCore.QVariantAnimation(self)
        self.animation.setDuration(ANIMATION_MS)
        self.animation.setEasingCurve(QtCore.QEasingCurve.Type.InOutCubic)
        self.animation.valueChanged.connect(self._on_moved)
        self.animation.finished.connect(self._on_arrived)
        player.before_next = self.reveal
        player.sig_changed.connect(self._on_step)
        state.sig_session_changed.connect(self.refresh)  # a guess added, undone or redone
        bar.sig_guess.connect(self.add_guess)
        bar.sig_reveal.connect(self.reveal)
        runs.sig_progress.connect(self._on_progress)
        runs.sig_finished.connect(self._on_finished)
        runs.sig_failed.connect(self._on_failed)
        chart.overlay = self.overlay
        self._marker: float | None = None  # a guess marker being dragged on the chart
        self._asking = False  # a question's chart is drawn
        self._points: list = []  # the points measured for this question, drawn once it is answered
        chart.installEventFilter(self)

    # -- what is asked ---------------------------------------------------------------------------
    @property
    def question(self) -> Question | None:
        scene = self.player.scene
        return scene.steps[self.player.step].question if scene is not None else None

    @property
    def key(self) -> str:
        assert self.player.scene is not None  # (asked only while a question is shown)
        return guess_key(self.player.scene.id, self.player.step)

    @property
    def guesses(self) -> tuple[float, ...]:
        return self.state.session.guesses_for(self.key) if self.question is not None else ()

    def add_guess(self, text: str) -> bool:
        """Add the guess typed (in the question's unit): one undo step; False (and a message
        saying why) for a guess that cannot be read, or one too many."""
        question = self.question
        if question is None or self.player.revealed:
            return False
        try:
            value = parse_guess(text, question)
        except ValueError as exc:
            self.state.sig_message.emit(str(exc))
            return False
        if self._add(question, value):
            self.bar.entry.clear()
            return True
        return False

    def _add(self, question: Question, value: float) -> bool:
        guesses = self.guesses
        if len(guesses) >= MAX_GUESSES:
            self.state.sig_message.emit(f"At most {MAX_GUESSES} guesses per question")
            return False
        self.state.show_session(self.state.session.with_guesses(self.key, (*guesses, value)),
                                f"Guess {question.shown(value)}")
        return True

    # -- a guess marker dragged onto the chart ---------------------------------------------------
    def eventFilter(self, watched, event) -> bool:
        """On an unanswered question whose answer is a roof, a press on the chart drops a
        guess marker, a drag moves it (the roof it names follows) and the release keeps it;
        Esc or a right click while dragging drops it."""
        question, kind = self.question, event.type()
        Type = QtCore.QEvent.Type
        if watched is not self.chart or question is None or self.player.revealed \
                or not on_chart(question.unit):
            return False
        if kind not in (Type.MouseButtonPress, Type.MouseMove, Type.MouseButtonRelease, Type.KeyPress):
            return False
        if kind == Type.KeyPress:
            if self._marker is not None and event.key() == QtCore.Qt.Key.Key_Escape:
                self._marker = None
                self._draw()
                return True
            return False
        assert isinstance(event, QtGui.QMouseEvent)  # (a mouse event's type)
        position = event.position()
        value = value_at(self.chart.chart, question.unit, (position.x(), position.y()))
        if kind == Type.MouseButtonPress:
            if event.button() == QtCore.Qt.MouseButton.RightButton and self._marker is not None:
                self._marker = None  # cancelled
                self._draw()
                return True
            if event.button() != QtCore.Qt.MouseButton.LeftButton or value is None:
                return False
            self._marker = value
        elif self._marker is None:
            return False  # hovering: the chart's own tooltips
        elif kind == Type.MouseMove:
            self._marker = value if value is not None else self._marker
        else:
            placed, self._marker = (value if value is not None else self._marker), None
            if not self._add(question, placed):
                self._draw()
            return True
        self._draw()
        return True

    # -- the reveal ------------------------------------------------------------------------------
    def reveal(self) -> bool:
        """Reveal the answer (True: the key that asked for it is used up; False: nothing to
        reveal here, the scene steps on)."""
        question, scene = self.question, self.player.scene
        if question is None or scene is None or self.player.revealed:
            return False
        if self.measuring:
            return True
        self._analysed = answer_at(scene, self.player.step, self.state.catalog, self.state.models)
        if question.measure is not None:
            self.measuring = True
            self.bar.result.setText(f"Measuring {question.measure.suite} {question.measure.kernel} "
                                    f"on {self._backend_label()}…")
            self.bar.result.show()
            self.runs.run_kernels(self._backend(), [question.measure.suite, self.preset])
        else:
            self._show_answer(self._analysed)
        return True

    def _backend(self) -> str:
        from explorer.kernels.gpuinfo import GpuInfo  # (read when a question is revealed)

        return "cupy" if isinstance(self.runs.results.get(gpu_job(0)), GpuInfo) else "numpy"

    def _backend_label(self) -> str:
        return "this machine's GPU" if self._backend() == "cupy" else "this machine's CPU"

    def _on_progress(self, job: str, progress) -> None:
        if job == KERNELS and self.measuring and getattr(progress, "point", None) is not None:
            self._points.append(progress.point)
            self.state.set_live_points(self._points)  # (hidden with the answer until the reveal)

    def _on_finished(self, job: str, results) -> None:
        if job != KERNELS or not self.measuring:
            return
        self.measuring = False
        question, points = self.question, getattr(results, "points", ())
        self._points = list(points)
        self.state.set_live_points(self._points)  # the run's points beside the answer
        measured = measured_answer(question, points, self._backend_label().removesuffix("'s CPU")
                                   .removesuffix("'s GPU")) if question else None
        if self._analysed is not None:
            self._show_answer(measured or self._analysed)

    def _on_failed(self, job: str, message: str) -> None:
        if job != KERNELS or not self.measuring:
            return
        self.measuring = False
        self.state.sig_message.emit(f"The measurement could not run ({message}): the analysis answers")
        if self._analysed is not None:
            self._show_answer(self._analysed)

    def _show_answer(self, answer: Answer) -> None:
        guesses = self.guesses
        self.answer = answer
        self.player.reveal()
        start = Spread.of(guesses).median if guesses else answer.value / 10
        self.animation.stop()
        self.animation.setStartValue(math.log10(start))
        self.animation.setEndValue(math.log10(answer.value))
        self._shown = start
        self.animation.start()

    def _on_moved(self, value) -> None:
        self._shown = 10 ** float(value)
        self._draw()

    def _on_arrived(self) -> None:
        if self.answer is not None:
            self._shown = self.answer.value
            self._draw()
            self.sig_revealed.emit()

    # -- drawing ---------------------------------------------------------------------------------
    def overlay(self, chart):
        """The chart as the question shows it (``RooflinePlot.overlay``)."""
        question = self.question
        if question is None:
            return chart
        if not self.player.revealed:
            chart = hide_answer(chart)
        if not on_chart(question.unit):
            return chart
        label = f"{question.shown(self.answer.value)}: the answer" if self.answer is not None else ""
        marker = [self._marker] if self._marker is not None else []
        return with_guesses(chart, question.unit, [*self.guesses, *marker], self._shown, label,
                            self.chart.theme.name)

    def _on_step(self) -> None:
        """A step shown: a new question starts unanswered."""
        if not self.player.revealed:
            self.animation.stop()
            self.answer, self._shown, self.measuring, self._marker = None, None, False, None
            if self._points:  # the last question's measured points go with it
                self._points = []
                self.state.set_live_points([])
        self.refresh()

    def refresh(self) -> None:
        question = self.question
        if question is None:
            if self._asking:  # the question's chart gives way to the plain one
                self._asking = False
                self.bar.hide()
                self.chart.redraw(fit=False)
            return
        self._asking = True
        self._draw()
        if not self.player.revealed:
            self.bar.entry.setFocus()  # typing a number and Enter adds a guess at once

    def _draw(self) -> None:
        question = self.question
        if question is None:
            return
        guesses, answer = self.guesses, self.answer
        done = answer is not None and self._shown == answer.value
        result = judged(question, guesses, answer) if answer is not None and done else \
            self.bar.result.text() if self.measuring else ""
        self.bar.show_question(question.ask, question.unit, guesses, question.scale, result,
                               self.player.revealed)
        self.bar.set_answer(self._shown, answer.value if answer else None,
                            question.shown(answer.value) if answer else "")
        self.chart.redraw(fit=False)
