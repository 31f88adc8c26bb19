"""Exports for slides: PNG at the asked size and not blank, SVG valid with text as text,
PDF that renders, and the headless export command."""

import io
import json
import re
import shutil
import subprocess
import xml.dom.minidom

import pytest
from PySide6 import QtCore, QtGui

from explorer.commands import main as cli
from explorer.ui.chart.export import ExportOptions, export_chart, format_of, render_image


@pytest.fixture
def chart(qtbot, state):
    """What an export draws: the document (the window's state is one)."""
    return state


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
    assert "H100 SXM: bf16 matrix 989 TFLOP/s" in texts and "Decode is memory-bound" in texts


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
    with pytest.raises(ValueError, match=r"use \.png, \.svg, \.pdf, \.json"):
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
    shown = " ".join(re.findall(r"<text[^>]*>([^<]*)</text>", (tmp_path / "r.svg").read_text()))
    assert "ResNet-50" in shown and "EPYC 9654" in shown and "epyc-9654" not in shown  # names, not ids
    code = cli.run(cli.parse_args(["export", "--out", str(tmp_path / "x.gif")]), out, err)
    assert code == 2 and "use .png, .svg, .pdf, .json" in err.getvalue()


def test_the_export_dialog_keeps_its_own_width(window, tmp_path):
    """The dialog's width field does not hide QWidget.width(), which Python callers use."""
    from explorer.ui.export_dialog import ExportDialog

    dialog = ExportDialog(window.state, tmp_path / "slide.pdf", window)
    assert isinstance(dialog.width(), int) and dialog.width_px.value() > 0


def test_export_dialog_and_clipboard(window, tmp_path, qtbot):
    from PySide6 import QtWidgets

    from explorer.ui.export_dialog import ExportDialog

    dialog = ExportDialog(window.state, tmp_path / "slide.pdf", window)
    dialog.aspect.setCurrentText("4:3")
    dialog.title.setText("Why decode is memory-bound")
    dialog._export()
    qtbot.waitUntil(lambda: not dialog.writing, timeout=10000)  # (written in the background)
    assert dialog.written == tmp_path / "slide.pdf" and dialog.written.stat().st_size > 1000
    dialog.path.setText(str(tmp_path / "slide.bmp"))
    dialog._export()
    assert "use .png, .svg, .pdf, .json" in dialog.error.text()
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
    assert "HBM2e 40.4 GB/s (what-if)" in texts  # the capped roof, a what-if of the scene
    code, _, err = export("--scene", "bandwidth-parallelism", "--no-caption", "--no-annotations",
                          "--out", str(tmp_path / "bare.svg"))
    texts = svg_texts(tmp_path / "bare.svg")
    assert code == 0 and "406 ns" not in texts and "TFLOP/s" not in texts
    assert "Arithmetic intensity (FLOP/byte)" in texts


def test_all_scenes_make_a_deck(tmp_path, qtbot, catalog, models):
    from explorer.core.words.scenes import load_default_scenes

    code, out, err = export("--all-scenes", "--out-dir", str(tmp_path / "deck"), "--format", "svg")
    assert code == 0, err
    scenes = load_default_scenes(catalog, models)
    files = sorted((tmp_path / "deck").glob("*.svg"))
    assert len(files) == sum(len(s.steps) for s in scenes.values()) == out.count("wrote")
    axes = {"roofline": "Arithmetic intensity (FLOP/byte)", "expected": "Arithmetic intensity (FLOP/byte)",
            "scaling": "Parameters N (log)", "energy": "Energy efficiency (FLOP/J)",
            "serving": "Tokens/s a user (1 / time per output token), log",
            "memory": "Memory of one device (GiB)"}
    views = [scene.view_at(i) for scene in scenes.values() for i in range(len(scene.steps))]
    for path, view in zip(files, views, strict=True):  # each slide the picture its step names
        assert axes[view] in svg_texts(path), path.name
    assert views.count("roofline") == 61 - 4 - 4 - 4 - 1 - 1 and len(set(views)) == 6
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


# -- the same picture in every renderer -------------------------------------------------------

def grey(image: QtGui.QImage, width: int = 400):
    """The image down-sampled to ``width`` and flattened to grey levels 0…1 (a NumPy array)."""
    import numpy as np

    small = image.convertToFormat(QtGui.QImage.Format.Format_ARGB32).scaledToWidth(
        width, mode=QtCore.Qt.TransformationMode.SmoothTransformation)
    bits = small.constBits()
    data = np.frombuffer(bits, np.uint8, count=small.sizeInBytes())
    data = data.reshape(small.height(), small.bytesPerLine())
    pixels = data[:, : small.width() * 4].reshape(small.height(), small.width(), 4).astype(float)
    return (pixels[..., 0] + pixels[..., 1] + pixels[..., 2]) / (3 * 255)


def four_devices(catalog, models):
    from explorer.core.model.session import Session
    from explorer.document import Document

    return Document(catalog, models, Session(hardware=("h100-sxm", "mi300x", "epyc-9654", "rtx-4090")))


def rendered_svg(renderer: str, svg: str) -> QtGui.QImage:
    if renderer == "resvg":
        resvg = pytest.importorskip("resvg_py", reason="resvg-py is not installed (pip install resvg-py)")
        data = bytes(resvg.svg_to_bytes(svg_string=svg))
    else:
        try:
            import cairosvg
        except (ImportError, OSError) as exc:  # cairosvg needs the system's libcairo
            pytest.skip(f"cairosvg cannot run here: {exc}")
        data = cairosvg.svg2png(bytestring=svg.encode())
    return QtGui.QImage.fromData(data)


@pytest.mark.parametrize("renderer", ["resvg", "cairo"])
@pytest.mark.parametrize("theme", ["light", "dark"])
def test_svg_looks_like_the_png_in_other_renderers(qtbot, catalog, models, renderer, theme):
    """resvg and cairo draw the SVG as Qt draws the PNG: mean difference at most 3 %."""
    from explorer.chart.slides import slide_svg

    doc, options = four_devices(catalog, models), ExportOptions(width_px=1600, theme=theme)
    png = render_image(doc, options)
    svg = rendered_svg(renderer, slide_svg(doc, options))
    assert (svg.width(), svg.height()) == (png.width(), png.height())
    difference = abs(grey(svg) - grey(png)).mean()
    assert difference <= 0.03, f"{renderer}: {difference:.3f}"


def test_pdf_looks_like_the_png(qtbot, catalog, models, tmp_path):
    pdfium = pytest.importorskip("pypdfium2", reason="pypdfium2 is not installed (pip install pypdfium2)")
    doc = four_devices(catalog, models)
    path = export_chart(doc, tmp_path / "c.pdf")
    page = pdfium.PdfDocument(str(path))[0]
    assert (page.get_width(), page.get_height()) == pytest.approx((1600 * 0.75, 900 * 0.75))
    bitmap = page.render(scale=1600 / page.get_width()).to_numpy()
    image = QtGui.QImage(bitmap.data, bitmap.shape[1], bitmap.shape[0], bitmap.strides[0],
                         QtGui.QImage.Format.Format_RGB888 if bitmap.shape[2] == 3 else
                         QtGui.QImage.Format.Format_RGBA8888).copy()
    png = render_image(doc, ExportOptions(width_px=1600))
    assert abs(grey(image) - grey(png)).mean() <= 0.03


@pytest.mark.parametrize("suffix", ["png", "svg", "pdf"])
def test_a_failed_export_says_why_and_leaves_no_file(chart, tmp_path, monkeypatch, suffix):
    """A full disk: the error carries the system's reason, and neither the target nor a
    temporary file is left behind (an empty file would pass for a chart)."""
    import os

    real_fdopen = os.fdopen

    class FullDisk:
        def __init__(self, handle):
            self.handle = handle

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.handle.close()

        def fileno(self):
            return self.handle.fileno()

        def write(self, data):
            raise OSError(28, "No space left on device")

    def fdopen_full(descriptor, mode="r", *args, **kwargs):
        handle = real_fdopen(descriptor, mode, *args, **kwargs)
        return FullDisk(handle) if "w" in mode else handle

    monkeypatch.setattr(os, "fdopen", fdopen_full)
    with pytest.raises(OSError, match="No space left on device"):
        export_chart(chart, tmp_path / f"c.{suffix}")
    assert list(tmp_path.iterdir()) == []


def test_a_screenshot_that_cannot_be_written_says_why(window, tmp_path, capsys):
    from explorer.ui.application import save_screenshot

    assert save_screenshot(window, str(tmp_path / "missing" / "w.png")) == 1
    err = capsys.readouterr().err
    assert f"could not write {tmp_path / 'missing' / 'w.png'}: No such file or directory" in err
    assert save_screenshot(window, str(tmp_path / "w.png")) == 0
    assert QtGui.QImage(str(tmp_path / "w.png")).width() == window.width()


def test_a_device_keeps_its_colour_and_dash_through_an_exported_scene(catalog, models):
    """cpu-vs-gpu lists [Xeon, H100] on step 2 and [H100, Xeon] on step 3: on the slides, as in
    the window, each device keeps its style."""
    from explorer.chart.slides import ExportOptions, slide_chart
    from explorer.commands.export import scene_slots
    from explorer.core.words.scenes import load_default_scenes
    from explorer.document import Document

    scene = load_default_scenes(catalog, models)["cpu-vs-gpu"]
    assert scene.session_at(1).hardware == tuple(reversed(scene.session_at(2).hardware))
    doc = Document(catalog, models)

    def styles(slots_of):
        out = {}
        for index in (1, 2):
            doc.replace_session(scene.session_at(index), "export")
            chart = slide_chart(doc, ExportOptions(), slots_of(index))
            for line in chart.lines:
                if line.kind == "roof":  # the dash's pattern (its lengths scale with the line's width)
                    dash = tuple(round(d / line.stroke.dash[0], 3) for d in line.stroke.dash)
                    out.setdefault(line.ref.device, set()).add((line.stroke.colour, dash))
        return out

    kept = styles(lambda index: scene_slots(scene, index))
    assert len(kept) == 2 and all(len(s) == 1 for s in kept.values())
    assert len(set().union(*kept.values())) == 2  # and the two devices differ
    assert any(len(s) == 2 for s in styles(lambda index: None).values())  # per picture, they swapped


def test_the_chart_as_data_holds_the_analysis_values(tmp_path, catalog, models):
    from explorer.core.analysis.analysis import analyze
    from explorer.core.model.workload import WorkloadParams

    code, _, err = export("--hardware", "h100-sxm", "--model", "llama-3-8b",
                          "--out", str(tmp_path / "c.json"))
    assert code == 0, err
    data = json.loads((tmp_path / "c.json").read_text())
    a = analyze(models["llama-3-8b"], WorkloadParams(), catalog["h100-sxm"])
    i = [o.name for o in a.ops].index("q_proj")
    q = next(m for m in data["markers"] if m["kind"] == "op" and m["name"] == "q_proj")
    assert q["intensity"] == pytest.approx(float(a.intensity[i]), rel=1e-6)
    assert q["flops_per_s"] == pytest.approx(float(a.performance[i]), rel=1e-6)
    roof = next(line for line in data["lines"] if line["kind"] == "roof" and line["roof"] == "compute")
    assert roof["points"][-1][1] == pytest.approx(989.4e12, rel=1e-9) and roof["device"] == "h100-sxm"
    assert data["title"].startswith("Llama 3 8B on H100 SXM")
    code, _, err = export("--hardware", "h100-sxm", "--model", "llama-3-8b", "--out", str(tmp_path / "c.csv"))
    rows = (tmp_path / "c.csv").read_text().splitlines()
    assert code == 0 and rows[0].startswith("element,kind,name,device,intensity_flop_per_byte")
    assert any(r.startswith("point,op,q_proj,") for r in rows)


def test_every_scene_keeps_each_devices_style_in_its_exported_data(tmp_path):
    code, _, err = export("--all-scenes", "--out-dir", str(tmp_path), "--format", "json")
    assert code == 0, err
    styles: dict[tuple[str, str], set] = {}
    for path in sorted(tmp_path.glob("*.json")):
        scene = path.stem.rsplit("-", 1)[0]
        data = json.loads(path.read_text())
        for line in data["lines"]:
            if line["kind"] == "roof" and "device" in line:  # (an energy roof is a circuit's)
                stroke = line["stroke"]
                dash = tuple(round(d / stroke["dash"][0], 3) for d in stroke["dash"])
                styles.setdefault((scene, line["device"]), set()).add((stroke["colour"], dash))
        for m in data["markers"]:
            if m["kind"] == "ridge":
                styles.setdefault((scene, m["name"] + " ridge"), set()).add(m["symbol"])
    changed = {key: seen for key, seen in styles.items() if len(seen) > 1}
    assert styles and not changed, changed
