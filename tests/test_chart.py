"""The chart description, without Qt: on every scene step, every design-lab stage and a
four-device overlay, at window, presentation and slide sizes, no two texts overlap, none is
clipped, labels stay inside the plot, and slide text is large enough to project."""

import itertools
from dataclasses import replace

import pytest

from explorer.chart.elements import Page, Text
from explorer.chart.geometry import inside, overlap, square
from explorer.chart.model import build_chart
from explorer.chart.options import ChartOptions, style_slots
from explorer.chart.svg import chart_svg
from explorer.core.hardware.efficiency import published
from explorer.core.model.session import Session
from explorer.core.model.workload import WorkloadParams
from explorer.core.words.design_lab import STAGES, Lab
from explorer.document import Document

PAGES = {  # the chart area of a window at 1024×768, 1366×768, 1920×1080; presentation; slides
    "1024x768": Page.screen(640, 560), "1366x768": Page.screen(920, 600), "1920x1080": Page.screen(1400, 880),
    "presenting": Page.screen(1900, 1060, scale=1.6), "slide 16:9": Page.slide(1600, 900),
    "slide 4:3": Page.slide(1600, 1200),
}
FOUR = ("h100-sxm", "mi300x", "epyc-9654", "rtx-4090")


def problems(chart) -> list[str]:
    out = []
    page = replace(chart.plot, left=0, top=0, right=chart.page.width, bottom=chart.page.height)
    for text in chart.texts:
        if not inside(text.corners, page, -0.5):
            out.append(f"clipped by the page: {text.text!r}")
        if text.kind in ("roof", "ridge", "measured") and not inside(text.corners, chart.plot, 0.0):
            out.append(f"outside the plot: {text.text!r}")
    for a, b in itertools.combinations(chart.texts, 2):
        if overlap(a.corners, b.corners):
            out.append(f"{a.text!r} overlaps {b.text!r}")
    return out + on_other_lines(chart)


LABELS = ("roof", "link", "measured", "ridge")


def on_other_lines(chart) -> list[str]:
    """Labels drawn on a line (the stroke, as wide as it is drawn) they do not name: a roof's
    label on another device's roof reads as that one's (issue 58: in presentation mode,
    contrast theme, at 1920 px)."""
    from explorer.chart.layout import stroke_shape

    out = []
    drawn = [(line, stroke_shape(a, b, line.stroke.width / 2)) for line in chart.lines
             if line.kind in ("roof", "link", "measured-roof", "original")
             for a, b in zip(line.points, line.points[1:], strict=False)]
    for text in chart.texts:
        if text.kind not in LABELS or text.kind == "ridge":
            continue
        for line, shape in drawn:
            own = (text.ref is not None and line.ref == text.ref) or (
                text.ref is None and line.kind in ("link", "measured-roof")
                and text.tooltip and line.tooltip == text.tooltip)
            if not own and overlap(text.corners, shape):
                out.append(f"{text.text!r} lies on another line ({line.ref or line.kind})")
                break
    return out


def documents(catalog, models, scenes):
    for scene in scenes.values():
        for i in range(len(scene.steps)):
            s = scene.session_at(i)
            yield f"{scene.id} {i + 1}", Document(catalog, models, s), scene.caption_at(i, catalog, models)
    lab = Lab(catalog["xeon-platinum-8480"], catalog["a100-80gb-sxm"], "llama-3-8b", models["llama-3-8b"])
    for stage in range(len(STAGES)):
        at = replace(lab, stage=stage)
        devices = {hw.id: hw for hw in (at.cpu, at.gpu, at.device())}
        from explorer.core.hardware.catalog import Catalog

        yield f"lab {stage}", Document(Catalog(devices.values()), models, at.session()), at.text()
    yield "four devices", Document(catalog, models, Session(hardware=FOUR)), ""
    yield "four devices, does not fit", Document(catalog, models, Session(
        hardware=("h100-sxm", "h200-sxm", "mi300x", "epyc-9654"), model="llama-3-70b")), ""
    yield "four devices, prefill", Document(catalog, models, Session(
        hardware=FOUR, params=WorkloadParams(phase="prefill", seq=2048))), ""
    yield "tp 8", Document(catalog, models, Session(
        hardware=("h100-sxm",), model="llama-3-70b", params=WorkloadParams(context=4096, tp=8))), ""
    yield "training over nodes", Document(catalog, models, Session(
        hardware=("h100-sxm", "b200"), model="llama-3-70b",
        params=WorkloadParams(phase="train", batch=64, seq=4096, tp=8, pp=4, dp=2, recompute="full"))), ""


@pytest.fixture(scope="module")
def scenes(catalog, models):
    from explorer.core.words.scenes import load_default_scenes

    return load_default_scenes(catalog, models)


@pytest.mark.parametrize("size", list(PAGES))
def test_no_label_overlaps_or_is_clipped(catalog, models, scenes, size):
    page = PAGES[size]
    failures = {}
    for name, doc, caption in documents(catalog, models, scenes):
        chart = build_chart(doc, page, ChartOptions(subtitle=caption if page.text >= 18 else None))
        found = problems(chart)
        if found:
            failures[name] = found[:3]
    assert not failures


def test_slide_text_is_large_enough_to_project(catalog, models):
    for page in (Page.slide(1600, 900), Page.slide(1600, 1200)):
        chart = build_chart(Document(catalog, models, Session(hardware=FOUR)), page)
        for text in chart.texts:
            least = 0.031 if text.kind == "title" else 0.02
            assert text.size >= least * page.height, (text.text, text.size)


def test_one_device_is_named_and_overlays_use_short_names(catalog, models):
    one = build_chart(Document(catalog, models, Session()), PAGES["slide 16:9"])
    assert "on H100 SXM" in one.texts_of("title")[0].text
    four = build_chart(Document(catalog, models, Session(hardware=FOUR)), PAGES["slide 16:9"])
    roof_texts = [t.text for t in (*four.texts_of("roof"), *four.overflow)]
    assert not any("mi300x" in t or "h100-sxm" in t for t in roof_texts)
    # (where every label has room with its device's name: a window at 1366 px; on a slide
    # one would find room only without it, and all drop it: ``test_one_picture_names_devices…``)
    two = build_chart(Document(catalog, models, Session(hardware=("a100-80gb-sxm", "h100-sxm"))),
                      PAGES["1366x768"])
    assert all(t.text.startswith(("H100 SXM: ", "A100 80GB: ")) for t in two.texts_of("roof"))
    # MI300X's fp32 vector and matrix roofs (both 163.4 TFLOP/s) are one line, one label.
    assert sum("163 TFLOP/s" in t for t in roof_texts) == 1


def test_a_device_keeps_its_style_whatever_its_position(catalog, models):
    slots = style_slots({}, ("h100-sxm", "xeon-platinum-8480"))
    assert slots == {"h100-sxm": 0, "xeon-platinum-8480": 1}
    swapped = style_slots(slots, ("xeon-platinum-8480", "h100-sxm", "t4"))
    assert swapped == {"h100-sxm": 0, "xeon-platinum-8480": 1, "t4": 2}
    assert style_slots(swapped, ("t4",)) == {"t4": 2}

    def xeon_stroke(hardware):
        chart = build_chart(Document(catalog, models, Session(hardware=hardware)), PAGES["slide 16:9"],
                            ChartOptions(slots=slots))
        return next(line.stroke for line in chart.lines
                    if line.ref and line.ref.device == "xeon-platinum-8480")

    assert xeon_stroke(("h100-sxm", "xeon-platinum-8480")) == xeon_stroke(("xeon-platinum-8480", "h100-sxm"))


def test_the_ridge_is_the_binding_roof_s(catalog, models):
    # fp32 workload, fp8 roof drawn too: the ridge shown is the fp32 roof's, as Explain says.
    doc = Document(catalog, models, Session(params=WorkloadParams(dtype="fp32"), precisions=("fp32", "fp8")))
    chart = build_chart(doc, PAGES["slide 16:9"])
    ridge = next(t for t in (*chart.texts_of("ridge"), *chart.overflow) if t.kind == "ridge")
    assert ridge.text.startswith("ridge 20 FLOP/byte")  # 66.9 TFLOP/s / 3.35 TB/s


def test_measured_points_refit_the_range(catalog, models, tmp_path):
    from tests.kernels.test_results import point, results

    path = tmp_path / "cpu.json"
    results(point(flops=10**6, bytes=10**9, time_median_s=1.0, time_p20_s=0.9,
                  time_p80_s=1.1)).save(path)  # 0.001 FLOP/byte
    doc = Document(catalog, models, Session())
    doc.add_results(str(path))
    chart = build_chart(doc, PAGES["slide 16:9"])
    assert chart.x_range[0] <= 0.001 / 3 and any(m.kind == "measured" for m in chart.markers)


def test_svg_is_plain_and_sized(catalog, models):
    svg = chart_svg(build_chart(Document(catalog, models, Session(hardware=FOUR)), PAGES["slide 16:9"]))
    assert 'width="1600" height="900" viewBox="0 0 1600 900"' in svg
    for banned in ("clipPath", "clip-path", "vector-effect", "<filter", "<image"):
        assert banned not in svg
    assert 'font-family="DejaVu Sans, Verdana, Arial, Helvetica, sans-serif"' in svg


@pytest.mark.parametrize("name", ["light", "dark", "contrast"])
def test_every_colour_keeps_contrast_with_its_background(name):
    from explorer.chart.palette import THEMES, contrast

    theme = THEMES[name]
    low = {role: round(contrast(colour, theme.background), 2) for role, colour in theme.roles().items()
           if contrast(colour, theme.background) < 4.5}
    assert not low  # WCAG AA for text: labels are drawn in these colours


def test_high_contrast_gives_every_role_its_own_colour():
    from explorer.chart.palette import THEMES

    roles = THEMES["contrast"].roles()
    # (the selection's ring is drawn in the text's colour: neutral, unlike every op group)
    assert roles["selected"] == roles["text"]
    colours = [c.lower() for role, c in roles.items() if role not in ("text", "axis", "selected")]
    colours.append(THEMES["contrast"].star.lower())
    assert len(colours) == len(set(colours))


def test_a_one_device_chart_always_names_its_device(catalog, models):
    doc = Document(catalog, models, Session(hardware=("h100-sxm",)))
    page = Page.slide(1600, 900)
    plain = build_chart(doc, page)
    assert "H100 SXM" in " ".join(t.text for t in plain.texts_of("title"))
    assert all(not t.text.startswith("H100 SXM:") for t in plain.texts_of("roof"))  # the title says it
    titled = build_chart(doc, page, ChartOptions(title="Why decode is memory-bound"))
    assert all(t.text.startswith("H100 SXM: ") for t in titled.texts_of("roof"))


def chart_with_measurements(catalog, models, path, device, *extra):
    """The chart of ``device`` showing a results file: a slow triad (2 GFLOP/s at 1/6
    FLOP/byte: 12 GB/s), a 1 TFLOP/s matmul and ``extra`` points, measured ceilings on."""
    from dataclasses import replace as with_

    from tests.kernels.test_results import point, results

    results(point(flops=2000, bytes=12000, time_median_s=1e-6, time_p20_s=0.9e-6, time_p80_s=1.1e-6),
            *extra,
            point(suite="gemm", kernel="matmul", flops=2 * 10**9, bytes=12 * 10**6, time_median_s=2e-3,
                  time_p20_s=1.9e-3, time_p80_s=2.1e-3)).save(path)
    doc = Document(catalog, models, Session(hardware=(device,)))
    doc.add_results(str(path))
    doc.replace_session(with_(doc.session, measured_roofs=True), "ceilings")
    chart = build_chart(doc, Page.slide(1600, 900))
    return chart, [t.text for t in (*chart.texts_of("measured"), *chart.overflow)]


def test_measurements_refit_the_range_and_measured_ceilings_are_labelled(catalog, models, tmp_path):
    chart, labels = chart_with_measurements(catalog, models, tmp_path / "cpu.json", "h100-sxm")
    assert chart.y_range[0] <= 2e9 / 3  # the 2 GFLOP/s triad is inside, not clipped
    measured = [m for m in chart.markers if m.kind == "measured"]
    assert len(measured) == 2 and all(inside(square(m.center, 1), chart.plot) for m in measured)
    assert "measured triad 12 GB/s" in labels and "measured fp32 matmul 1 TFLOP/s" in labels


def test_a_contended_point_is_grey_with_its_own_marker_and_no_ceiling(catalog, models, tmp_path):
    from explorer.chart import palette
    from tests.kernels.test_results import point

    busy = "other programs used 0.95 cores while it ran"
    copy = point(kernel="copy", flops=1000, bytes=12000, time_median_s=0.5e-6, time_p20_s=0.4e-6,
                 time_p80_s=0.6e-6, foreign_load=0.95, contended=busy)
    chart, labels = chart_with_measurements(catalog, models, tmp_path / "busy.json", "h100-sxm", copy)
    grey = palette.THEMES["light"].suspect
    [marker] = [m for m in chart.markers if m.kind == "measured" and m.name == "stream/copy"]
    assert (marker.symbol, marker.fill) == ("triangle-down", grey) and f"CONTENDED: {busy}" in marker.tooltip
    assert "contended: other programs were busy" in [t.text for t in chart.texts_of("key")]
    assert "measured triad 12 GB/s" in labels  # the faster copy (24 GB/s) was contended: no ceiling


def test_a_measured_cache_level_draws_its_own_labelled_roof(catalog, models, tmp_path):
    from tests.kernels.test_results import point

    l2 = point(suite="cache", kernel="scale L2", flops=1000, bytes=8000, param={"level": 2, "threads": 1},
               time_median_s=8000 / 60e9, time_p20_s=8000 / 61e9, time_p80_s=8000 / 59e9)
    chart, labels = chart_with_measurements(catalog, models, tmp_path / "cpu.json", "epyc-9654", l2)
    assert "L2 measured 60 GB/s" in labels and "measured triad 12 GB/s" in labels
    roofs = [ln for ln in chart.lines if ln.kind == "measured-roof"]
    assert len(roofs) == 3  # the fp32 peak, main memory and L2


def test_an_unlabelled_roof_keeps_its_number_whole_in_a_narrow_key():
    """The key names the device when the row has room (two rows at most), else drops the
    name (the colour and line say it); wrapping takes up to three rows before anything is
    cut, so a number is never shortened to "163 TFL…"."""
    from explorer.chart import palette
    from explorer.chart.key import fitted
    from explorer.chart.key_corner import _unlabelled

    theme, size = palette.THEMES["light"], 16.0
    text = Text("MI300X: fp32 vector & matrix 163 TFLOP/s", (0, 0), size, "#0072B2", "roof")
    assert _unlabelled(text, theme, None, size).text == text.text  # a key inside the plot grows
    assert _unlabelled(text, theme, 1000.0, size).text == text.text
    narrow = _unlabelled(text, theme, 150.0, size)
    assert narrow.text == "fp32 vector & matrix 163 TFLOP/s"
    rows = [row.text for row in fitted(narrow, size, 150.0)]
    assert " ".join(rows) == narrow.text and len(rows) <= 3


def test_communication_ops_sit_on_or_under_their_link_roof(catalog, models):
    doc = Document(catalog, models, Session(hardware=("h100-sxm",), model="llama-3-70b",
                                            params=WorkloadParams(context=4096, tp=8)))
    chart = build_chart(doc, Page.slide(1600, 900))
    [link] = [line for line in chart.lines if line.kind == "link"]
    [label] = [t for t in chart.texts if t.kind == "link"]
    assert label.text == "NVLink 4 450 GB/s per direction"
    assert "900 GB/s published (both directions together)" in link.tooltip
    # the line is y = 450 GB/s × x: check its slope on the page (log-log) is the memory roof's
    (xa, ya), (xb, yb) = link.points
    roof = next(line for line in chart.lines if line.kind == "roof" and line.ref.kind == "bandwidth")
    (ra, rya), (rb, ryb) = roof.points
    assert (yb - ya) / (xb - xa) == pytest.approx((ryb - rya) / (rb - ra), rel=1e-6)
    a = doc.analysis()
    for i, o in enumerate(a.ops):
        if o.role == "all_reduce":
            assert a.performance[i] <= a.intensity[i] * 450e9
    ops = [m for m in chart.markers if m.kind == "op" and m.name in ("attn_all_reduce", "mlp_all_reduce")]
    assert len(ops) == 2 and all("communication" in m.tooltip for m in ops)
    # the engines' one-shot (auto): two barriers of 0.6 µs, then 7 peers' 16 KiB at 450 GB/s
    assert "sends 28.7 kB over NVLink 4 (oneshot): 1.2 µs latency + 255 ns transfer" in ops[0].tooltip


def test_with_several_devices_the_link_roof_names_its_device(catalog, models):
    doc = Document(catalog, models, Session(hardware=("h100-sxm", "b200"), model="llama-3-70b",
                                            params=WorkloadParams(context=4096, tp=8)))
    for page in (Page.slide(1600, 900), Page.slide(3200, 1800)):
        chart = build_chart(doc, page)
        named = {t.text.startswith(("H100 SXM: ", "B200: ")) for t in chart.texts_of("roof")}
        link = [t for t in chart.texts if t.kind == "link"]
        # named as the roofs are (all or none); the tooltip always says whose link it is
        words = "NVLink 4 450 GB/s per direction"
        assert [t.text for t in link] == [f"H100 SXM: {words}" if named == {True} else words]
        assert link[0].tooltip.startswith("NVIDIA H100 SXM5 80 GB: NVLink 4")


def test_the_step_s_expected_time_is_drawn_below_its_bound_and_the_key_says_which(catalog, models):
    """The bound's star at FLOPs ÷ bound time, a hollow star at FLOPs ÷ expected time (the
    same intensity, lower), and the key names the efficiency; with the bound alone, neither."""
    from explorer.chart.elements import ElementKind
    from explorer.core.analysis.expected import expected_for

    doc = Document(catalog, models, Session(model="llama-3-8b", hardware=("h100-sxm",)))
    chart = build_chart(doc, PAGES["slide 16:9"])
    [bound] = [m for m in chart.markers if m.kind == ElementKind.STEP]
    [expected] = [m for m in chart.markers if m.kind == ElementKind.EXPECTED]
    e = expected_for(doc.analysis())
    t = doc.analysis().totals
    assert expected.center[0] == pytest.approx(bound.center[0])
    assert expected.center[1] == pytest.approx(chart.y_px(t.flops / e.time_s))
    assert bound.center[1] == pytest.approx(chart.y_px(t.flops / t.time_s))
    assert bound.center[1] < expected.center[1]  # lower on the page: fewer FLOP/s
    assert expected.fill is None and f"{e.ratio:.2f}× the bound" in expected.tooltip
    keys = [x.text for x in chart.texts if x.kind == ElementKind.KEY]
    assert "whole step, bound" in keys and "expected: published efficiency" in keys
    doc.set_params(efficiency="bound")
    chart = build_chart(doc, PAGES["slide 16:9"])
    assert not [m for m in chart.markers if m.kind == ElementKind.EXPECTED]
    assert "whole step" in [x.text for x in chart.texts if x.kind == ElementKind.KEY]


def test_a_profile_s_kernels_are_squares_at_their_measured_place_coloured_by_class(catalog, models, tmp_path):
    from explorer.chart.elements import ElementKind
    from explorer.chart.palette import THEMES
    from explorer.profiles.ncu import read_ncu_csv
    from tests.profiles.test_ncu import raw_page

    path = tmp_path / "run.csv"
    path.write_text(raw_page())
    doc = Document(catalog, models, Session(model="llama-3-8b", hardware=("h100-sxm",)))
    doc.show_profile(read_ncu_csv(path))  # the session keeps it
    chart = build_chart(doc, PAGES["slide 16:9"])
    squares = {m.name: m for m in chart.markers if m.kind == ElementKind.PROFILE and m.symbol == "square"}
    assert set(squares) == {"hgemm_kernel", "other"}  # the triads fold into "other" (under 1 %)
    hgemm = squares["hgemm_kernel"]
    assert hgemm.center[0] == pytest.approx(chart.x_px(4_000_020 / 64e6))
    assert hgemm.center[1] == pytest.approx(chart.y_px(4_000_020 / 2.5e-3))
    assert hgemm.fill == dict(THEMES["light"].groups)["projection"]  # a product: the projections' colour
    assert squares["other"].fill == THEMES["light"].suspect  # no name pattern: grey
    assert "run: 2 of 2 kernels" in [t.text for t in chart.texts if t.kind == ElementKind.KEY]
    # no smaller than a measured point (11 px at scale 1; they were 8 px, issue 58), the
    # larger kernel's larger
    measured_px = 11 * chart.page.lines
    assert min(m.size for m in squares.values()) >= measured_px
    assert hgemm.size > squares["other"].size
    assert not problems(chart)


def test_a_calibration_s_roofs_are_drawn_under_the_datasheet_s(catalog, models):
    """With Times › calibrated and a calibration of the device, dashed roofs at the shares it
    measured: products at gemm × the matrix peak, weights at gemm_bandwidth × the bandwidth."""
    from explorer.chart.elements import ElementKind
    from explorer.core.hardware.efficiency import CALIBRATED_FOLDER, to_text
    from explorer.paths import user_path

    h100 = next(f for f in published() if f.id == "h100")
    mine = replace(h100, id="calibrated-h100-sxm", name="h100-sxm, calibrated 2026-12-01",
                   measured="2026-12-01T10:00:00+00:00, cupy")
    path = user_path(CALIBRATED_FOLDER, "calibrated-h100-sxm.yaml")
    path.write_text(to_text(mine), encoding="utf-8")
    try:
        doc = Document(catalog, models, Session(model="llama-3-8b", hardware=("h100-sxm",),
                                               params=WorkloadParams(efficiency="calibrated")))
        chart = build_chart(doc, PAGES["slide 16:9"])
        roofs = [line for line in chart.lines if line.kind == ElementKind.MEASURED_ROOF
                 and "this machine's kernels" in line.tooltip]
        flat = [line for line in roofs if line.points[0][1] == pytest.approx(line.points[1][1])]
        assert len(roofs) == 2 and len(flat) == 1
        assert flat[0].points[0][1] == pytest.approx(chart.y_px(989.4e12 * h100.gemm), rel=1e-3)
        doc.set_params(efficiency="published")  # published factors: no such roofs
        assert not [line for line in build_chart(doc, PAGES["slide 16:9"]).lines
                    if "this machine's kernels" in line.tooltip]
    finally:
        path.unlink()


def test_communication_with_no_arithmetic_is_drawn_on_its_link_s_roof(catalog, models):
    """DeepSeek-V3 with EP 8: the all-to-alls take part of the step but have no FLOPs (no
    intensity); the NVLink roof was drawn empty (issue 58). Each is drawn on its link's roof,
    inside the plot, in the communication group's shape, area by its share as every op's;
    the key lists the group, and no longer says they are missing."""
    from explorer.chart.elements import ElementKind
    from explorer.chart.geometry import nearest
    from explorer.chart.palette import GROUP_SHAPES

    doc = Document(catalog, models, Session(model="deepseek-v3", hardware=("h200-sxm",),
                                            params=WorkloadParams(batch=64, context=2048, dtype="fp8", ep=8)))
    a = doc.analysis()
    shares = {o.name: float(s) for o, s in zip(a.ops, a.time_share, strict=True) if o.role == "all_to_all"}
    assert sum(shares.values()) > 0.05
    chart = build_chart(doc, Page.slide(1600, 900))
    [link] = [line for line in chart.lines if line.kind == ElementKind.LINK]
    pins = [m for m in chart.markers if m.kind == ElementKind.OP and m.name in shares]
    assert {m.name for m in pins} == set(shares)
    for m in pins:
        foot = nearest(m.center, *link.points)
        assert abs(foot[0] - m.center[0]) < 1e-6 and abs(foot[1] - m.center[1]) < 1e-6  # on the roof
        assert chart.plot.left < m.center[0] - m.size / 2 and m.center[1] + m.size / 2 < chart.plot.bottom
        assert m.symbol == GROUP_SHAPES["communication"] and "intensity is 0" in m.tooltip
        assert m.size == pytest.approx((8 + 22 * shares[m.name] ** 0.5) * chart.page.lines)
    texts = [t.text for t in chart.texts]
    assert "communication" in texts and "Not on the plot (no arithmetic)" not in texts
    plain = Document(catalog, models, Session(model="llama-3-8b", hardware=("h100-sxm",)))
    plain_texts = [t.text for t in build_chart(plain, Page.slide(1600, 900)).texts]
    assert "Not on the plot (no arithmetic)" not in plain_texts  # a lookup well under 0.1 %


def test_a_track_where_nothing_fits_is_dashed_and_the_key_says_so(catalog, models):
    """Llama 3 70B on one H100 (its weights alone do not fit): the whole track is dashed,
    as the key's row for it shows."""
    from explorer.chart.palette import TRACK_DASH, UNFIT_DASH
    from explorer.core.analysis.sweep import batch_sweep

    session = Session(model="llama-3-70b", hardware=("h100-sxm",), params=WorkloadParams(tp=1))
    chart = build_chart(Document(catalog, models, session), Page.slide(1600, 900))
    [track] = [line for line in chart.lines if line.kind == "track"]
    assert track.stroke.dash == tuple(d * chart.page.lines for d in UNFIT_DASH)
    assert len(track.points) == len(batch_sweep(models["llama-3-70b"], WorkloadParams(),
                                                catalog["h100-sxm"]).batch)
    assert TRACK_DASH != UNFIT_DASH and "the step as the batch changes: it does not fit" in [
        t.text for t in chart.texts]


def test_the_selection_ring_and_the_batch_track_have_key_entries(catalog, models):
    session = Session(model="llama-3-70b", hardware=("h100-sxm",), selected_op="attn_all_reduce",
                      params=WorkloadParams(context=4096, tp=8))
    chart = build_chart(Document(catalog, models, session), Page.slide(1600, 900))
    texts = [t.text for t in chart.texts]
    assert "selected: attn_all_reduce" in texts
    assert "the step as the batch changes" in texts
    assert any(line.kind == "track" for line in chart.lines)  # the mark the entry names is drawn
    assert "… where it does not fit in memory" not in texts  # TP 8 fits every batch drawn
    plain = build_chart(Document(catalog, models, replace(session, selected_op=None)), Page.slide(1600, 900))
    assert not any(t.text.startswith("selected:") for t in plain.texts)


@pytest.mark.parametrize("theme", ["light", "dark", "contrast"])
def test_the_key_draws_the_star_as_the_chart_does(catalog, models, theme):
    """The star is drawn under the ops (at batch 1 most of the step sits on it, and every op
    there stays visible), opaque, its points reaching past the largest op's mark; the key's
    star has the same outline and fill."""
    from explorer.chart.elements import MARKER_ORDER, ElementKind
    from explorer.chart.options import ChartOptions
    from explorer.chart.palette import THEMES, contrast

    doc = Document(catalog, models, Session(model="llama-3-70b", hardware=("h100-sxm",)))
    assert doc.session.params.batch == 1
    chart = build_chart(doc, PAGES["slide 16:9"], ChartOptions(theme=theme))
    stars = [m for m in chart.markers if m.symbol == "star" and m.kind in (ElementKind.STEP, ElementKind.KEY)
             and m.fill is not None]
    assert {m.kind for m in stars} == {ElementKind.STEP, ElementKind.KEY}
    assert len({(m.fill, m.fill_opacity, m.stroke.colour) for m in stars}) == 1 and stars[0].fill_opacity == 1
    # (a compared model's whole step too: a filled hexagon that hid the ops of a scene)
    assert max(MARKER_ORDER.index(ElementKind.STEP), MARKER_ORDER.index(ElementKind.COMPARED)) \
        < MARKER_ORDER.index(ElementKind.OP)
    [step] = [m for m in stars if m.kind == ElementKind.STEP]
    ops = [m for m in chart.markers if m.kind == ElementKind.OP]
    assert step.size > max(m.size for m in ops)  # its points show around any op on it
    t = THEMES[theme]
    assert step.stroke.colour == t.foreground and contrast(t.foreground, t.background) >= 4.5  # its outline
    near = [m for m in ops if abs(m.center[0] - step.center[0]) < step.size / 2
            and abs(m.center[1] - step.center[1]) < step.size / 2]
    assert len(near) >= 3  # decode at batch 1: projections, MLP and head sit on the star, drawn over it


def test_a_step_that_does_not_fit_says_so_under_the_chart(catalog, models):
    """The KV-cache scene's second slide shows the limit its caption speaks of: the parts
    of the memory the step needs and the budget, the workload panel's figures."""
    from explorer.chart.elements import ElementKind
    from explorer.core.units import format_bytes
    from explorer.core.words.scenes import open_scenes

    scene = open_scenes(catalog, models)["kv-cache-limit"]
    doc = Document(catalog, models)
    notes = []
    for index in range(len(scene.steps)):
        doc.replace_session(scene.session_at(index), "test")
        chart = build_chart(doc, PAGES["slide 16:9"])
        notes.append(" ".join(t.text for t in chart.texts if t.kind == ElementKind.NOTE))
        assert not problems(chart)
    doc.replace_session(scene.session_at(1), "test")
    t, size = doc.analysis().totals, format_bytes
    assert notes[0] == "" and notes[2] == ""  # those steps fit
    assert notes[1] == (f"Does not fit: weights {size(t.weight_bytes)} + KV cache {size(t.kv_cache_bytes)} "
                        f"+ activations {size(t.activation_bytes)} = {size(t.memory_required_bytes)}, of the "
                        f"{size(t.memory_budget_bytes)} L4 gives (90% of its usable memory)")


@pytest.mark.parametrize("size", ["1024x768", "1366x768", "slide 16:9"])
def test_one_picture_names_devices_on_every_roof_label_or_on_none(catalog, models, scenes, size):
    """A roof label that has room only without its device's name takes the others' names
    away too: within a picture the labels read alike (a scene's title names no device)."""
    pictures = [(Document(catalog, models, Session(hardware=FOUR)), ChartOptions()),
                (Document(catalog, models, scenes["compute-optimal-training"].session_at(1)),
                 ChartOptions(title=scenes["compute-optimal-training"].title))]
    for doc, options in pictures:
        chart = build_chart(doc, PAGES[size], options)
        names = tuple(f"{catalog[i].label}: " for i in doc.session.hardware)
        labels = [t for t in chart.texts if t.kind in ("roof", "link")]
        named = {t.text.startswith(names) for t in labels}
        assert len(named) <= 1, [t.text for t in labels]
        assert not problems(chart)


def test_a_label_without_its_device_s_name_keeps_its_anchor():
    from explorer.chart.elements import ElementKind
    from explorer.chart.layout import at
    from explorer.chart.roofs import one_naming

    base = Text("H100 SXM: bf16 matrix 989 TFLOP/s", (0.0, 0.0), 20.0, "#000", ElementKind.ROOF)
    other = Text("fp32 vector 66.9 TFLOP/s", (0.0, 300.0), 20.0, "#000", ElementKind.ROOF)
    for align in ("start", "end", "middle"):
        placed = at(base, (500.0, 100.0), -30.0, align, "above", 4.0)
        short = one_naming([placed, other], ("H100 SXM", "B200"))[0][0]
        assert short.text == "bf16 matrix 989 TFLOP/s"
        expected = at(replace(base, text=short.text), (500.0, 100.0), -30.0, align, "above", 4.0)
        flat = [c for p in expected.corners for c in p]
        assert [c for p in short.corners for c in p] == pytest.approx(flat)
    assert one_naming([other], ("H100 SXM", "B200")) == ([other], [])


def test_a_kernel_counted_at_its_caches_is_drawn_at_each_level_at_the_same_flops(catalog, models, tmp_path):
    """Nsight Compute's hierarchical roofline: the triad's square at DRAM, a plus at L2
    (3.5 MB served there against 3.0 MB from DRAM: a lower intensity), on one line; the
    cache marks take shapes no op group has (a hollow triangle in a group's colour read
    as an attention op)."""
    from explorer.chart.palette import GROUP_SHAPES
    from explorer.chart.profile_marks import CACHE_SYMBOLS

    assert not set(CACHE_SYMBOLS.values()) & set(GROUP_SHAPES.values())
    from explorer.chart.elements import ElementKind
    from explorer.profiles.ncu import read_ncu_csv
    from tests.profiles.test_ncu import LAUNCHES, PREFACE, _csv

    triads = [launch for launch in LAUNCHES if launch[1] == "triad_kernel"]
    metrics = list(triads[0][2])
    rows = [["ID", "Kernel Name", *metrics], ["", "", *(triads[0][2][m][0] for m in metrics)]]
    rows += [[ident, name, *(values[m][1] for m in metrics)] for ident, name, values in triads]
    path = tmp_path / "triad.csv"
    path.write_text("\n".join(PREFACE) + "\n" + _csv(rows))
    doc = Document(catalog, models, Session(model="llama-3-8b", hardware=("h100-sxm",)))
    doc.show_profile(read_ncu_csv(path))
    chart = build_chart(doc, PAGES["slide 16:9"])
    marks = {m.name: m for m in chart.markers if m.kind == ElementKind.PROFILE}
    square, at_l2 = marks["triad_kernel"], marks["triad_kernel at L2"]
    assert at_l2.symbol == "plus" and at_l2.center[1] == pytest.approx(square.center[1])
    flops = 4_000_000  # two launches of 1,000,000 FMAs, 2 FLOPs each
    assert square.center[0] == pytest.approx(chart.x_px(flops / 6_000_000))
    assert at_l2.center[0] == pytest.approx(chart.x_px(flops / 7_000_000))
    [line] = [line for line in chart.lines if line.kind == ElementKind.PROFILE]
    assert {round(x, 6) for x, _ in line.points} == {round(at_l2.center[0], 6), round(square.center[0], 6)}
    assert "the same kernel at L2 (its bytes there)" in [t.text for t in chart.texts if t.kind == "key"]
    assert not any(m.name.endswith(" at L1") for m in marks.values())  # L1 was not counted


def test_a_key_too_tall_to_go_below_goes_beside_and_the_plot_keeps_its_height(catalog, models):
    """A narrow chart (669 × 698, a 1366 × 768 window's) with four devices, three of them
    labelled in the key: a band under the plot would have taken three quarters of the
    height and left the plot 77 px tall; beside it, the plot keeps most of the height."""
    from explorer.chart.key_below import MAX_BAND, key_band

    session = Session(model="llama-3-70b", hardware=("rtx-4090", "epyc-9654", "h100-sxm", "mi300x"))
    page = Page.screen(669, 698)
    chart = build_chart(Document(catalog, models, session), page)
    assert chart.plot.height > 0.6 * page.height
    assert chart.key is not None and chart.key.left > chart.plot.right  # beside, not below
    small = build_chart(Document(catalog, models, replace(session, hardware=("h100-sxm",))), page)
    assert small.plot.height > 0.6 * page.height
    assert MAX_BAND < 0.5 and key_band([], page)[1] < MAX_BAND * page.height


def test_a_drag_s_first_move_keeps_the_key_and_the_plot_where_they_were(catalog, models):
    """The first what-if adds a row and "(what-if)" to the key: the key stays under the
    chart in the band it had, the plot does not move, and the labels keep last frame's
    places (the hints name places of the same plot); the full layout follows the drag."""
    from explorer.core.model.session import WhatIf

    doc = Document(catalog, models, Session(model="llama-3-70b", hardware=("mi300x", "h100-sxm", "epyc-9654",
                                                                           "rtx-4090")))
    page = Page.screen(800, 690)  # a narrow window's chart: the key goes under it
    before = build_chart(doc, page)
    assert before.key_place == "below"
    doc.set_what_if("mi300x", WhatIf(bandwidth_scale=1.3))
    options = ChartOptions(ranges=(before.x_range, before.y_range), hints=before.placement,
                           key_place=before.key_place, plot=before.plot)
    moved = build_chart(doc, page, options)
    assert moved.key_place == "below" and moved.plot == before.plot and moved.key == before.key
    kept = [i for i, (a, b) in enumerate(zip(before.placement, moved.placement, strict=True)) if a == b]
    assert len(kept) >= len(before.placement) - 2  # the moved roof's labels may move; the rest stay
    assert not problems(moved)
    full = build_chart(doc, page)  # when the drag ends
    assert full.plot != before.plot and "MI300X (what-if)" in {t.text for t in full.texts}


def test_a_label_whose_hinted_place_is_taken_tries_only_a_few_others_during_a_drag():
    from explorer.chart.elements import ElementKind
    from explorer.chart.geometry import Rect
    from explorer.chart.layout import DRAG_TRIES, Request, Spots, place

    asked = []

    class Counted(Spots):
        def shape(self, index):  # a candidate tested
            asked.append(index)
            return super().shape(index)

    text = Text("label", (0.0, 0.0), 12.0, "#000000", ElementKind.ROOF)
    nowhere = Counted([(text, (-500.0, -500.0), 0.0, "start", "above", 0.0)] * 60)  # all off the plot
    plot = Rect(0, 0, 400, 300)
    assert place([Request(nowhere)], plot, [], [], hints=(5,))[2] == (-1,)
    assert len(asked) == 1 + DRAG_TRIES  # the hint and the others tried
    asked.clear()
    assert place([Request(nowhere)], plot, [], [])[2] == (-1,) and len(asked) == 60  # no drag: all


@pytest.mark.parametrize(("w", "h"), [(1000, 640), (669, 698), (800, 690), (640, 560)])
def test_a_drag_frame_never_overlaps_and_a_key_leaving_its_corner_is_laid_out_afresh(catalog, models, w, h):
    """A drag from a key inside the plot whose corner the what-if row no longer fits: the
    key goes beside or below with a plot of its own (not the whole area it had); and a
    new page mid-drag (a resize, presentation mode) lays the key out afresh."""
    from explorer.core.model.session import WhatIf

    doc = Document(catalog, models, Session(model="llama-3-70b", hardware=("mi300x", "h100-sxm", "epyc-9654",
                                                                           "rtx-4090")))
    page = Page.screen(w, h)
    before = build_chart(doc, page)
    for factor in (1.3, 0.4):
        doc.set_what_if("mi300x", WhatIf(bandwidth_scale=factor))
        frame = build_chart(doc, page, ChartOptions(ranges=(before.x_range, before.y_range),
                                                    hints=before.placement, key_place=before.key_place,
                                                    plot=before.plot))
        assert not problems(frame) and frame.plot.height > 0.3 * h
        if frame.key_place != before.key_place:
            assert frame.key.width > 0.1 * w or frame.key_place == "below"
        bigger = build_chart(doc, Page.screen(w, h, scale=1.6), ChartOptions(
            ranges=(before.x_range, before.y_range), hints=before.placement, key_place=before.key_place))
        assert bigger.plot.height > 0 and not problems(bigger)


def test_each_op_group_has_its_own_shape_on_the_chart_and_in_the_key(catalog, models):
    """Ops of a group share a shape no other group has, and the key draws the group in it."""
    from explorer.chart.elements import ElementKind
    from explorer.chart.palette import GROUP_SHAPES, THEMES, group_of

    doc = Document(catalog, models, Session(model="llama-3-70b", hardware=("h100-sxm",)))
    chart = build_chart(doc, PAGES["slide 16:9"])
    role = {o.name: o.role for o in doc.analysis().ops}
    ops = [m for m in chart.markers if m.kind == ElementKind.OP]
    shapes = {group_of(role[m.name]): m.symbol for m in ops}
    assert len(shapes) >= 4 and len(set(shapes.values())) == len(shapes)
    assert all(m.symbol == GROUP_SHAPES[group_of(role[m.name])] for m in ops)
    colours = dict(THEMES["light"].groups)
    for group, symbol in shapes.items():
        [row] = [t for t in chart.texts if t.kind == ElementKind.KEY and t.text == group]
        [swatch] = [m for m in chart.markers if m.kind == ElementKind.KEY
                    and abs(m.center[1] - row.origin[1]) < 1 and m.center[0] < row.origin[0]]
        assert (swatch.symbol, swatch.stroke.colour) == (symbol, colours[group])


@pytest.mark.parametrize("theme", ["dark", "contrast"])
@pytest.mark.parametrize("where", ["1024x768", "presenting", "slide 16:9"])
def test_four_devices_lay_out_cleanly_in_every_theme(catalog, models, where, theme):
    """The contrast theme draws lines 1.6 times as wide: no label on another line's stroke,
    none over another text or the memory note, in presentation mode too (issue 58)."""
    for hardware in (("h100-sxm", "h200-sxm", "mi300x", "epyc-9654"), FOUR):
        doc = Document(catalog, models, Session(hardware=hardware, model="llama-3-70b"))
        chart = build_chart(doc, PAGES[where], ChartOptions(theme=theme))
        assert not problems(chart), (hardware, problems(chart)[:3])
        if chart.key is not None and chart.key_place == "beside":
            notes = [t for t in chart.texts if t.kind == "note"]
            assert all(chart.key.bottom <= min(y for _, y in t.corners) for t in notes)


@pytest.mark.parametrize("size", list(PAGES))
def test_coinciding_roofs_get_one_label_and_every_roof_label_names_its_device_or_none_does(
        catalog, models, size):
    """Issue 58: an H100's and an H200's compute roofs (the same 989 and 66.9 TFLOP/s) had
    two identical unnamed labels stacked; now one label names both. Labels on the plot and
    the key's rows for labels with no room name their devices alike: all, or none (the
    key's lines then say which is which)."""
    from explorer.chart.roofs import name_prefixes

    doc = Document(catalog, models, Session(hardware=("h100-sxm", "h200-sxm", "mi300x", "epyc-9654"),
                                            model="llama-3-70b"))
    chart = build_chart(doc, PAGES[size])
    labels = [t for t in (*chart.texts, *chart.overflow) if t.kind in ("roof", "link")]
    words = [t.text for t in labels]
    assert len(words) == len(set(words)), words
    prefixes = name_prefixes(("H100 SXM", "H200 SXM", "MI300X", "EPYC 9654"))
    named = {t.text.startswith(prefixes) for t in labels}
    assert len(named) == 1, words
    matrix = [w for w in words if "bf16 matrix 989 TFLOP/s" in w]
    assert matrix in (["H100 SXM, H200 SXM: bf16 matrix 989 TFLOP/s"], ["bf16 matrix 989 TFLOP/s"])
    assert not problems(chart)


def test_a_long_title_shrinks_to_stay_whole_in_two_lines(catalog, models):
    """Issue 58: a training step over 1,024 devices had its title cut ("… (1,024 devices), b…")
    in the window at 1366 px; it now takes a smaller size (no smaller than the caption's)."""
    from explorer.chart.heading import CAPTION_SCALE
    from explorer.chart.roofline_frame import default_title

    params = WorkloadParams(phase="train", batch=1024, seq=4096, tp=8, pp=4, dp=32, recompute="full")
    doc = Document(catalog, models, Session(model="llama-3-70b", hardware=("h100-sxm",), params=params))
    page = Page.screen(560, 600)
    chart = build_chart(doc, page)
    titles = chart.texts_of("title")
    assert len(titles) == 2 and " ".join(t.text for t in titles) == default_title(doc)
    assert CAPTION_SCALE * page.text <= titles[0].size < page.title
    short = build_chart(Document(catalog, models, Session()), page).texts_of("title")
    assert all(t.size == page.title for t in short)  # a title that fits keeps its size
    assert not problems(chart)
