"""PowerPoint decks: one slide per scene step, the title and caption as the slide's text,
the picture with alt text, the full caption, explanation and checked claims in the notes."""

import io
import struct

import pytest
from pptx import Presentation

from explorer.commands import main as cli
from explorer.commands.pptx_deck import CAPTION_CHARS, on_slide


def export(*argv):
    out, err = io.StringIO(), io.StringIO()
    return cli.run(cli.parse_args(["export", *argv]), out, err), out.getvalue(), err.getvalue()


def _slides(path):
    deck = Presentation(str(path))
    for slide in deck.slides:
        texts = [s.text_frame.text for s in slide.shapes if s.has_text_frame]
        pictures = [s for s in slide.shapes if s.shape_type == 13]
        yield texts, pictures, slide.notes_slide.notes_text_frame.text


def test_a_scene_is_a_deck_with_a_slide_a_step(tmp_path, qtbot):
    path = tmp_path / "batching.pptx"
    code, out, err = export("--scene", "decode-batching", "--out", str(path))
    assert code == 0, err
    assert "4 slide(s)" in out
    slides = list(_slides(path))
    assert len(slides) == 4
    for number, (texts, pictures, notes) in enumerate(slides, 1):
        title, caption = texts
        assert title == "Why decode is memory-bound, and how batching helps"
        assert caption and len(caption) <= CAPTION_CHARS + 2 and not caption.startswith(f"{number}/4")
        assert caption.rstrip(" …") in " ".join(notes.split())  # the notes hold all of it
        (picture,) = pictures
        assert picture._element.nvPicPr.cNvPr.get("descr").startswith("Roofline chart: Why decode")
        width = struct.unpack(">I", picture.image.blob[16:20])[0]  # the PNG's IHDR width
        assert width == 2560 and picture.image.content_type == "image/png"
        assert "What limits the step:" in notes and "Checked claims:" in notes
        assert "does not hold" not in notes  # every claim of the scene checks


def test_every_scene_becomes_its_own_deck(tmp_path, qtbot, catalog, models):
    from explorer.core.words.scenes import open_scenes

    code, _, err = export("--all-scenes", "--out-dir", str(tmp_path), "--format", "pptx")
    assert code == 0, err
    scenes = list(open_scenes(catalog, models).values())
    decks = sorted(tmp_path.glob("*.pptx"))
    assert [d.name for d in decks] == [f"{n:02d}-{s.id}.pptx" for n, s in enumerate(scenes, 1)]
    assert [len(list(_slides(d))) for d in decks] == [len(s.steps) for s in scenes]


@pytest.mark.parametrize("caption, shown", [
    ("2/3. One sentence. Another one.", "One sentence. Another one."),
    ("1/4. " + "word " * 60, " ".join(["word"] * 34) + " …"),
])
def test_the_slide_shows_what_fits_two_lines(caption, shown):
    assert on_slide(caption) == shown


def test_without_python_pptx_the_export_says_what_to_install(tmp_path, qtbot, monkeypatch):
    import builtins

    real = builtins.__import__
    monkeypatch.setattr(builtins, "__import__", lambda name, *a, **k: (
        (_ for _ in ()).throw(ImportError(name)) if name == "pptx" else real(name, *a, **k)))
    code, _, err = export("--scene", "cpu-vs-gpu", "--step", "1", "--out", str(tmp_path / "x.pptx"))
    assert code == 2 and "pip install 'roofline-explorer[slides]'" in err
    assert not (tmp_path / "x.pptx").exists()


def test_a_four_by_three_chart_keeps_its_shape_on_the_slide(tmp_path, qtbot):
    path = tmp_path / "square.pptx"
    code, _, err = export("--scene", "cpu-vs-gpu", "--step", "1", "--aspect", "4:3", "--out", str(path))
    assert code == 0, err
    (_, (picture,), _), = _slides(path)
    assert picture.width / picture.height == pytest.approx(4 / 3, rel=0.01)
