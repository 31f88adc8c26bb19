"""A scene question in a deck: the question slide (roofs only, the guesses as dashed roofs,
their spread in the caption), then the answer slide (the answer's roof, how far the guesses
were, the step's own caption after it)."""

import pytest

from explorer.core.model.session import Session
from tests.ui.test_pptx_export import _slides, _svg_of, export

SCENE = "predict-then-measure"


@pytest.fixture
def guesses_file(tmp_path):
    path = tmp_path / "lecture.yaml"
    session = Session().with_guesses(f"{SCENE}/1", (40e9, 60e9, 120e9))
    session.with_guesses(f"{SCENE}/4", (10.0, 40.0)).save(path)
    return path


def test_each_question_step_is_a_question_slide_then_an_answer_slide(tmp_path, qtbot, guesses_file):
    path = tmp_path / "quiz.pptx"
    code, out, err = export("--scene", SCENE, "--out", str(path), "--guesses", str(guesses_file))
    assert code == 0, err
    slides = list(_slides(path))
    assert len(slides) == 12 and "12 slide(s)" in out  # six steps, each asks a question
    captions = [texts[1].text_frame.text for _, texts, _, _ in slides]
    assert captions[0] == ("Question: What bandwidth will a STREAM triad reach on the machine running this "
                           "lecture? 3 guesses from 40 GB/s to 120 GB/s, median 60 GB/s.")
    assert captions[1].startswith("Answer: 83.2 GB/s (the datasheet). 3 guesses from 40 GB/s to 120 GB/s, "
                                  "median 60 GB/s: the median was 1.4× too low, the closest (60 GB/s) 1.4× "
                                  "too low; 0 of 3 within 10 %.")
    assert "measures stream triad live" in slides[0][3]
    assert captions[6] == "Question: How many times faster does the GPU produce a token than the CPU? " \
                          "2 guesses from 10× to 40×, median 25×."
    assert captions[7].startswith("Answer: 40.3× (the analysis).")
    assert captions[10] == "Question: How many tokens per second does the H100 produce at batch 64?"
    assert captions[11].startswith("Answer: 8,810 tokens/s (the analysis).")
    question_svg = _svg_of(slides[0][0], slides[0][2][0]).decode()
    answer_svg = _svg_of(slides[1][0], slides[1][2][0]).decode()
    assert question_svg.count("<title>a guess</title>") == answer_svg.count("<title>a guess</title>") == 3
    assert "the answer" not in question_svg and answer_svg.count(">83.2 GB/s: the answer</text>") == 1
    # Tokens/s is no roof: its question slide hides the step's points and draws no guess.
    step_svg = _svg_of(slides[10][0], slides[10][2][0]).decode()
    answer_step_svg = _svg_of(slides[11][0], slides[11][2][0]).decode()
    assert "<title>down_proj (×32 layers)" in answer_step_svg and "<title>whole step" in answer_step_svg
    assert "<title>down_proj" not in step_svg and "<title>whole step" not in step_svg  # points hidden
    assert "a guess" not in step_svg


def test_a_deck_without_guesses_still_asks_then_answers(tmp_path, qtbot):
    path = tmp_path / "quiz.pptx"
    code, _, err = export("--scene", SCENE, "--step", "5", "--out", str(path))
    assert code == 0, err
    (_, q, _, _), (_, a, _, _) = _slides(path)
    assert q[1].text_frame.text == "Question: At what batch does down_proj turn compute-bound on the H100?"
    assert a[1].text_frame.text.startswith("Answer: batch 326 (the analysis).")


@pytest.mark.parametrize("suffix", ["svg", "png"])
def test_a_question_step_exports_as_asked_or_as_revealed(tmp_path, qtbot, guesses_file, suffix):
    asked, told = tmp_path / f"asked.{suffix}", tmp_path / f"told.{suffix}"
    common = ("--scene", SCENE, "--step", "1", "--guesses", str(guesses_file))
    assert export(*common, "--question", "--out", str(asked))[0] == 0
    assert export(*common, "--out", str(told))[0] == 0
    if suffix == "png":
        from PySide6 import QtGui

        images = [QtGui.QImage(str(p)) for p in (asked, told)]
        assert all(not i.isNull() for i in images) and images[0] != images[1]
        return
    asked_svg, told_svg = asked.read_text(), told.read_text()
    assert "1/6. Question: What bandwidth will a STREAM triad reach" in asked_svg
    assert "moves three arrays" not in asked_svg and "moves three arrays" in told_svg  # the caption waits
    assert asked_svg.count("<title>a guess</title>") == told_svg.count("<title>a guess</title>") == 3
    assert "the answer</text>" not in asked_svg and ">83.2 GB/s: the answer</text>" in told_svg
