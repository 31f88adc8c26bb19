"""The chart as a web page (``export --format html``), read as text: one self-contained file
a scene, the same chart as the other outputs, every point and roof focusable with its
tooltip, and a table of the step's ops. The page in a real browser: test_html_browser.py."""

from __future__ import annotations

import base64
import hashlib
import io
import re
from html import unescape
from pathlib import Path

import pytest

from explorer.chart.elements import ElementKind
from explorer.chart.html_page import PageStep, chart_page, live_svg, ops_table
from explorer.chart.points import op_infos
from explorer.chart.slides import ExportOptions, slide_chart
from explorer.chart.svg import chart_svg, page_tip
from explorer.commands import main as cli
from explorer.core.words.scenes import open_scenes
from explorer.document import Document

SCENE = "cpu-vs-gpu"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(cli.parse_args(list(argv)), out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def scene(catalog, models):
    return open_scenes(catalog, models)[SCENE]


@pytest.fixture(scope="module")
def first_step(catalog, models, scene):
    """The scene's first step as the export draws it: (chart, ops)."""
    doc = Document(catalog, models)
    doc.replace_session(scene.session_at(0), "test")
    chart = slide_chart(doc, ExportOptions(title=scene.title))
    return chart, tuple(op_infos(doc.analysis()))


def sections(page: str) -> list[str]:
    return re.findall(r'<section class="step".*?</section>', page, re.S)


def test_a_scene_is_one_page_with_every_step_and_its_caption(tmp_path, catalog, models, scene):
    path = tmp_path / "scene.html"
    code, out, err = run("export", "--scene", SCENE, "--out", str(path))
    assert code == 0, err
    assert f"wrote {path} ({len(scene.steps)} step(s)" in out
    page = path.read_text()
    steps = sections(page)
    assert len(steps) == len(scene.steps) == 4
    for i, step in enumerate(steps):
        caption = f"{i + 1}/4. " + scene.caption_at(i, catalog, models)
        heading = re.search(r"<h2[^>]*>(.*?)</h2>", step, re.S)
        assert heading is not None and unescape(heading.group(1)) == caption
        assert step.count("<svg") == 1 and step.count("<table>") == 1


def test_a_step_alone_and_a_chart_without_a_scene_are_pages_of_one_step(tmp_path, catalog, models, scene):
    one = tmp_path / "one.html"
    assert run("export", "--scene", SCENE, "--step", "2", "--out", str(one))[0] == 0
    steps = sections(one.read_text())
    assert len(steps) == 1 and unescape(steps[0]).count("2/4. " + scene.caption_at(1, catalog, models)) == 1
    assert '<nav aria-label="Steps">' not in one.read_text()  # nothing to step through
    chart = tmp_path / "chart.html"
    assert run("export", "--hardware", "h100-sxm", "--model", "gpt2", "--out", str(chart))[0] == 0
    assert len(sections(chart.read_text())) == 1


def test_the_page_loads_nothing_and_its_policy_allows_only_its_own_style_and_script(tmp_path):
    path = tmp_path / "scene.html"
    assert run("export", "--scene", SCENE, "--out", str(path))[0] == 0
    page = path.read_text()
    assert not re.search(r"\b(src|href)\s*=|url\(|@import|<link|<iframe|<img|https?://(?!www\.w3\.org/2000/svg)",
                         page.replace("pytorch.org", "").replace("https://", "https_")), \
        "the page refers to something outside it"
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert policy is not None and "default-src 'none'" in policy.group(1)
    style = re.search(r"<style>(.*?)</style>", page, re.S)
    script = re.search(r"<script>(.*?)</script>", page, re.S)
    assert style is not None and script is not None
    for kind, text in (("style-src", style.group(1)), ("script-src", script.group(1))):
        digest = base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()
        assert f"{kind} 'sha256-{digest}'" in policy.group(1)


def test_tooltip_texts_name_the_op_flops_bytes_intensity_bound_and_time(first_step):
    """Llama 3 8B (hidden size 4096, its config.json) decoding one token in bf16 on the
    CPU: q_proj multiplies a 4096-vector by a 4096×4096 matrix, 2·4096² = 33.6 MFLOP, and
    reads the matrix, 4096²·2 bytes = 33.6 MB (the 16 kB of activations do not show)."""
    chart, ops = first_step
    q_proj = next(o for o in ops if o.name == "q_proj")
    assert q_proj.flops == 2 * 4096 * 4096
    svg = live_svg(chart, "chart")
    tips = [unescape(t) for t in re.findall(r'data-tip="([^"]*)"', svg)]
    tip = next(t for t in tips if t.startswith("q_proj"))
    for part in ("FLOPs: 33.6 MFLOP", "bytes: 33.6 MB", "intensity: 1 FLOP/byte", "(memory-bound)",
                 "predicted time:"):
        assert part in tip
    table = ops_table(ops, "ops")
    row = re.search(r"<tr><th scope=\"row\">q_proj \(×32 layers\)</th>(.*?)</tr>", table)
    assert row is not None
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row.group(1))
    assert cells[:3] == ["projection", "33.6 MFLOP", "33.6 MB"] and cells[5] == "memory"
    assert table.count('<tr><th scope="row">') == len(ops) > 10


def test_every_point_and_roof_is_focusable_and_labelled_with_its_tooltip(first_step):
    chart, _ = first_step
    svg = live_svg(chart, "chart")
    focusable = re.findall(
        r'<(\w+)[^>]*? class="tip" tabindex="0" role="img" aria-label="([^"]*)" data-tip="([^"]*)"', svg)
    expected = [page_tip(e.tooltip) for e in (*chart.lines, *chart.markers)
                if e.tooltip and e.kind not in (ElementKind.KEY, ElementKind.KEY_LIVE)]
    assert all("drag" not in tip for tip in expected)  # (a page cannot drag as the window does)
    assert any("drag up or down" in e.tooltip for e in chart.lines)
    assert sorted(unescape(label) for _, label, _ in focusable) == sorted(expected)
    assert all(label == tip for _, label, tip in focusable)
    kinds = [e.kind for e in (*chart.lines, *chart.markers) if e.tooltip]
    assert kinds.count(ElementKind.OP) == len([m for m in chart.markers if m.kind == ElementKind.OP]) > 10
    roofs = [line for line in chart.lines if line.kind == ElementKind.ROOF]
    assert kinds.count(ElementKind.ROOF) == len(roofs) >= 3
    assert "<title>" not in svg  # (the page's tooltip instead of the browser's own)


def test_the_page_draws_the_same_shapes_as_the_svg_export(first_step):
    """Live or plain, the same chart description: the same polylines, polygons and circles
    in the same order (the live one adds a transparent wider stroke over each roof)."""
    chart, _ = first_step
    shapes = r'(?:points|cx|cy|r)="[^"]*"'
    plain = re.findall(shapes, chart_svg(chart))
    live = re.findall(shapes, live_svg(chart, "chart"))
    hits = re.findall(r'<polyline (points="[^"]*") stroke="transparent"', live_svg(chart, "chart"))
    for hit in hits:
        live.remove(hit)
    assert plain == live and len(hits) > 3
    assert "tabindex" not in chart_svg(chart)


def test_a_page_opens_at_a_step_in_its_theme(first_step):
    chart, ops = first_step
    page = chart_page("title", [PageStep(chart, "one", ops), PageStep(chart, "two", ops)], start=1)
    assert '<body data-start="1">' in page and "--bg: #ffffff; --fg: #000000;" in page
    with pytest.raises(ValueError):
        chart_page("title", [PageStep(chart, "one", ops)], start=1)


def test_the_dark_theme_colours_the_page_and_the_chart(tmp_path):
    path = tmp_path / "dark.html"
    assert run("export", "--scene", SCENE, "--theme", "dark", "--out", str(path))[0] == 0
    page = path.read_text()
    assert "color-scheme: dark; --bg: #1e1e1e; --fg: #eeeeee;" in page
    assert page.count('<rect x="0" y="0" width="1600" height="900" fill="#1e1e1e"/>') == 4


def test_all_scenes_are_a_folder_of_pages_with_an_index(tmp_path, catalog, models):
    scenes = open_scenes(catalog, models)
    code, _, err = run("export", "--all-scenes", "--format", "html", "--out-dir", str(tmp_path))
    assert code == 0, err
    pages = sorted(p.name for p in tmp_path.glob("*.html") if p.name != "index.html")
    assert pages == [f"{n:02d}-{s.id}.html" for n, s in enumerate(scenes.values(), 1)]
    index = (tmp_path / "index.html").read_text()
    assert re.findall(r'<a href="([^"]+)">', index) == pages
    for name, scene in zip(pages, scenes.values(), strict=True):
        assert len(sections(Path(tmp_path, name).read_text())) == len(scene.steps)
