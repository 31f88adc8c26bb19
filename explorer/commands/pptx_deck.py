"""Charts as a PowerPoint deck (python-pptx, an optional extra: ``.[slides]``): one slide
per chart, the picture a PNG at twice the slide's width in pixels per inch that lecture
halls need (PowerPoint draws no SVG that python-pptx can place), the title and the caption
as the slide's own text (so they can be edited and are read by screen readers), the full
caption, the explanation and every checked claim in the speaker notes, and alt text on
the picture. Keynote, LibreOffice and Google Slides open .pptx files.

Sizes on a 13.33 × 7.5 in slide: title 32 pt (6 % of its height; 24 pt on two lines when
long), caption 20 pt (3.7 %), at most two lines of it on the slide; the rest of it goes to
the notes."""

from __future__ import annotations

import io
import re
import struct
from dataclasses import dataclass
from pathlib import Path

from explorer.core.files.atomic import write_bytes_atomic

SLIDE_IN = (13.333, 7.5)
TITLE_PT, LONG_TITLE_PT, CAPTION_PT = 32, 24, 20
LONG_TITLE = 55  # characters: a longer title takes two lines at LONG_TITLE_PT (4.4 % of the height)
CAPTION_CHARS = 170  # two lines of 20 pt across the slide's text width
PICTURE_WIDTH_PX = 2560  # a 9 in wide picture at about 280 pixels per inch


@dataclass(frozen=True)
class Slide:
    title: str
    caption: str  # the whole caption: its first sentences on the slide, all of it in the notes
    notes: str  # the explanation and the checked claims


class SlidesUnavailable(RuntimeError):
    """python-pptx is not installed."""


def _pptx():
    try:
        import pptx
    except ImportError:
        raise SlidesUnavailable("PowerPoint export needs python-pptx: pip install "
                                "'roofline-explorer[slides]' (or pip install python-pptx)") from None
    return pptx


def on_slide(caption: str) -> str:
    """The caption's sentences that fit two lines of the slide, without a scene's "2/3. "
    step number; a first sentence longer than that is cut at a word, with "…"."""
    text = re.sub(r"^\d+/\d+\.\s+", "", " ".join(caption.split()))
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", text) if s]
    shown = ""
    for sentence in sentences:
        candidate = f"{shown} {sentence}".strip()
        if len(candidate) > CAPTION_CHARS:
            break
        shown = candidate
    if not shown and sentences:
        shown = sentences[0][:CAPTION_CHARS].rsplit(" ", 1)[0] + " …"
    return shown


def write_deck(path: str | Path, slides: list[tuple[Slide, bytes]]) -> Path:
    """Write ``slides`` (each with its chart as PNG bytes) as one .pptx at ``path``."""
    pptx = _pptx()
    from pptx.util import Inches, Pt

    deck = pptx.Presentation()
    deck.slide_width, deck.slide_height = Inches(SLIDE_IN[0]), Inches(SLIDE_IN[1])
    blank = deck.slide_layouts[6]
    for slide, png in slides:
        page = deck.slides.add_slide(blank)
        size = TITLE_PT if len(slide.title) <= LONG_TITLE else LONG_TITLE_PT
        _text(page, slide.title, Inches(0.4), Inches(0.15), Inches(12.5), Inches(0.85), Pt(size), True)
        top, height = Inches(1.05), Inches(5.3)
        wide, high = struct.unpack(">II", png[16:24])  # the PNG's own size (its IHDR chunk)
        width = int(height * wide / high)  # a 4:3 chart keeps its shape
        picture = page.shapes.add_picture(io.BytesIO(png), int((deck.slide_width - width) / 2), top,
                                          width, height)
        picture._element.nvPicPr.cNvPr.set("descr", f"Roofline chart: {slide.title}. {slide.caption}")
        _text(page, on_slide(slide.caption), Inches(0.4), Inches(6.4), Inches(12.5), Inches(1.0),
              Pt(CAPTION_PT), False)
        page.notes_slide.notes_text_frame.text = f"{slide.caption}\n\n{slide.notes}".strip()
    buffer = io.BytesIO()
    deck.save(buffer)
    return write_bytes_atomic(path, buffer.getvalue())


def _text(page, text: str, left, top, width, height, size, bold: bool) -> None:
    frame = page.shapes.add_textbox(left, top, width, height).text_frame
    frame.word_wrap = True
    run = frame.paragraphs[0].add_run()
    run.text = text
    run.font.size = size
    run.font.bold = bold
