"""A scene's question played in the window: guesses typed (each an undo step, kept in the
session), the answer hidden until Page Down reveals it, the CPU measurement run live, and
presentation mode at a projector's sizes driven from the keyboard alone."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6 import QtCore, QtWidgets
from PySide6.QtTest import QTest

from explorer.chart.elements import ElementKind

Key = QtCore.Qt.Key
ROOT = Path(__file__).resolve().parents[2]
SCENE = "predict-then-measure"


def _answer_shown(window) -> bool:
    return any(m.kind in (ElementKind.OP, ElementKind.STEP) for m in window.chart.chart.markers)


def _type(widget, text: str) -> None:
    QTest.keyClicks(widget, text)
    QTest.keyClick(widget, Key.Key_Return)


def test_guesses_then_page_down_reveals_the_answer_from_the_guesses(window, qtbot):
    state, player, bar, play = window.state, window.player, window.question_bar, window.questions
    player.start(SCENE, 5)  # tokens/s at batch 64 on the H100: no kernel to measure
    assert bar.isVisible() and window.caption_bar.caption.text() == (
        "Question: How many tokens per second does the H100 produce at batch 64?")
    assert not _answer_shown(window)  # the roofs only
    _type(bar.entry, "5000")
    _type(bar.entry, "20k")
    _type(bar.entry, "lots")  # not a number: refused, nothing added
    assert state.session.guesses_for(f"{SCENE}/6") == (5000.0, 20000.0)
    assert bar.count.text() == "2 guesses" and bar.strip.guesses == (5000.0, 20000.0)
    state.undo()
    assert state.session.guesses_for(f"{SCENE}/6") == (5000.0,) and player.step == 5 and not player.changed
    state.redo()
    with qtbot.waitSignal(play.sig_revealed, timeout=5000):
        QTest.keyClick(bar.entry, Key.Key_PageDown)
    assert player.revealed and player.step == 5  # Page Down revealed; it did not step on
    assert play.answer.value == pytest.approx(8811.49, rel=1e-4) and play.answer.source == "the analysis"
    assert bar.result.text() == (
        "Answer: 8,810 tokens/s (the analysis). 2 guesses from 5,000 tokens/s to 20,000 tokens/s, median "
        "12,500 tokens/s: the median was 1.4× too high, the closest (5,000 tokens/s) 1.8× too low; 0 of 2 "
        "within 10 %.")
    assert bar.strip.answer == bar.strip.final == play.answer.value
    assert window.caption_bar.caption.text().startswith("At batch 64 the weights are read once")
    assert _answer_shown(window)
    assert not bar.entry.isEnabled()
    player.previous()  # the question before is asked again, unanswered, its guesses kept
    assert not player.revealed and window.caption_bar.caption.text().startswith("Question: At what batch")


def test_revealing_the_triad_measures_it_live_on_this_cpu(window, qtbot):
    state, player, bar, play = window.state, window.player, window.question_bar, window.questions
    play.preset = "smoke"  # the smallest sizes: the kernel runs, in a second
    player.start(SCENE, 0)
    _type(bar.entry, "40")
    _type(bar.entry, "60 GB/s")
    roofs = [ln for ln in window.chart.chart.lines if ln.tooltip == "a guess"]
    assert len(roofs) == 2  # the guessed bandwidths, drawn as slanted roofs
    with qtbot.waitSignal(play.sig_revealed, timeout=120_000):
        bar.reveal.click()
        assert play.measuring and "Measuring stream triad on this machine's CPU" in bar.result.text()
    answer = play.answer
    assert answer.source.startswith("measured on this machine (stream triad"), answer.source
    result = window.runs.results["kernels"]
    triads = [p for p in result.points if p.kernel == "triad" and p.check is None and p.suspect is None]
    assert answer.value == max(p.bytes_per_s for p in triads)
    shown = play.question.shown(answer.value)
    assert bar.result.text().startswith(f"Answer: {shown} (measured on this machine")
    drawn = [ln for ln in window.chart.chart.lines if ln.tooltip.endswith(": the answer")]
    assert len(drawn) == 1 and state.session.guesses_for(f"{SCENE}/1") == (40e9, 60e9)
    assert state.live_points == list(result.points)  # the run's points on the chart beside the answer
    assert any(m.kind == ElementKind.MEASURED for m in window.chart.chart.markers)
    player.next()  # the next question: its chart without them
    assert state.live_points == [] and not player.revealed


def test_guess_markers_dragged_onto_the_chart_name_the_roof_they_stop_on(window, qtbot):
    state, player, plot = window.state, window.player, window.chart
    player.start(SCENE, 1)  # the matrix product: a rate of arithmetic, a flat roof
    chart = plot.chart

    def at(intensity, flops):
        return QtCore.QPoint(round(chart.x_px(intensity)), round(chart.y_px(flops)))

    QTest.mousePress(plot, QtCore.Qt.MouseButton.LeftButton, pos=at(10, 100e9))
    QTest.mouseMove(plot, at(30, 400e9))
    assert len([ln for ln in plot.chart.lines if ln.tooltip == "a guess"]) == 1  # it follows the pointer
    assert state.session.guesses_for(f"{SCENE}/2") == ()
    QTest.mouseRelease(plot, QtCore.Qt.MouseButton.LeftButton, pos=at(30, 400e9))
    (guess,) = state.session.guesses_for(f"{SCENE}/2")
    assert guess == pytest.approx(400e9, rel=0.03)  # to the pixel
    QTest.mousePress(plot, QtCore.Qt.MouseButton.LeftButton, pos=at(1, 1e12))
    QTest.mousePress(plot, QtCore.Qt.MouseButton.RightButton, pos=at(1, 1e12))  # cancelled
    QTest.mouseRelease(plot, QtCore.Qt.MouseButton.LeftButton, pos=at(1, 1e12))
    assert len(state.session.guesses_for(f"{SCENE}/2")) == 1
    state.undo()  # one undo step a marker
    assert state.session.guesses_for(f"{SCENE}/2") == () and player.step == 1


@pytest.mark.parametrize("size", [(1024, 768), (1920, 1080)])
def test_a_clicker_and_the_number_keys_play_a_question_while_presenting(window, qtbot, size, tmp_path):
    player, bar, play = window.player, window.question_bar, window.questions
    player.start(SCENE, 3)  # GPU against CPU, a factor
    window.presentation.enter(full_screen=False)
    window.resize(*size)
    qtbot.wait(30)
    focus = QtWidgets.QApplication.focusWidget()
    assert focus is not None and focus is bar.entry  # the keys typed go to the guess box
    for guess in ("10", "25", "40"):
        _type(focus, guess)
    assert window.state.session.guesses_for(f"{SCENE}/4") == (10.0, 25.0, 40.0)
    assert bar.entry.font().pointSizeF() > 18  # read from the back of the room
    before = window.grab()
    with qtbot.waitSignal(play.sig_revealed, timeout=5000):
        QTest.keyClick(window, Key.Key_PageDown)  # the clicker's "next"
    assert player.step == 3 and bar.result.text().startswith("Answer: 40.3× (the analysis).")
    assert "1 of 3 within 10 %" in bar.result.text()
    after = window.grab()
    chart = window.chart
    assert chart.height() >= 0.45 * size[1], (chart.height(), size)  # the bars leave the chart room
    assert bar.geometry().bottom() <= window.caption_bar.geometry().top()
    QTest.keyClick(window, Key.Key_PageDown)  # now it steps on
    assert player.step == 4 and not player.revealed
    shots = Path(os.environ.get("QUESTION_SHOTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    for name, image in (("question", before), ("answer", after)):
        assert image.save(str(shots / f"present-{size[0]}x{size[1]}-{name}.png"))
    window.presentation.leave()


@pytest.mark.slow
def test_the_number_keys_and_page_down_play_a_question_on_a_real_x_server(tmp_path):
    from tests.x11_server import x11_missing

    why = x11_missing()
    if why is not None:
        pytest.skip(why)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import drag_x11
    finally:
        sys.path.pop(0)
    server, display = drag_x11.start_server()
    try:
        env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb",
               "ROOFLINE_EXPLORER_DATA": str(tmp_path / "data"), "PYTHONPATH": str(ROOT)}
        app = [sys.executable, str(ROOT / "tests" / "x11_question_app.py"), str(tmp_path / "s.ini")]
        out = subprocess.run(app, capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)
    finally:
        server.terminate()
        server.wait(10)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["caption"] == "Question: At what batch does down_proj turn compute-bound on the H100?"
    assert seen["focus"] == "GuessEntry" and seen["guesses"] == [300.0, 1000.0]
    assert (seen["step"], seen["revealed"]) == (5, True)
    assert seen["result"].startswith("Answer: batch 326 (the analysis). 2 guesses from batch 300 to "
                                     "batch 1,000")
    assert (seen["then"], seen["then_revealed"]) == (6, False)
