"""The exported web pages (``export --format html``) in a real browser: headless Chromium
(``tests/chromium.py``; installed from Debian's package by the set-up where it may be, else
the tests are skipped naming what is missing) opens each page with no network, and a test
clicks and keys through a scene, hovers a point and reads its tooltip, tabs through every
point and roof, prints the page, and compares a screenshot of each step with the PNG
export of the same step. Every page must make no request but for itself and log nothing
to the console (no error, no warning, no message)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from tests.chromium import Browser, chromium_missing

pytestmark = pytest.mark.slow

SCENE, STEPS = "cpu-vs-gpu", 4
SHOT_WIDTH = 800  # the PNG export's width and the screenshots' (the page is laid out 1600 wide)
GRID = (80, 45)  # cells a picture is averaged over for the comparison (20 px of the 1600-px page)


def run(*argv: str) -> str:
    from explorer.commands import main as cli

    out, err = io.StringIO(), io.StringIO()
    code = cli.run(cli.parse_args(list(argv)), out, err)
    assert code == 0, err.getvalue()
    return out.getvalue()


@pytest.fixture(scope="module")
def browser():
    missing = chromium_missing()
    if missing:
        pytest.skip(missing)
    with Browser(1280, 900) as opened:
        yield opened


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    """The scene as a page (light and dark), its steps as PNGs, every scene's page, and the
    energy roofline of a model as a page of one chart."""
    folder = tmp_path_factory.mktemp("html")
    run("export", "--scene", SCENE, "--out", str(folder / "scene.html"))
    run("export", "--scene", SCENE, "--theme", "dark", "--out", str(folder / "dark.html"))
    for step in range(1, STEPS + 1):
        run("export", "--scene", SCENE, "--step", str(step), "--width", str(SHOT_WIDTH),
            "--out", str(folder / f"step-{step}.png"))
    run("export", "--scene", SCENE, "--step", "1", "--theme", "dark", "--width", str(SHOT_WIDTH),
        "--out", str(folder / "dark-1.png"))
    run("export", "--all-scenes", "--format", "html", "--out-dir", str(folder / "all"))
    run("export", "--view", "energy", "--hardware", "h100-sxm", "--model", "gpt2",
        "--out", str(folder / "energy.html"))
    return folder


def opened(browser: Browser, path: Path, suffix: str = ""):
    page = browser.new_page()
    page.navigate(path.as_uri() + suffix)
    return page


def assert_quiet(page, path: Path) -> None:
    """No request but the page itself, nothing in the console or the log."""
    assert [r.split("#")[0] for r in page.requests] == [path.as_uri()]
    assert page.console == []


def shown(page) -> dict:
    return json.loads(page.evaluate("""JSON.stringify((() => {
        const steps = [...document.querySelectorAll('section.step')];
        const visible = steps.filter(s => !s.hidden && s.getBoundingClientRect().height > 0);
        return {visible: visible.map(s => steps.indexOf(s) + 1),
                caption: visible.length ? visible[0].querySelector('h2').textContent : null,
                counter: document.getElementById('counter').textContent,
                hash: location.hash,
                prev: document.getElementById('prev').disabled,
                next: document.getElementById('next').disabled};
    })())"""))


def centre(page, selector: str) -> tuple[float, float]:
    box = json.loads(page.evaluate(
        f"JSON.stringify(document.querySelector({json.dumps(selector)}).getBoundingClientRect())"))
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


KEYS = {"ArrowRight": 39, "ArrowLeft": 37, "PageDown": 34, "PageUp": 33, "Tab": 9}


def test_a_scene_steps_by_buttons_and_keys_with_its_captions(browser, exported, catalog, models):
    from explorer.core.words.scenes import open_scenes

    scene = open_scenes(catalog, models)[SCENE]
    captions = [f"{i + 1}/{STEPS}. " + scene.caption_at(i, catalog, models) for i in range(STEPS)]
    path = exported / "scene.html"
    page = opened(browser, path)

    def at(step: int, address: str | None = None) -> None:
        now = shown(page)
        assert now["visible"] == [step] and now["caption"] == captions[step - 1]
        assert now["counter"] == f"Step {step} of {STEPS}"
        assert now["hash"] == (f"#step-{step}" if address is None else address)  # (a step's own address)
        assert (now["prev"], now["next"]) == (step == 1, step == STEPS)

    at(1, "")
    page.click(*centre(page, "#next"))
    at(2)
    page.key("ArrowRight", KEYS["ArrowRight"])
    at(3)
    page.key("PageDown", KEYS["PageDown"])
    at(4)
    page.key("PageDown", KEYS["PageDown"])  # (the last step stays)
    at(4)
    page.key("PageUp", KEYS["PageUp"])
    at(3)
    page.key("ArrowLeft", KEYS["ArrowLeft"])
    at(2)
    page.click(*centre(page, "#prev"))
    at(1)
    assert_quiet(page, path)
    page.evaluate("document.querySelector('section.step:not([hidden]) .ops').focus(), true")
    page.key("ArrowRight", KEYS["ArrowRight"])  # (arrows scroll a focused table, wide on a phone)
    at(1)
    page.key("PageDown", KEYS["PageDown"])
    at(2)
    assert page.evaluate("document.activeElement.id") == "scene-step-2-caption"  # (focus follows the step)
    again = opened(browser, path, "#step-3")  # an address that names a step opens it
    assert shown(again)["visible"] == [3] and again.evaluate("scrollY") == 0


def test_hovering_a_point_shows_its_tooltip(browser, exported):
    path = exported / "scene.html"
    page = opened(browser, path)
    # The ops of the first step whose centre the pointer reaches (not under another mark).
    ops = json.loads(page.evaluate("""JSON.stringify([...document.querySelectorAll(
            'section.step:not([hidden]) .tip[data-kind="op"]')].map((e, i) => {
        const r = e.getBoundingClientRect(), x = r.x + r.width / 2, y = r.y + r.height / 2;
        return {i, x, y, tip: e.getAttribute('data-tip'),
                reached: document.elementFromPoint(x, y).closest('.tip') === e};
    }))"""))
    reached = [o for o in ops if o["reached"] and "FLOPs:" in o["tip"]]
    assert len(ops) > 10 and reached, ops
    op = reached[0]
    page.mouse("mouseMoved", op["x"], op["y"])
    tip = json.loads(page.evaluate("""JSON.stringify((() => { const t = document.getElementById('tip');
        const r = t.getBoundingClientRect();
        return {hidden: t.hidden, text: t.textContent, inside: r.left >= 0 && r.right <= innerWidth
                && r.top >= 0 && r.bottom <= innerHeight}; })())"""))
    assert tip == {"hidden": False, "text": op["tip"], "inside": True}
    name = op["tip"].split(",")[0].split(" (")[0]
    lines = op["tip"].split("\n")
    assert lines[0].startswith(name) and lines[1].startswith("FLOPs: ") and " bytes: " in lines[1]
    assert lines[2].startswith("intensity: ") and lines[3].endswith("-bound)")
    assert lines[4].startswith("predicted time: ")
    page.mouse("mouseMoved", 2, 2)  # off every mark: the tooltip goes
    assert page.evaluate("document.getElementById('tip').hidden") is True
    assert_quiet(page, path)


def test_the_keyboard_reaches_every_point_and_roof_and_shows_its_tooltip(browser, exported):
    path = exported / "scene.html"
    page = opened(browser, path, "#step-2")
    count = page.evaluate("document.querySelectorAll('section.step:not([hidden]) .tip[tabindex]').length")
    reached = set()
    for _ in range(count + 10):
        page.key("Tab", KEYS["Tab"])
        now = json.loads(page.evaluate("""JSON.stringify((() => {
            const all = [...document.querySelectorAll('section.step:not([hidden]) .tip[tabindex]')];
            const t = document.getElementById('tip'), e = document.activeElement;
            return {index: all.indexOf(e), tip: e.getAttribute && e.getAttribute('data-tip'),
                    shown: t.hidden ? null : t.textContent, kind: e.tagName}; })())"""))
        if now["index"] >= 0:
            reached.add(now["index"])
            assert now["shown"] == now["tip"]  # focus shows the same tooltip as a hover
    assert count > 20 and reached == set(range(count))
    assert shown(page)["visible"] == [2]  # (Tab does not change the step)
    assert_quiet(page, path)


def test_every_page_opens_with_no_request_and_no_console_message(browser, exported, catalog, models):
    from explorer.core.words.scenes import open_scenes

    scenes = open_scenes(catalog, models)
    folder = exported / "all"
    index = opened(browser, folder / "index.html")
    links = json.loads(index.evaluate("JSON.stringify([...document.querySelectorAll('a')].map(a => a.href))"))
    assert len(links) == len(scenes) and all(Path(link.removeprefix("file://")).exists() for link in links)
    assert_quiet(index, folder / "index.html")
    for link, scene in zip(links, scenes.values(), strict=True):
        page = browser.new_page()
        page.navigate(link)
        steps = page.evaluate("document.querySelectorAll('section.step').length")
        assert steps == len(scene.steps)
        assert page.evaluate("document.querySelectorAll('section.step:not([hidden])').length") == 1
        assert_quiet(page, Path(link.removeprefix("file://")))
        page.send("Page.close")
    energy = opened(browser, exported / "energy.html")
    assert energy.evaluate("document.querySelectorAll('section.step svg .tip[tabindex]').length") > 5
    assert energy.evaluate("document.querySelector('nav')") is None  # (one chart: no steps)
    assert_quiet(energy, exported / "energy.html")


def test_the_recorders_see_a_request_and_a_console_error(browser, tmp_path):
    """The checks above can fail: a page that asks for a picture on the network and logs an
    error is caught by both."""
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><html><body><img src="http://example.invalid/a.png">'
                   '<script>console.error("broken")</script></body></html>')
    page = opened(browser, bad)
    assert "http://example.invalid/a.png" in page.requests
    assert ("error", "broken") in page.console


def test_the_theme_colours_the_page(browser, exported):
    page = opened(browser, exported / "dark.html")
    colours = json.loads(page.evaluate("""JSON.stringify([getComputedStyle(document.body).backgroundColor,
        getComputedStyle(document.body).color])"""))
    assert colours == ["rgb(30, 30, 30)", "rgb(238, 238, 238)"]  # the dark theme's #1e1e1e, #eeeeee


def test_printing_puts_every_step_one_after_another(browser, exported):
    import base64

    import pypdfium2  # type: ignore[import-untyped]

    page = opened(browser, exported / "scene.html")
    page.send("Emulation.setEmulatedMedia", media="print")
    laid = json.loads(page.evaluate("""JSON.stringify({
        tops: [...document.querySelectorAll('section.step')].map(s => s.getBoundingClientRect().height > 0
              ? s.getBoundingClientRect().top : null),
        nav: document.querySelector('nav').getBoundingClientRect().height,
        subtitles: [...document.querySelectorAll('section.step svg')].map(s =>
              [...s.querySelectorAll('text')].some(t => t.textContent.startsWith((s.closest('section')
              .id.split('-').pop()) + '/')))})"""))
    assert None not in laid["tops"] and laid["tops"] == sorted(laid["tops"]) and laid["nav"] == 0
    assert laid["subtitles"] == [True] * STEPS  # each step's chart draws its caption
    pdf = base64.b64decode(page.send("Page.printToPDF", landscape=True, printBackground=True)["data"])
    assert len(pypdfium2.PdfDocument(pdf)) == STEPS  # a page a step


def _grey(png: bytes):
    import numpy as np
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(png)).convert("L"), dtype=float)


def _cells(grey):
    """A picture as the mean grey of each of GRID's cells (0-255)."""
    h, w = grey.shape
    columns, rows = GRID
    return grey.reshape(rows, h // rows, columns, w // columns).mean(axis=(1, 3))


def _distance(a, b) -> float:
    return float(abs(a - b).mean())


def _offset(a, b, reach: int = 4) -> tuple[int, int]:
    """The shift (dx, dy) in pixels that lays ``b`` best over ``a`` (the least mean
    difference), within ``reach`` pixels either way."""
    h, w = a.shape
    inner = a[reach:h - reach, reach:w - reach]
    scores = {(dx, dy): float(abs(inner - b[reach + dy:h - reach + dy, reach + dx:w - reach + dx]).mean())
              for dx in range(-reach, reach + 1) for dy in range(-reach, reach + 1)}
    return min(scores, key=scores.__getitem__)


def test_each_step_s_screenshot_matches_the_png_export_of_that_step(browser, exported):
    """The browser draws the page's SVG, Qt the PNG: text is rasterised differently, the
    layout must not be. Both at 800 × 450 px: the screenshot laid over the PNG must fit
    best unshifted (to the pixel); and averaged over 80 × 45 cells (20 × 20 px of the
    1600-px page, where anti-aliasing and glyph shapes average out while a roof, a label or
    the key moved by a cell does not), it must be within 2 grey levels of its own PNG and
    nearer to it than the PNGs of the scene's other steps are (3/4 of the least of those:
    a chart of the wrong step, or a part of it moved, fails). Measured here: 0.6-0.7 grey
    levels from its own PNG; the scene's nearest two steps are 1.6 apart."""
    greys = [_grey((exported / f"step-{k}.png").read_bytes()) for k in range(1, STEPS + 1)]
    pngs = [_cells(grey) for grey in greys]
    for k in range(1, STEPS + 1):
        page = opened(browser, exported / "scene.html", f"#step-{k}")  # (no pointer over it)
        box = json.loads(page.evaluate(
            "JSON.stringify(document.querySelector('section.step:not([hidden]) svg')"
            ".getBoundingClientRect())"))
        assert abs(box["width"] / box["height"] - 16 / 9) < 0.01
        shot = page.screenshot({"x": box["x"], "y": box["y"], "width": box["width"], "height": box["height"]},
                               scale=SHOT_WIDTH / box["width"])
        (exported / f"shot-{k}.png").write_bytes(shot)
        grey = _grey(shot)
        assert grey.shape == greys[k - 1].shape == (450, 800)
        assert _offset(greys[k - 1], grey) == (0, 0)  # not shifted as a whole, to the pixel
        own = _distance(_cells(grey), pngs[k - 1])
        others = [_distance(pngs[j], pngs[k - 1]) for j in range(STEPS) if j != k - 1]
        print(f"step {k}: {own:.2f} grey levels from its PNG; the other steps' PNGs {others}")
        assert own < 2.0 and own < 0.75 * min(others)
        page.send("Page.close")
    dark = opened(browser, exported / "dark.html")  # and in the dark theme
    box = json.loads(dark.evaluate("JSON.stringify(document.querySelector('svg').getBoundingClientRect())"))
    clip = {k: box[k] for k in ("x", "y", "width", "height")}
    grey = _grey(dark.screenshot(clip, SHOT_WIDTH / box["width"]))
    png = _grey((exported / "dark-1.png").read_bytes())
    assert _offset(png, grey) == (0, 0) and _distance(_cells(grey), _cells(png)) < 2.0
    assert _distance(_cells(grey), pngs[0]) > 50  # (not the light theme's picture)


def test_a_tap_on_a_phone_shows_a_point_s_tooltip_until_a_tap_elsewhere(browser, exported):
    path = exported / "scene.html"
    page = browser.new_page(390, 844)
    page.send("Emulation.setDeviceMetricsOverride", width=390, height=844, deviceScaleFactor=2, mobile=True)
    page.send("Emulation.setTouchEmulationEnabled", enabled=True, maxTouchPoints=1)
    page.navigate(path.as_uri())

    def tap(x: float, y: float) -> None:
        page.send("Input.dispatchTouchEvent", type="touchStart", touchPoints=[{"x": x, "y": y}])
        page.send("Input.dispatchTouchEvent", type="touchEnd", touchPoints=[])

    ops = json.loads(page.evaluate("""JSON.stringify([...document.querySelectorAll(
            'section.step:not([hidden]) .tip[data-kind="op"]')].map(e => {
        const r = e.getBoundingClientRect(), x = r.x + r.width / 2, y = r.y + r.height / 2;
        return {x, y, tip: e.getAttribute('data-tip'),
                reached: document.elementFromPoint(x, y).closest('.tip') === e}; }))"""))
    op = next(o for o in ops if o["reached"])
    tip = "document.getElementById('tip')"
    tap(op["x"], op["y"])
    assert page.evaluate(f"{tip}.hidden") is False and page.evaluate(f"{tip}.textContent") == op["tip"]
    heading = centre(page, "h1")
    tap(*heading)  # (nothing to show there)
    assert page.evaluate(f"{tip}.hidden") is True
    assert_quiet(page, path)
