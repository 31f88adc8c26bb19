"""A scene question in a deck: a question slide (the roofs, the answer hidden, the room's
guesses as a spread), then the answer slide (the step's chart, the answer's roof among the
guesses, and how far they were in the caption, with the step's own caption after it).

The answer is the analysis' (``questions.answer_at``): a deck is written where no kernel
runs; the speaker notes say that the window measures it live where the step names a kernel."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from explorer.chart.elements import Chart
from explorer.chart.guesses import hide_answer, with_guesses
from explorer.commands.pptx_deck import Slide, sentences
from explorer.core.words.questions import Spread, answer_at, guess_key, judged

Change = Callable[[Chart, str], Chart]  # the chart as built, the theme → the chart on the slide


def _same(chart: Chart, _theme: str) -> Chart:
    return chart


def slides_for(doc, slide: Slide, step, guesses: Sequence[float]) -> list[tuple[Slide, Change]]:
    """``slide`` as it is for a step that asks nothing (``step``: (scene, index), or None);
    for a question step, its question slide and its answer slide, each with what changes its
    chart."""
    question = step[0].steps[step[1]].question if step is not None else None
    if question is None:
        return [(slide, _same)]
    scene, index = step
    answer = answer_at(scene, index, doc.catalog, doc.models)
    spread = f" {Spread.of(guesses).describe(question)}." if guesses else ""
    measured = (f" Played in the window, the reveal measures {question.measure.suite} "
                f"{question.measure.kernel} live and answers with the measured rate."
                if question.measure else "")
    asked = Slide(slide.title, f"Question: {question.ask}{spread}",  # the notes: for the lecturer's eyes
                  f"Asked before the answer is shown; the answer is {question.shown(answer.value)} "
                  f"({answer.source}).{measured}\n\n{slide.caption}\n\n{slide.notes}", (), 0)
    result = judged(question, guesses, answer)
    number = re.match(r"\d+/\d+\.\s+", slide.caption)  # a scene's "2/3. " stays first
    head = number.group(0) if number else ""
    kept = tuple(sentences(result))  # the answer and how the guesses did: the slide's point
    told = Slide(slide.title, f"{head}{result} {slide.caption.removeprefix(head)}", slide.notes,
                 (*kept, *slide.claims), slide.declared + len(kept))

    def hidden(chart: Chart, theme: str) -> Chart:
        return with_guesses(hide_answer(chart), question.unit, guesses, theme=theme)

    def shown(chart: Chart, theme: str) -> Chart:
        return with_guesses(chart, question.unit, guesses, answer.value,
                            f"{question.shown(answer.value)}: the answer", theme)

    return [(asked, hidden), (told, shown)]


def guesses_of(guesses: tuple[tuple[str, tuple[float, ...]], ...], step) -> tuple[float, ...]:
    """The guesses a session (``--guesses FILE``) keeps for ``step`` ((scene, index) or None)."""
    if step is None:
        return ()
    return dict(guesses).get(guess_key(step[0].id, step[1]), ())


def picture_options(doc, options, step, guesses: Sequence[float], asked: bool):
    """``options`` (``chart.slides.ExportOptions``) for one picture of ``step``: as they are
    for a step that asks nothing; for a question step, the answer's roof and the guesses
    drawn, or with ``asked`` the picture before the reveal (answer hidden, the question as
    its caption)."""
    from dataclasses import replace

    question = step[0].steps[step[1]].question if step is not None else None
    if question is None:
        return options
    whole = Slide(options.title or "", options.subtitle or "", "")
    (ask, hide), (_, show) = slides_for(doc, whole, step, guesses)
    if not asked:
        return replace(options, overlay=show)
    number = re.match(r"\d+/\d+\.\s+", options.subtitle or "")
    subtitle = (number.group(0) if number else "") + ask.caption if options.subtitle else None
    return replace(options, subtitle=subtitle, overlay=hide)
