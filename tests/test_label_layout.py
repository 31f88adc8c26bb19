"""Label placement's shortcuts change nothing but its cost: a candidate's corners made
without its text, and a crowded layout given up as soon as the key can no longer go into
a corner of the plot, give the same chart as testing everything."""

import pytest

from explorer.chart.elements import ElementKind, Page, Text
from explorer.chart.geometry import Rect, bands, box, overlap
from explorer.chart.key_corner import CornerWatch, empty_corner
from explorer.chart.layout import Spots
from explorer.chart.model import build_chart
from explorer.core.model.session import Session
from explorer.core.model.workload import WorkloadParams
from explorer.document import Document

CROWDED = ("h100-sxm", "a100-80gb-sxm", "mi300x", "h200-sxm")  # 15 labels, four with no room


def test_a_candidates_corners_are_those_of_its_text():
    text = Text("H100 SXM: HBM3 3.35 TB/s", (0.0, 0.0), 13.0, "#000000", ElementKind.ROOF)
    specs = [(text, (120.0, 300.0), angle, align, side, gap)
             for angle in (0.0, -38.5) for align in ("start", "end", "middle")
             for side in ("above", "below", "centre") for gap in (0.0, 3.0)]
    spots = Spots(specs)
    assert all(spots.corners(i) == spots[i].corners for i in range(len(spots)))
    assert all(spots.shape(i) == (spots[i].corners, box(spots[i].corners), bands(spots[i].corners))
               for i in range(len(spots)))  # worked out once, the same the second time


def _count_tests(monkeypatch) -> list[int]:
    tested = []
    shape = Spots.shape

    def counted(self, index):
        tested.append(index)
        return shape(self, index)

    monkeypatch.setattr(Spots, "shape", counted)
    return tested


SIZES = [(1000, 640), (700, 520), (1500, 900), (640, 560)]


def _forget_places() -> None:
    """Empty the chart's memos (a roof's places and what the lines leave of each), so two
    sets of layouts test their places from the same start."""
    import sys

    for name, module in list(sys.modules.items()):
        if name.startswith("explorer.chart.") and name != "explorer.chart.text":
            for value in vars(module).values():
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()


@pytest.mark.parametrize("devices", [1, 2, 3, 4])
def test_giving_up_a_layout_early_gives_the_same_chart(catalog, models, monkeypatch, devices):
    """Charts whose key goes inside, beside and below, laid out with and without the watch."""
    session = Session(model="llama-3-70b", hardware=CROWDED[:devices], params=WorkloadParams(tp=8))
    doc = Document(catalog, models, session)
    tested = _count_tests(monkeypatch)
    _forget_places()
    early = [build_chart(doc, Page.screen(*size)) for size in SIZES]
    early_tests = len(tested)
    tested.clear()
    monkeypatch.setattr(CornerWatch, "__call__", lambda self, placed, left: True)  # never gives up
    _forget_places()
    assert [build_chart(doc, Page.screen(*size)) for size in SIZES] == early
    places = {chart.key_place for chart in early}
    if devices == 1:
        assert places == {"inside"} and early_tests == len(tested)
    if devices == 4:  # every layout inside was given up before its last label
        assert "inside" not in places and all(chart.overflow for chart in early)
        assert early_tests < len(tested)


def test_the_watch_keeps_the_preferred_corner_until_a_label_covers_it():
    from explorer.chart.elements import Chart
    from explorer.chart.key import Entry

    page = Page.screen(400, 300)
    chart = Chart(page, Rect(40, 20, 380, 260), (1.0, 100.0), (1.0, 100.0), "#ffffff", "#000000")
    rows = [Entry("Devices", "heading", bold=True), Entry("H100 SXM", "line", "#ff0000")]
    watch = CornerWatch(chart, [], [], lambda left: rows + [Entry(t.text, "line") for t in left], lambda t: t)
    corner = empty_corner(chart, rows, [], [], [])
    assert corner is not None and corner.right > 300  # the bottom-right one
    assert watch([], [])
    far = Text("far away", (60.0, 200.0), 13.0, "#000000", ElementKind.ROOF)
    assert watch([far], [])
    over = Text("on the key", (corner.left + 2, corner.top + 2), 13.0, "#000000", ElementKind.ROOF)
    assert overlap(over.corners, corner.corners())
    assert watch([far, over], [])  # the top-left corner is still free
    assert empty_corner(chart, rows, [], [], [far, over]).left < 100
    over_too = Text("on the other", (45.0, 25.0), 13.0, "#000000", ElementKind.ROOF)
    assert not watch([far, over, over_too], [])
    assert empty_corner(chart, rows, [], [], [far, over, over_too]) is None


def test_a_places_memo_of_the_lines_holds_only_while_they_stay_put():
    """Spots kept from one layout to the next (a roof that stays put) remember what the
    lines left of each place; lines that move, appear or go make them test again: the same
    layout as with new spots, every time."""
    from explorer.chart.elements import Line, Stroke
    from explorer.chart.layout import Request, place

    plot, pen = Rect(0.0, 0.0, 500.0, 320.0), Stroke("#000000", 1.0)
    roof = Line(((20.0, 250.0), (480.0, 250.0)), pen, ElementKind.ROOF)
    text = Text("bf16 matrix 989 TFLOP/s", (0.0, 0.0), 13.0, "#000000", ElementKind.ROOF)
    specs = [(text, (x, 250.0), 0.0, "start", side, 3.0)
             for x in (40.0, 250.0) for side in ("above", "below")]

    def across(x: float) -> Line:  # through the places above and below the roof at x
        return Line(((x + 20.0, 200.0), (x + 30.0, 290.0)), pen, ElementKind.MEASURED_ROOF)

    kept = Spots(specs)
    taken = []
    for lines in ([], [across(40.0)], [across(40.0)], [across(250.0)], [], [across(40.0), across(250.0)]):
        layout = place([Request(kept, roof)], plot, [roof, *lines], [])
        assert layout == place([Request(Spots(specs), roof)], plot, [roof, *lines], [])
        taken.append(layout[2][0])
    assert taken == [0, 2, 2, 0, 0, -1]


def test_a_label_without_its_devices_name_keeps_every_other_field():
    """``unnamed`` builds its text field by field (a layout asks often): all but the words
    and the offset are the label's, as ``replace`` would keep them, whatever fields a text
    gains."""
    from dataclasses import fields, replace

    from explorer.chart.elements import RoofRef
    from explorer.chart.roofs import unnamed
    from explorer.chart.text import text_width

    label = Text("H100 SXM: HBM3 3.35 TB/s", (120.0, 300.0), 13.0, "#123456", ElementKind.ROOF, angle=-38.5,
                 dy=-17.0, bold=True, ref=RoofRef("h100-sxm", "bandwidth", "HBM3"), tooltip="the roof")
    label = replace(label, dx=-label.width)
    short = unnamed(label, ("H100 SXM: ",))
    assert short == replace(label, text="HBM3 3.35 TB/s", dx=-text_width("HBM3 3.35 TB/s", 13.0, True))
    assert {f.name for f in fields(Text)} == {"text", "origin", "size", "colour", "kind", "angle", "dx", "dy",
                                              "bold", "ref", "tooltip"}


def test_markers_near_a_place_include_every_one_whose_box_reaches_it():
    """``_Marks.near`` prunes by the left edges: a marker whose right edge lies an ulp to the
    right of a place's left edge still counts, whatever the rounding of ``left - reach``
    (a case found by search: left edges below zero)."""
    from explorer.chart.geometry import apart
    from explorer.chart.layout import _Marks

    marker = (None, None, None, (-26.64448886053155, 0.0, -1.4075447352260788, 1.0))
    wide = (None, None, None, (0.0, 0.0, 1.870448891096066, 1.0))
    marks = _Marks([marker, wide])
    place = (-1.4075447352260793, 0.0, 3.6, 1.0)
    assert not apart(place, marker[3])
    assert marker in marks.near(place[0], place[2])


def test_a_level_roof_s_label_is_nearer_its_own_line_than_any_other():
    """Issue 58: a label below its roof sat just above another device's roof and read as that
    one's. A place whose centre is nearer another line is passed over, one nearer its own
    taken, though neither touches the other line."""
    from explorer.chart.elements import Line, Stroke
    from explorer.chart.layout import Request, at, place

    own = Line(((0.0, 100.0), (400.0, 100.0)), Stroke("#000", 1.0), ElementKind.ROOF)
    other = Line(((0.0, 130.0), (400.0, 130.0)), Stroke("#000", 1.0), ElementKind.ROOF)
    text = Text("fp32 vector 66.9 TFLOP/s", (0.0, 0.0), 10.0, "#000", ElementKind.ROOF)
    far = at(text, (300.0, 100.0), 0.0, "end", "below", 12.0)  # centre 18 px from its line, 12 from the other
    near = at(text, (300.0, 100.0), 0.0, "end", "below", 3.0)
    assert max(y for _, y in far.corners) < 130  # it does not touch the other line
    plot = Rect(0.0, 0.0, 400.0, 300.0)
    placed, left, chosen = place([Request([far, near], own)], plot, [own, other], [])
    assert chosen == (1,) and placed == [near] and not left
    first = place([Request([far, near], own)], plot, [own], [])[2]
    assert first == (0,)  # with no other line there, the first place is taken


def test_a_label_keeps_clear_of_another_line_s_stroke_not_only_its_centre_line():
    """A projector's roofs are drawn 5 to 7 px wide: a label that only missed the centre line
    of another device's roof sat on its stroke (issue 58, presentation, contrast, 1920 px)."""
    from explorer.chart.elements import Line, Stroke
    from explorer.chart.layout import Request, at, place

    own = Line(((0.0, 76.0), (400.0, 76.0)), Stroke("#000", 1.0), ElementKind.ROOF)
    wide = Line(((0.0, 60.0), (400.0, 60.0)), Stroke("#000", 8.0), ElementKind.ROOF)
    text = Text("bf16 matrix 989 TFLOP/s", (0.0, 0.0), 10.0, "#000", ElementKind.ROOF)
    above = at(text, (300.0, 76.0), 0.0, "end", "above", 76.0 - 63.0 - text.height)  # its top at 63
    assert min(y for _, y in above.corners) == pytest.approx(63.0)  # on the stroke's lower half
    plot = Rect(0.0, 0.0, 400.0, 300.0)
    _, _, chosen = place([Request([above], own)], plot, [own, wide], [])
    assert chosen == (-1,)
    thin = Line(wide.points, Stroke("#000", 1.0), ElementKind.ROOF)
    assert place([Request([above], own)], plot, [own, thin], [])[2] == (0,)
