"""PowerPoint decks: one slide per scene step, the title and caption as the slide's own text
in a named typeface and the chart's theme, the picture a vector SVG with a PNG fallback
filling the slide between them, the full caption, explanation and checked claims in the
notes; rendered by LibreOffice where it is installed."""

import io
import re
import struct
import subprocess

import pytest
from lxml import etree
from pptx import Presentation
from pptx.util import Emu

from explorer.chart import palette
from explorer.chart.elements import ElementKind
from explorer.chart.slides import ExportOptions, slide_chart
from explorer.commands import main as cli
from explorer.commands.export import _claims
from explorer.commands.pptx_deck import (
    FONT,
    PNG_DPI,
    SLIDE_IN,
    SVG_BLIP,
    SVG_NS,
    Slide,
    layout,
    on_slide,
    sentences,
)
from explorer.core.words.scenes import open_scenes
from explorer.document import Document

R_EMBED = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}embed"


def export(*argv):
    out, err = io.StringIO(), io.StringIO()
    return cli.run(cli.parse_args(["export", *argv]), out, err), out.getvalue(), err.getvalue()


def _slides(path):
    deck = Presentation(str(path))
    for slide in deck.slides:
        texts = [s for s in slide.shapes if s.has_text_frame]
        pictures = [s for s in slide.shapes if s.shape_type == 13]
        yield slide, texts, pictures, slide.notes_slide.notes_text_frame.text


def _slide_steps(scene) -> list[int]:
    """The step each slide of ``scene``'s deck shows (a question step: two slides)."""
    return [i for i, step in enumerate(scene.steps) for _ in range(2 if step.question else 1)]


def _svg_of(slide, picture) -> bytes:
    """The SVG the picture's blip names in its extension list (PowerPoint's svgBlip)."""
    blip = picture._element.blipFill[0]
    (ext,) = blip.findall("{http://schemas.openxmlformats.org/drawingml/2006/main}extLst/"
                          "{http://schemas.openxmlformats.org/drawingml/2006/main}ext")
    assert ext.get("uri") == SVG_BLIP
    (svg_blip,) = ext.findall(f"{{{SVG_NS}}}svgBlip")
    part = slide.part.related_part(svg_blip.get(R_EMBED))
    assert part.content_type == "image/svg+xml"
    return part.blob


def test_a_scene_is_a_deck_with_a_slide_a_step(tmp_path, qtbot):
    path = tmp_path / "batching.pptx"
    code, out, err = export("--scene", "decode-batching", "--out", str(path))
    assert code == 0, err
    assert "4 slide(s)" in out
    slides = list(_slides(path))
    assert len(slides) == 4
    for number, (slide, texts, pictures, notes) in enumerate(slides, 1):
        title, caption = (t.text_frame.text for t in texts)
        assert title == "Why decode is memory-bound, and how batching helps"
        assert caption and not caption.startswith(f"{number}/4") and not caption.endswith("…")
        for shape in texts:  # a named typeface, the theme's text colour
            (run,) = shape.text_frame.paragraphs[0].runs
            assert run.font.name == FONT and str(run.font.color.rgb) == "000000"
        assert str(slide.background.fill.fore_color.rgb) == "FFFFFF"
        assert "What limits the step:" in notes and "Checked claims:" in notes
        assert "does not hold" not in notes  # every claim of the scene checks
        (picture,) = pictures
        assert picture._element.nvPicPr.cNvPr.get("descr").startswith("Chart: Why decode")
        # the vector picture, and its PNG fallback at PNG_DPI across the picture's width
        svg = _svg_of(slide, picture)
        assert svg.startswith(b"<svg") or b"<svg " in svg[:200]
        assert b"Arithmetic intensity (FLOP/byte)" in svg
        assert picture.image.content_type == "image/png"
        wide, high = struct.unpack(">II", picture.image.blob[16:24])  # the PNG's IHDR size
        assert wide == round(Emu(picture.width).inches * PNG_DPI)
        assert wide / high == pytest.approx(picture.width / picture.height, rel=0.01)
        # the picture spans the slide between the margins, under the title, over the caption
        assert Emu(picture.width).inches == pytest.approx(SLIDE_IN["16:9"][0] - 0.6, abs=0.01)
        assert texts[0].top + texts[0].height <= picture.top
        assert picture.top + picture.height <= texts[1].top


def test_every_scene_becomes_its_own_deck_with_whole_captions(tmp_path, qtbot, catalog, models):
    from explorer.core.words.scenes import open_scenes

    code, _, err = export("--all-scenes", "--out-dir", str(tmp_path), "--format", "pptx")
    assert code == 0, err
    scenes = list(open_scenes(catalog, models).values())
    decks = sorted(tmp_path.glob("*.pptx"))
    assert [d.name for d in decks] == [f"{n:02d}-{s.id}.pptx" for n, s in enumerate(scenes, 1)]
    every = [(scene, i, s) for scene, deck in zip(scenes, decks, strict=True)
             for i, s in zip(_slide_steps(scene), _slides(deck), strict=True)]
    assert [len(list(_slides(d))) for d in decks] == [len(_slide_steps(s)) for s in scenes]
    assert len(every) == 61 + 6  # a step that asks a question is a question slide, then an answer slide
    for scene, index, (slide, texts, (picture,), notes) in every:
        where = f"{scene.id} step {index + 1}"
        title, caption = (t.text_frame.text for t in texts)
        assert not title.endswith("…") and not caption.endswith("…"), where
        assert caption[-1] in ".?!)", where  # whole sentences
        assert _svg_of(slide, picture), where  # every picture vector, with its PNG
        assert " ".join(scene.caption_at(index, catalog, models).split()) in " ".join(notes.split()), where


@pytest.mark.parametrize("scene, step, kept", [
    ("compute-optimal-training", 2, ["by Besiroglu et al. puts the optimum at 72.2 B parameters on 1.33 T"]),
    ("cpu-vs-gpu", 3, ["memory-bound", "11× faster"]),  # the claim the slide exists for
    ("mixture-of-experts", 1, ["5.34 ms, 4% faster than a dense Llama 2 13B"]),
    ("serving-batching", 4, ["at most 248 conversations"]),
    ("decode-batching", 4, ["attn_score stays memory-bound"]),
])
def test_the_slide_s_caption_keeps_the_step_s_claim(scene, step, kept, catalog, models):
    s = open_scenes(catalog, models)[scene]
    doc = Document(catalog, models)
    doc.replace_session(s.session_at(step - 1), "test")
    claims, verdicts = _claims(doc, (s, step - 1))
    shown = layout(Slide(s.title, s.caption_at(step - 1, catalog, models), "", claims, verdicts)).caption
    for phrase in kept:
        assert phrase in shown


def test_sentences_end_at_full_stops_not_at_abbreviations():
    text = ("For 5.76e23 FLOPs the replication by Besiroglu et al. puts it at 72.2 B. A 64-bit access "
            "(O'Connor et al., MICRO 2017) costs 254 pJ, e.g. on HBM2. (No squares: none.)")
    assert sentences(text) == ["For 5.76e23 FLOPs the replication by Besiroglu et al. puts it at 72.2 B.",
                               "A 64-bit access (O'Connor et al., MICRO 2017) costs 254 pJ, e.g. on HBM2.",
                               "(No squares: none.)"]


@pytest.mark.parametrize("caption, shown", [
    ("2/3. One sentence. Another one.", "One sentence. Another one."),
    # one sentence too long for three lines: its aside goes, then its clauses after a colon
    ("1/4. A step (" + "an aside " * 12 + "): " + "the claim holds, " * 4 + "and so on: " + "word " * 80
     + "end.",
     "A step: " + ("the claim holds, " * 4) + "and so on."),
])
def test_the_slide_shows_whole_sentences_that_fit_three_lines(caption, shown):
    assert on_slide(caption) == shown


def test_without_python_pptx_the_export_says_what_to_install(tmp_path, qtbot, monkeypatch):
    import builtins

    real = builtins.__import__
    monkeypatch.setattr(builtins, "__import__", lambda name, *a, **k: (
        (_ for _ in ()).throw(ImportError(name)) if name == "pptx" else real(name, *a, **k)))
    code, _, err = export("--scene", "cpu-vs-gpu", "--step", "1", "--out", str(tmp_path / "x.pptx"))
    assert code == 2 and "pip install 'roofline-explorer[slides]'" in err
    assert not (tmp_path / "x.pptx").exists()


def test_a_four_by_three_deck_has_four_by_three_slides_filled(tmp_path, qtbot):
    path = tmp_path / "square.pptx"
    code, _, err = export("--scene", "cpu-vs-gpu", "--step", "1", "--aspect", "4:3", "--out", str(path))
    assert code == 0, err
    deck = Presentation(str(path))
    assert (Emu(deck.slide_width).inches, Emu(deck.slide_height).inches) == pytest.approx((10.0, 7.5))
    (_, _, (picture,), _), = _slides(path)
    assert Emu(picture.width).inches == pytest.approx(10.0 - 0.6, abs=0.01)


def test_a_contrast_deck_is_a_dark_slide_with_light_text(tmp_path, qtbot):
    path = tmp_path / "contrast.pptx"
    code, _, err = export("--scene", "cpu-vs-gpu", "--step", "1", "--theme", "contrast", "--out", str(path))
    assert code == 0, err
    (slide, texts, (picture,), _), = _slides(path)
    theme = palette.THEMES["contrast"]
    assert str(slide.background.fill.fore_color.rgb) == theme.background.lstrip("#").upper() == "000000"
    for shape in texts:
        assert str(shape.text_frame.paragraphs[0].runs[0].font.color.rgb) == "FFFFFF"
    assert f'fill="{theme.background}"'.encode() in _svg_of(slide, picture)  # the chart's own background


@pytest.mark.parametrize("aspect", ["16:9", "4:3"])
def test_a_deck_s_chart_ticks_are_large_enough_for_a_hall(catalog, models, aspect):
    """Every step's picture, laid out for its place on the slide: ticks at least 2.4 % of the
    slide's height once the picture is scaled to that place."""
    doc = Document(catalog, models)
    for scene in open_scenes(catalog, models).values():
        for index in range(len(scene.steps)):
            doc.replace_session(scene.session_at(index), "test")
            claims, verdicts = _claims(doc, (scene, index))
            place = layout(Slide(scene.title, scene.caption_at(index, catalog, models), "", claims, verdicts),
                           aspect)
            step = scene.steps[index]
            options = ExportOptions(aspect=aspect, heading=False, view=step.view.value,
                                    scaling_budget=step.scaling_budget, slot_in=place.picture_in)
            chart = slide_chart(doc, options)
            assert chart.page.width / chart.page.height == pytest.approx(place.picture[2] / place.picture[3])
            inches_per_px = place.picture[3] / chart.page.height
            ticks = [t.size * inches_per_px / SLIDE_IN[aspect][1] for t in chart.texts
                     if t.kind == ElementKind.TICK]
            assert ticks and min(ticks) >= 0.024, f"{scene.id} step {index + 1}: {min(ticks):.4f}"


def _lines(pdf, page: int) -> list[tuple[str, float, float]]:
    """(text, top, bottom) of each line on ``page`` of ``pdf``, in points (Poppler's words)."""
    html = subprocess.run(["pdftotext", "-bbox-layout", "-f", str(page), "-l", str(page), str(pdf), "-"],
                          capture_output=True, timeout=60, check=True).stdout
    tree = etree.fromstring(html, etree.HTMLParser(encoding="utf-8"))
    return [(" ".join(w.text or "" for w in line.iter("word")), float(line.get("ymin")),
             float(line.get("ymax"))) for line in tree.iter("line")]


def test_libreoffice_renders_every_slide_s_title_and_caption_as_laid_out(tmp_path, qtbot):
    """Every scene's deck drawn by LibreOffice: the title in the lines it was given, above the
    picture; the caption whole, under it."""
    from tests.libreoffice import libreoffice_missing, to_pdf

    why = libreoffice_missing()
    if why:
        pytest.skip(why)
    code, _, err = export("--all-scenes", "--out-dir", str(tmp_path), "--format", "pptx")
    assert code == 0, err
    checked = 0
    for path in sorted(tmp_path.glob("*.pptx")):
        slides = list(_slides(path))
        pdf = to_pdf(path, tmp_path)
        info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, timeout=60).stdout
        assert re.search(rf"Pages:\s+{len(slides)}\b", info), path.name
        size = re.search(r"Page size:\s+([\d.]+) x ([\d.]+) pts", info)
        assert size and (float(size[1]), float(size[2])) == pytest.approx((960, 540), abs=0.1)  # 13.33×7.5 in
        for page, (_, texts, (picture,), _) in enumerate(slides, 1):
            where = f"{path.name} slide {page}"
            title, caption = texts
            lines = _lines(pdf, page)
            picture_top, caption_top = Emu(picture.top).pt, Emu(caption.top).pt
            title_lines = [(top, bottom) for text, top, bottom in lines
                           if text and text in title.text_frame.text and top < picture_top]
            size_pt = title.text_frame.paragraphs[0].runs[0].font.size.pt
            given = round((Emu(title.height).inches - 0.1) * 72 / (1.2 * size_pt))
            assert 1 <= len(title_lines) <= given, (where, lines)
            assert max(bottom for _, bottom in title_lines) <= picture_top + 1, (where, lines)
            shown = " ".join(text for text, top, _ in lines if top >= caption_top - 1)
            # all of it, whatever the line breaks (a break after "memory-" reads back as "memory- bound")
            assert "".join(shown.split()) == "".join(caption.text_frame.text.split()), where
            assert "…" not in shown, where
            checked += 1
    assert checked == 61 + 6  # six steps that ask a question: two slides each
