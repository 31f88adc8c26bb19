"""Exports for slides: PNG at the asked size and not blank, SVG valid with text as text,
PDF that renders, and the headless export command."""

import io
import shutil
import subprocess
import xml.dom.minidom

import pytest
from PySide6 import QtGui

from explorer import cli
from explorer.ui.chart.export import ExportOptions, export_chart, format_of, render_image
from explorer.ui.chart.roofline_plot import RooflinePlot


@pytest.fixture
def chart(qtbot, state):
    plot = RooflinePlot(state)
    qtbot.addWidget(plot)
    return plot


def distinct_colours(image: QtGui.QImage, step: int = 13) -> int:
    return len({image.pixel(x, y) for x in range(0, image.width(), step)
                for y in range(0, image.height(), step)})


@pytest.mark.parametrize(("width", "aspect", "height"), [(3840, "16:9", 2160), (1200, "4:3", 900)])
def test_png_has_the_asked_size_and_content(chart, tmp_path, width, aspect, height):
    path = export_chart(chart, tmp_path / "c.png", ExportOptions(width_px=width, aspect=aspect))
    image = QtGui.QImage(str(path))
    assert (image.width(), image.height()) == (width, height)
    assert distinct_colours(image) > 20
    # The plot fills the image: the axis label sits near the bottom edge, not mid-image.
    bottom_band = image.copy(0, int(height * 0.93), width, int(height * 0.07))
    assert distinct_colours(bottom_band, 5) > 3


def test_transparent_png_and_wider_pens_at_high_resolution(chart):
    image = render_image(chart, ExportOptions(width_px=1600, transparent=True))
    assert QtGui.QColor.fromRgba(image.pixel(2, 2)).alpha() == 0
    assert chart.roofs.pen_scale == 1.0  # restored after the export
    # Lines scale with the image: the dark pixels of a 3200-wide export are about 4× those
    # of a 1600-wide one (2× in each direction), not 2× (thin lines).

    def dark(img):
        colours = (QtGui.QColor.fromRgba(img.pixel(x, y)) for x in range(0, img.width(), 3)
                   for y in range(0, img.height(), 3))
        return sum(1 for c in colours if c.lightness() < 80 and c.alpha())

    small = dark(render_image(chart, ExportOptions(width_px=1600)))
    large = dark(render_image(chart, ExportOptions(width_px=3200)))
    assert 3.0 < large / small < 7.0


def test_svg_is_valid_and_keeps_text_as_text(chart, tmp_path):
    path = export_chart(chart, tmp_path / "c.svg", ExportOptions(title="Decode is memory-bound"))
    document = xml.dom.minidom.parse(str(path))
    texts = {node.firstChild.data.strip() for node in document.getElementsByTagName("text")
             if node.firstChild}
    assert "Arithmetic intensity (FLOP/byte)" in texts and "Performance (FLOP/s)" in texts
    assert "bf16 matrix 989 TFLOP/s" in texts and "Decode is memory-bound" in texts


def test_pdf_renders(chart, tmp_path):
    path = export_chart(chart, tmp_path / "c.pdf")
    assert path.read_bytes().startswith(b"%PDF")
    if shutil.which("pdftoppm") is None:
        pytest.skip("pdftoppm is not installed: the PDF was written but not rendered back")
    subprocess.run(["pdftoppm", "-png", "-r", "40", str(path), str(tmp_path / "page")], check=True)
    image = QtGui.QImage(str(tmp_path / "page-1.png"))
    # 1600 × 900 logical pixels at 96 dpi is 16.7 × 9.4 inches: 667 × 375 pixels at 40 dpi.
    assert image.width() == pytest.approx(1600 / 96 * 40, abs=3)
    assert image.height() == pytest.approx(900 / 96 * 40, abs=3)
    assert distinct_colours(image, 5) > 10


def test_bad_formats_and_options():
    with pytest.raises(ValueError, match=r"use \.png, \.svg or \.pdf"):
        format_of("chart.jpg")
    with pytest.raises(ValueError, match="aspect"):
        ExportOptions(aspect="21:9")
    with pytest.raises(ValueError, match="between 200 and 16384"):
        ExportOptions(width_px=50)


def test_export_command(tmp_path, qtbot):
    session = tmp_path / "s.yaml"
    session.write_text("schema: 1\nhardware: [a100-80gb-sxm, epyc-9654]\n"
                       "workload: {model: resnet-50, batch: 64}\n")
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(cli.parse_args(["export", "--session", str(session), "--out", str(tmp_path / "r.svg")]),
                   out, err)
    assert code == 0, err.getvalue()
    assert "wrote" in out.getvalue()
    text = (tmp_path / "r.svg").read_text()
    assert "ResNet-50" in text and "epyc-9654" in text
    code = cli.run(cli.parse_args(["export", "--out", str(tmp_path / "x.gif")]), out, err)
    assert code == 2 and "use .png, .svg or .pdf" in err.getvalue()


def test_export_dialog_and_clipboard(window, tmp_path):
    from PySide6 import QtWidgets

    from explorer.ui.export_dialog import ExportDialog

    dialog = ExportDialog(window.state, tmp_path / "slide.pdf", window)
    dialog.aspect.setCurrentText("4:3")
    dialog.title.setText("Why decode is memory-bound")
    dialog._export()
    assert dialog.written == tmp_path / "slide.pdf" and dialog.written.stat().st_size > 1000
    size_before = window.chart.size()
    assert window.chart.size() == size_before  # the window's chart was not resized
    dialog.path.setText(str(tmp_path / "slide.bmp"))
    dialog._export()
    assert "use .png, .svg or .pdf" in dialog.error.text()
    window.copy_chart()
    image = QtWidgets.QApplication.clipboard().image()
    assert image.width() == 1920 and not image.isNull()


def svg_texts(path) -> str:
    document = xml.dom.minidom.parse(str(path))
    return "\n".join(node.firstChild.data for node in document.getElementsByTagName("text")
                     if node.firstChild)


def export(*argv):
    out, err = io.StringIO(), io.StringIO()
    return cli.run(cli.parse_args(["export", *argv]), out, err), out.getvalue(), err.getvalue()


def test_a_scene_step_exports_with_its_caption(tmp_path, qtbot):
    code, _, err = export("--scene", "bandwidth-parallelism", "--step", "1", "--out", str(tmp_path / "s.svg"))
    assert code == 0, err
    texts = svg_texts(tmp_path / "s.svg")
    assert "Bandwidth needs parallelism" in texts
    assert "406 ns" in texts and "40.4 GB/s" in texts  # the caption, filled from the catalogue
    assert "HBM2e 40.4 GB/s (derived)" in texts  # the capped roof
    code, _, err = export("--scene", "bandwidth-parallelism", "--no-caption", "--no-annotations",
                          "--out", str(tmp_path / "bare.svg"))
    texts = svg_texts(tmp_path / "bare.svg")
    assert code == 0 and "406 ns" not in texts and "TFLOP/s" not in texts
    assert "Arithmetic intensity (FLOP/byte)" in texts


def test_all_scenes_make_a_deck(tmp_path, qtbot, catalog, models):
    from explorer.core.scenes import load_default_scenes

    code, out, err = export("--all-scenes", "--out-dir", str(tmp_path / "deck"), "--format", "svg")
    assert code == 0, err
    scenes = load_default_scenes(catalog, models)
    files = sorted((tmp_path / "deck").glob("*.svg"))
    assert len(files) == sum(len(s.steps) for s in scenes.values()) == out.count("wrote")
    for path in files:
        assert "Arithmetic intensity (FLOP/byte)" in svg_texts(path)
    assert (tmp_path / "deck" / "01-cpu-vs-gpu-1.svg").exists()


@pytest.mark.parametrize(("argv", "message"), [
    (["--all-scenes"], "needs --out-dir"),
    (["--all-scenes", "--out-dir", "d", "--step", "2"], "leave out --out and --step"),
    (["--step", "2", "--out", "x.png"], "--step needs --scene"),
    (["--scene", "tensor-cores", "--step", "4", "--out", "x.png"], "has steps 1 to 3, not 4"),
    (["--scene", "tensor-cores", "--model", "gpt2", "--out", "x.png"], "are for a chart without"),
    (["--scene", "tensor-core", "--out", "x.png"], "did you mean tensor-cores"),
])
def test_export_usage_errors(tmp_path, monkeypatch, qtbot, argv, message):
    monkeypatch.chdir(tmp_path)
    code, _, err = export(*argv)
    assert code == 2 and message in err


def test_png_at_a_dpi_is_a_full_slide(tmp_path, qtbot):
    code, _, err = export("--dpi", "150", "--out", str(tmp_path / "c.png"))
    assert code == 0, err
    image = QtGui.QImage(str(tmp_path / "c.png"))
    assert image.width() == round(13.333 * 150) and image.height() == round(13.333 * 150 * 9 / 16)
    assert image.dotsPerMeterX() == round(150 / 0.0254)
    code, _, err = export("--dpi", "96", "--aspect", "4:3", "--out", str(tmp_path / "d.png"))
    assert QtGui.QImage(str(tmp_path / "d.png")).width() == 960
