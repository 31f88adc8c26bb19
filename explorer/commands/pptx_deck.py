"""Charts as a PowerPoint deck (python-pptx, an optional extra: ``.[slides]``): one slide
per chart. The picture is the chart as SVG with a PNG fallback, as PowerPoint embeds vector
pictures since 2016 (the PNG is the picture's blip; the SVG an ``asvg:svgBlip`` in the
blip's extension list, which PowerPoint 2016 and later draw and older readers skip); it
fills the slide between the title and the caption, laid out for that size, so its ticks
keep 2.5 % of the slide's height. The title and the caption are the slide's own text (to
be edited, read by screen readers) in a named typeface; the full caption, the
explanation and every checked claim go to the speaker notes, alt text to the picture; the
slide takes the chart's theme (background and text colours). Keynote, LibreOffice and
Google Slides open .pptx files.

Sizes on a 7.5 in high slide (13.33 in wide at 16:9, 10 in at 4:3): the title 32 pt (5.9 %
of the height) on one line, smaller down to 24 pt where it is long, two lines at 24 pt only
where even that does not fit; the caption 20 pt (3.7 %), at most three lines of whole
sentences, the ones that carry the step's checked claims first (``on_slide``)."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from pathlib import Path

from explorer.chart.text import wrap
from explorer.core.files.atomic import write_bytes_atomic

SLIDE_IN = {"16:9": (13.333, 7.5), "4:3": (10.0, 7.5)}
LONG_TITLE_PT, CAPTION_PT = 24, 20  # a title that fits no single line: two lines at 24 pt
TITLE_SIZES = (32, 28, 24)  # the largest whose single line fits is used
CAPTION_LINES = 3
FONT = "Arial"  # in PowerPoint and Keynote; LibreOffice draws it as Liberation Sans, its metric twin
MARGIN_IN = 0.3  # left and right of the text and the picture
INSET_IN = 0.1  # a text box's own left and right inset (python-pptx's, PowerPoint's default)
LEADING = 1.2  # a line's height against its font size
WIDTH_SLACK = 1.05  # the text's estimated width (DejaVu Sans' metrics, wider than Arial's) kept in hand
PNG_DPI = 200  # the fallback picture's resolution at its size on the slide
SVG_BLIP = "{96DAC541-7B7A-43D3-8B79-37D633B846F1}"  # PowerPoint's extension for an SVG picture
SVG_NS = "http://schemas.microsoft.com/office/drawing/2016/SVG/main"
# A full stop that ends no sentence: an abbreviation (a name's "et al.", "e.g.", "vs.").
ABBREVIATIONS = re.compile(r"(?:\bet al|\be\.g|\bi\.e|\bvs|\bcf|\bapprox|\bFig|\bNo)\.$")


@dataclass(frozen=True)
class Slide:
    title: str
    caption: str  # the whole caption: the sentences that fit on the slide, all of it in the notes
    notes: str  # the explanation and the checked claims
    claims: tuple[str, ...] = ()  # phrases of the step's checked claims, its verdicts first
    declared: int = 0  # how many of ``claims`` are verdicts (bound, fits, faster: its point)


@dataclass(frozen=True)
class Picture:
    svg: str
    png: bytes


@dataclass(frozen=True)
class Layout:
    """Where a slide's parts go, in inches from its top-left corner, and the text shown."""

    slide_in: tuple[float, float]
    title_pt: int
    title_lines: int
    caption: str  # the caption's sentences shown on the slide
    caption_lines: int
    picture: tuple[float, float, float, float]  # left, top, width, height

    @property
    def picture_in(self) -> tuple[float, float]:
        return self.picture[2], self.picture[3]

    @property
    def png_px(self) -> int:
        return round(self.picture[2] * PNG_DPI)


class SlidesUnavailable(RuntimeError):
    """python-pptx is not installed."""


def _pptx():
    try:
        import pptx
    except ImportError:
        raise SlidesUnavailable("PowerPoint export needs python-pptx: pip install "
                                "'roofline-explorer[slides]' (or pip install python-pptx)") from None
    return pptx


def _text_pt(aspect: str) -> float:
    """The width a text box's lines may take, in points."""
    return (SLIDE_IN[aspect][0] - 2 * MARGIN_IN - 2 * INSET_IN) * 72 / WIDTH_SLACK


def _lines(text: str, size: float, aspect: str, bold: bool = False) -> int:
    return len(wrap(text, size * (1.1 if bold else 1.0), _text_pt(aspect))) if text else 0


def sentences(text: str) -> list[str]:
    """``text`` split into sentences: at ".", "!" or "?" followed by a space and a capital,
    a digit or an opening bracket, but not after an abbreviation such as "et al."."""
    out, start = [], 0
    for match in re.finditer(r"[.!?]\s+(?=[A-Z0-9(\"“$])", text):
        if ABBREVIATIONS.search(text[start:match.start() + 1]):
            continue
        out.append(text[start:match.start() + 1].strip())
        start = match.end()
    rest = text[start:].strip()
    return [*out, rest] if rest else out


def on_slide(caption: str, claims: tuple[str, ...] = (), declared: int = 0, aspect: str = "16:9") -> str:
    """The caption's whole sentences that fit ``CAPTION_LINES`` lines of the slide, without a
    scene's "2/3. " step number: all of it where it fits, else the sentences that weigh most,
    shown in their order. A verdict among ``claims`` (its first ``declared``: a bound, a fit,
    a direction, the step's point) weighs 3, other claims (figures) 1 each up to 2 (many
    numbers do not make a sentence the point), the first sentence, which sets the scene, 1.5.
    A sentence that does not fit beside those chosen may lose its asides (brackets that hold
    no claim), then its last clauses (after ":" or ";"), and ends with a full stop: a caption
    never ends in "…"."""
    text = re.sub(r"^\d+/\d+\.\s+", "", " ".join(caption.split()))

    def fits(shown: str) -> bool:
        return _lines(shown, CAPTION_PT, aspect) <= CAPTION_LINES

    if fits(text):
        return text
    parts = sentences(text)

    def weight(index: int) -> float:
        held = [i for i, phrase in enumerate(claims) if phrase in parts[index]]
        return (3.0 * sum(i < declared for i in held) + min(2, sum(i >= declared for i in held))
                + (1.5 if index == 0 else 0.0))

    chosen: dict[int, str] = {}
    for i in sorted(range(len(parts)), key=lambda i: (-weight(i), i)):
        for version in _versions(parts[i], claims):
            if fits(" ".join({**chosen, i: version}[j] for j in sorted({*chosen, i}))):
                chosen[i] = version
                break
    return " ".join(chosen[j] for j in sorted(chosen))


def _versions(sentence: str, claims: tuple[str, ...]) -> list[str]:
    """``sentence``, then shorter: without its asides (brackets that hold no claim), then cut
    after each of its clauses (at ":" or ";"), the longest first, each ending with a full stop."""
    def aside(match: re.Match) -> str:
        return match.group(0) if any(c in match.group(0) for c in claims) else ""

    shorter = re.sub(r"\s*\([^()]*\)", aside, sentence)
    clauses = _clauses(shorter)
    cut = [" ".join(clauses[:end]).rstrip(":;,. ") + "." for end in range(len(clauses) - 1, 0, -1)]
    return [v for v in dict.fromkeys([sentence, shorter.strip(), *cut]) if v.rstrip(".")]


def _clauses(sentence: str) -> list[str]:
    """``sentence`` split after each ":" or ";" outside brackets."""
    out, depth, start = [], 0, 0
    for i, char in enumerate(sentence):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char in ":;" and depth == 0 and sentence[i + 1:i + 2] == " ":
            out.append(sentence[start:i + 1])
            start = i + 2
    return [*out, sentence[start:]]


def layout(slide: Slide, aspect: str = "16:9") -> Layout:
    """Where ``slide``'s title, picture and caption go on a slide of ``aspect``."""
    width, height = SLIDE_IN[aspect]
    size = next((s for s in TITLE_SIZES if _lines(slide.title, s, aspect, bold=True) <= 1), LONG_TITLE_PT)
    title_lines = max(1, _lines(slide.title, size, aspect, bold=True))
    caption = on_slide(slide.caption, slide.claims, slide.declared, aspect)
    caption_lines = _lines(caption, CAPTION_PT, aspect)
    top = 0.12 + _box_in(title_lines, size) + 0.04
    bottom = height - 0.08 - (_box_in(caption_lines, CAPTION_PT) if caption_lines else 0.0) - 0.04
    return Layout((width, height), size, title_lines, caption, caption_lines,
                  (MARGIN_IN, top, width - 2 * MARGIN_IN, bottom - top))


def _box_in(lines: int, size: float) -> float:
    """A text box's height in inches: its lines and its top and bottom insets (0.05 in each)."""
    return lines * LEADING * size / 72 + 0.1


def write_deck(path: str | Path, slides: list[tuple[Slide, Picture]], aspect: str = "16:9",
               background: str = "#ffffff", foreground: str = "#000000") -> Path:
    """Write ``slides`` (each with its chart as SVG and PNG) as one .pptx at ``path``, the
    slides in the chart's ``background`` and ``foreground`` colours."""
    pptx = _pptx()
    from pptx.dml.color import RGBColor
    from pptx.util import Inches, Pt

    deck = pptx.Presentation()
    width, height = SLIDE_IN[aspect]
    deck.slide_width, deck.slide_height = Inches(width), Inches(height)
    blank = deck.slide_layouts[6]
    ink = RGBColor.from_string(foreground.lstrip("#").upper())
    for slide, picture in slides:
        place = layout(slide, aspect)
        page = deck.slides.add_slide(blank)
        fill = page.background.fill
        fill.solid()
        fill.fore_color.rgb = RGBColor.from_string(background.lstrip("#").upper())
        _text(page, slide.title, Inches(MARGIN_IN), Inches(0.12), Inches(width - 2 * MARGIN_IN),
              Inches(_box_in(place.title_lines, place.title_pt)), Pt(place.title_pt), True, ink)
        left, top, wide, high = (Inches(v) for v in place.picture)
        shape = page.shapes.add_picture(io.BytesIO(picture.png), left, top, wide, high)
        _add_svg(page, shape, picture.svg.encode())
        shape._element.nvPicPr.cNvPr.set("descr", f"Chart: {slide.title}. {slide.caption}")
        if place.caption:
            caption_top = height - 0.08 - _box_in(place.caption_lines, CAPTION_PT)
            _text(page, place.caption, Inches(MARGIN_IN), Inches(caption_top), Inches(width - 2 * MARGIN_IN),
                  Inches(_box_in(place.caption_lines, CAPTION_PT)), Pt(CAPTION_PT), False, ink)
        page.notes_slide.notes_text_frame.text = f"{slide.caption}\n\n{slide.notes}".strip()
    buffer = io.BytesIO()
    deck.save(buffer)
    return write_bytes_atomic(path, buffer.getvalue())


def _add_svg(page, shape, svg: bytes) -> None:
    """The SVG beside the picture's PNG: a media part of the slide, named in an
    ``asvg:svgBlip`` in the blip's extension list (how PowerPoint saves an SVG picture)."""
    from pptx.opc.constants import RELATIONSHIP_TYPE
    from pptx.opc.package import Part
    from pptx.oxml import parse_xml
    from pptx.oxml.ns import qn

    package = page.part.package
    part = Part(package.next_image_partname("svg"), "image/svg+xml", package, svg)
    rid = page.part.relate_to(part, RELATIONSHIP_TYPE.IMAGE)
    blip = shape._element.blipFill.find(qn("a:blip"))
    blip.append(parse_xml(
        f'<a:extLst xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
        f'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
        f'<a:ext uri="{SVG_BLIP}"><asvg:svgBlip xmlns:asvg="{SVG_NS}" r:embed="{rid}"/></a:ext></a:extLst>'))


def _text(page, text: str, left, top, width, height, size, bold: bool, colour) -> None:
    frame = page.shapes.add_textbox(left, top, width, height).text_frame
    frame.word_wrap = True
    run = frame.paragraphs[0].add_run()
    run.text = text
    font = run.font
    font.size, font.bold, font.name = size, bold, FONT
    font.color.rgb = colour
