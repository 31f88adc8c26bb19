"""Real mouse drags on the chart: roofs ask what-if, the whole-step star sets the batch.
Each drag is one undo step; Esc or a right click cancels it."""

import math
from dataclasses import replace

import numpy as np
import pytest
from PySide6 import QtCore, QtGui
from PySide6.QtTest import QTest

from explorer.ui.chart.painter import Layer

from . import mouse


def lines(window, kind):
    return [line for line in window.chart.chart.lines if line.kind == kind]


def on_bandwidth_roof(plot):
    """A pixel on the HBM3 roof at 0.03 FLOP/byte, away from the points near 1."""
    return mouse.to_pixels(plot, -1.5, math.log10(3.35e12) - 1.5)


def test_drag_the_bandwidth_roof_up(window):
    plot = window.chart
    start = on_bandwidth_roof(plot)
    end = QtCore.QPointF(start.x(), start.y() - 60)  # 60 pixels up
    before = window.state.undo_stack.count()
    chart = plot.chart
    mouse.drag(plot, start, end)
    dy = mouse.to_view(plot, end, chart)[1] - mouse.to_view(plot, start, chart)[1]
    what_if = window.state.session.what_if("h100-sxm")
    assert what_if.bandwidth_scale == pytest.approx(10 ** dy, rel=1e-3)
    assert what_if.bandwidth_scale > 1.5
    assert window.state.primary.bandwidth_bytes_per_s == pytest.approx(3.35e12 * what_if.bandwidth_scale)
    assert window.state.undo_stack.count() == before + 1  # the whole drag is one step
    [ridge_text] = window.chart.chart.texts_of("ridge")
    assert "what-if" in ridge_text.text
    window.state.undo_stack.undo()
    assert not window.state.session.what_if("h100-sxm").active
    window.state.undo_stack.redo()
    assert window.state.session.what_if("h100-sxm").bandwidth_scale == pytest.approx(what_if.bandwidth_scale)


def test_drag_a_compute_roof_down(window):
    plot = window.chart
    start = mouse.to_pixels(plot, 3.0, math.log10(989.4e12))  # bf16 roof at 1000 FLOP/byte
    end = QtCore.QPointF(start.x(), start.y() + 50)
    chart = plot.chart
    mouse.drag(plot, start, end)
    dy = mouse.to_view(plot, end, chart)[1] - mouse.to_view(plot, start, chart)[1]
    what_if = window.state.session.what_if("h100-sxm")
    assert what_if.peak_scale("bf16 matrix") == pytest.approx(10 ** dy, rel=1e-3)
    assert what_if.peak_scale("bf16 matrix") < 1
    assert what_if.bandwidth_scale == 1.0
    assert window.state.primary.peak_flops("bf16") == pytest.approx(989.4e12 * 10 ** dy, rel=1e-3)
    assert window.state.primary.peak_flops("fp32") == pytest.approx(66.9e12)  # other roofs stay


def test_escape_cancels_a_drag(window, qtbot):
    plot = window.chart
    start = on_bandwidth_roof(plot)
    end = QtCore.QPointF(start.x(), start.y() - 80)
    before = window.state.undo_stack.count()
    mouse.drag(plot, start, end, finish=False)
    qtbot.wait(60)  # let the rate-limited update apply mid-drag
    assert window.state.session.what_if("h100-sxm").active  # live while dragging
    QTest.keyClick(plot, QtCore.Qt.Key.Key_Escape)
    mouse.release(plot, end)
    assert not window.state.session.what_if("h100-sxm").active
    assert window.state.undo_stack.count() == before
    assert not window.state.in_gesture


def test_right_click_cancels_a_drag(window):
    plot = window.chart
    start = mouse.to_pixels(plot, 3.0, math.log10(989.4e12))
    end = QtCore.QPointF(start.x(), start.y() + 40)
    mouse.drag(plot, start, end, finish=False)
    mouse.press(plot, end, mouse.RIGHT)
    mouse.release(plot, end, mouse.RIGHT)
    mouse.release(plot, end)
    assert not window.state.session.what_if("h100-sxm").active


def test_drag_the_step_along_its_batch_track(window):
    plot, state = window.chart, window.state
    [star] = [m for m in plot.chart.markers if m.kind == "step"]
    start = QtCore.QPointF(*star.center)
    star_y = mouse.to_view(plot, start)[1]
    sweep = state.sweep()
    # Aim at the track point of batch 64.
    target_i = float(sweep.intensity[list(sweep.batch).index(64)])
    target = mouse.to_pixels(plot, math.log10(target_i), star_y)
    before = state.undo_stack.count()
    mouse.drag(plot, start, QtCore.QPointF(target.x(), start.y()))
    batch = state.params.batch
    assert 50 <= batch <= 80  # the batch under the pointer, snapped to a whole number
    assert state.undo_stack.count() == before + 1
    t = state.analysis().totals
    [star] = [m for m in plot.chart.markers if m.kind == "step"]
    assert star.center[0] == pytest.approx(plot.chart.x_px(t.intensity))  # snapped
    assert window.workload_panel.batch.value() == batch  # the builder follows
    state.undo_stack.undo()
    assert state.params.batch == 1


def test_batch_from_track_is_clamped_to_what_fits(window):
    sweep = window.state.sweep()
    assert window.chart.batch_at(-5.0) == 1
    assert window.chart.batch_at(10.0) == sweep.max_batch


def test_the_datasheet_roof_stays_visible_under_a_what_if(window):
    from explorer.core.model.session import WhatIf

    state = window.state
    state.set_what_if("h100-sxm", WhatIf(bandwidth_scale=2.0))
    originals = lines(window, "original")
    assert [line.ref.label for line in originals] == ["HBM3"]  # only the moved roof has a ghost
    x, y = mouse.to_view(window.chart, QtCore.QPointF(*originals[0].points[1]))
    assert y - x == pytest.approx(math.log10(3.35e12))  # at the datasheet bandwidth
    labels = [t.text for t in window.chart.chart.texts_of("roof") if t.ref == originals[0].ref]
    assert labels and "(what-if)" in labels[0]
    state.reset_what_ifs()
    assert not lines(window, "original")


def _pixels(image) -> np.ndarray:
    image = image.convertToFormat(QtGui.QImage.Format.Format_RGBA8888)
    return np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.width(), 4).astype(int)


def test_a_drag_paints_what_a_full_paint_paints(window):
    """During a drag what stayed still comes from a cache and only what moves is painted:
    the picture is the one a full paint of the same chart makes (to antialiasing)."""
    plot = window.chart
    start = on_bandwidth_roof(plot)
    mouse.drag(plot, start, QtCore.QPointF(start.x(), start.y() - 40), steps=8, finish=False)
    mouse.move(plot, QtCore.QPointF(start.x(), start.y() - 50), mouse.LEFT)
    plot._apply_pending()
    dragged = plot.grab().toImage()  # the first paint of the roof where it is now
    still = plot._still
    chart = plot.chart
    moved = [ln for ln in chart.lines if ln.kind == "roof" and ln.ref.label.startswith("HBM")]
    assert still._kept and moved and not set(moved) & still._kept  # the dragged roof is painted live
    assert still._kept <= set((*chart.lines, *chart.markers, *chart.texts))  # nothing stale is kept
    drag, plot._drag = plot._drag, None
    try:
        full = plot.grab().toImage()  # the same chart, painted in full
    finally:
        plot._drag = drag
    mouse.release(plot, start)
    difference = abs(_pixels(dragged) - _pixels(full)).max(axis=2)
    assert (difference > 8).sum() <= 0.001 * difference.size


def test_a_drags_first_move_is_painted_directly_and_the_cache_made_after_the_next(window):
    """The first move paints everything directly (no cache can be right yet: it also
    redraws the key, which now says "what-if"); the still elements are cached once the
    second move's frame is shown (``prepare``, as the window calls it while it waits for
    the next move), and painted from the cache from the third. Every frame is the picture
    a full paint makes."""
    from explorer.chart.model import build_chart
    from explorer.chart.options import ChartOptions
    from explorer.core.model.session import WhatIf
    from explorer.ui.chart.painter import Layer, paint
    from explorer.ui.chart.still import StillContent

    def underlay(painter, chart):
        paint(painter, chart, layer=Layer.FRAME)
        paint(painter, chart, background=False, layer=Layer.KEY)

    state, plot = window.state, window.chart
    page = plot.page()
    still, kept, made = StillContent(), [], []
    for scale in (1.2, 1.4, 1.6, 1.8):  # four moves
        state.set_what_if("h100-sxm", WhatIf(bandwidth_scale=scale))
        chart = build_chart(state, page, ChartOptions())
        images = [QtGui.QImage(int(page.width), int(page.height), QtGui.QImage.Format.Format_RGB32)
                  for _ in range(2)]
        for image, cached in zip(images, (True, False), strict=True):
            painter = QtGui.QPainter(image)
            if cached:
                still.paint(painter, chart, 1.0, lambda p, c=chart: underlay(p, c), (chart.key,))
            else:
                paint(painter, chart, clip=True)
            painter.end()
        difference = abs(_pixels(images[0]) - _pixels(images[1])).max(axis=2)
        assert (difference > 8).sum() <= 0.001 * difference.size
        made.append(still.prepare(chart))  # the frame shown
        kept.append(len(still._kept))
    state.reset_what_ifs()
    assert made == [False, True, False, False]
    assert kept[0] == 0 and all(kept[1:])


def test_an_element_that_changed_once_in_a_drag_stays_live_and_the_cache_is_not_made_again(qtbot):
    """A star drag changes the batch on some moves and not on others: the note under the
    axis changes, stays, changes again. Once it has changed it is painted live for the rest
    of the drag, so its standing still and changing again remake nothing; a roof that never
    moved stays in the cache. Every frame is the picture a full paint makes."""
    from explorer.chart.elements import Chart, ElementKind, Line, Page, Stroke, Text
    from explorer.chart.geometry import Rect
    from explorer.ui.chart.painter import paint
    from explorer.ui.chart.still import StillContent

    page = Page.screen(400, 300)
    base = Chart(page, Rect(40, 20, 380, 260), (1, 10), (1, 10), "#ffffff", "#000000")
    roof = Line(((40.0, 250.0), (380.0, 30.0)), Stroke("#1f77b4", 2.0), ElementKind.ROOF)
    track = Line(((60.0, 200.0), (300.0, 200.0)), Stroke("#888888", 1.0), ElementKind.TRACK)

    def note(batch):
        return Text(f"Batch {batch}: 80 GB of 192 GB", (200.0, 285.0), 13.0, "#000000", ElementKind.NOTE)

    still, made, kept = StillContent(), [], []
    for batch in (1, 2, 2, 3, 3, 4, 4, 4):  # moves: the batch changes on some, not on others
        chart = replace(base, lines=(roof, track), texts=(note(batch),))
        images = [QtGui.QImage(400, 300, QtGui.QImage.Format.Format_RGB32) for _ in range(2)]
        for image, cached in zip(images, (True, False), strict=True):
            painter = QtGui.QPainter(image)
            if cached:
                still.paint(painter, chart, 1.0, lambda p, c=chart: paint(p, c, layer=Layer.FRAME), ())
            else:
                paint(painter, chart, clip=True)
            painter.end()
        made.append(still.prepare(chart))  # the frame shown: the cache made where it is wanted
        kept.append(still._kept)
        difference = abs(_pixels(images[0]) - _pixels(images[1])).max(axis=2)
        assert (difference > 8).sum() <= 0.001 * difference.size
    # The first move paints directly; after the second the roof and the track are cached
    # (the note changed); the note, standing still on the third, fifth and seventh moves,
    # stays live.
    assert made == [False, True, False, False, False, False, False, False]
    assert all(k == {roof, track} for k in kept[1:])


def test_a_real_drag_caches_what_stays_still_after_its_second_move(window):
    """With the pointer over the roof before the press (as with a real mouse) or not, the
    press paints as usual, the first move directly, and once the second move's frame is
    shown (not in its paint) the cache is made, while the window waits for the next move."""
    from PySide6 import QtWidgets

    plot = window.chart
    start = on_bandwidth_roof(plot)
    for hover in (True, False):
        if hover:
            mouse.move(plot, start)  # the roof under the pointer is drawn wider
        mouse.press(plot, start)
        plot.grab()
        assert not plot._still._previous
        kept, asked, made = [], [], []
        for dy in (10, 20, 30):
            mouse.move(plot, QtCore.QPointF(start.x(), start.y() - dy), mouse.LEFT)
            plot._apply_pending()
            plot.repaint()  # the frame, as the update the move asked for paints it
            asked.append(plot._prepare.isActive())  # the paint left the cache for later
            before = plot._still._pixmaps
            QtWidgets.QApplication.processEvents()  # the event loop idle: the cache made
            made.append(plot._still._pixmaps is not before)
            kept.append(len(plot._still._kept))
        assert asked[:2] == [False, True] and made[1]
        assert plot._still._previous and kept[0] == 0 and kept[1] and kept[2] == kept[1]
        mouse.release(plot, QtCore.QPointF(start.x(), start.y() - 30))
        window.state.undo_stack.undo()


def test_another_button_let_go_during_a_drag_leaves_the_drag_going(window):
    """(It once dropped the drag without ending its gesture: no undo step, and the garbage
    collector, paused while a gesture lasts, stayed off.)"""
    import gc

    plot = window.chart
    start = on_bandwidth_roof(plot)
    mouse.drag(plot, start, QtCore.QPointF(start.x(), start.y() - 30), steps=3, finish=False)
    mouse.release(plot, QtCore.QPointF(start.x(), start.y() - 30), QtCore.Qt.MouseButton.MiddleButton)
    assert window.state.in_gesture and plot._drag is not None
    mouse.release(plot, QtCore.QPointF(start.x(), start.y() - 30))
    assert not window.state.in_gesture and gc.isenabled()
    assert window.state.session.what_if("h100-sxm").active
    window.state.undo_stack.undo()


def test_a_device_called_batch_gets_its_roof_dragged_not_the_batch(qtbot, settings, tmp_path, monkeypatch,
                                                                    catalog):
    """A drag's pending change is typed, not a (name, value) pair: a user's device whose id is
    "batch" once had its roof drag taken for a batch drag."""
    from tests.core.test_userfiles import write_device

    from .test_user_files_ui import open_window

    monkeypatch.setenv("ROOFLINE_EXPLORER_DATA", str(tmp_path))
    write_device(tmp_path / "hardware", catalog, "batch", source="h100-sxm")
    window = open_window(qtbot, settings, hardware=("batch",))
    plot = window.chart
    start = on_bandwidth_roof(plot)
    mouse.drag(plot, start, QtCore.QPointF(start.x(), start.y() - 60))
    assert window.state.session.what_if("batch").bandwidth_scale > 1.5
    assert window.state.params.batch == 1
    window.runs.shutdown()


def test_the_star_drags_when_the_model_does_not_fit(window):
    """Llama 3 70B on one H100: the track is drawn dashed (the key says it does not fit),
    and a drag along it sets the batch."""
    from explorer.chart.palette import UNFIT_DASH

    plot, state = window.chart, window.state
    state.set_model("llama-3-70b")
    assert state.analysis().totals.fits_in_memory is False
    [track] = lines(window, "track")
    assert track.stroke.dash == tuple(d * plot.chart.page.lines for d in UNFIT_DASH)
    texts = [t.text for t in (*plot.chart.texts, *plot.chart.overflow)]
    assert "the step as the batch changes: it does not fit" in texts  # no part of it fits
    [star] = [m for m in plot.chart.markers if m.kind == "step"]
    start = QtCore.QPointF(*star.center)
    sweep = state.sweep()
    target_i = float(sweep.intensity[list(sweep.batch).index(64)])
    target = mouse.to_pixels(plot, math.log10(target_i), mouse.to_view(plot, start)[1])
    mouse.drag(plot, start, QtCore.QPointF(target.x(), start.y()))
    assert 50 <= state.params.batch <= 80


def test_escape_after_dragging_back_to_the_start_lays_the_chart_out_in_full(window, qtbot):
    """(Back where it began, the cancel changes nothing in the session: no signal would
    redraw, and the drag's last frame, laid out from hints, would stay.)"""
    plot = window.chart
    start = on_bandwidth_roof(plot)
    full = plot.chart
    mouse.drag(plot, start, QtCore.QPointF(start.x(), start.y() - 80), finish=False)
    qtbot.wait(60)
    mouse.move(plot, start, mouse.LEFT)
    qtbot.wait(60)
    redrawn = []
    plot.redraw = lambda *a, **k: (redrawn.append(k), type(plot).redraw(plot, *a, **k))
    QTest.keyClick(plot, QtCore.Qt.Key.Key_Escape)
    assert redrawn and not window.state.in_gesture
    assert plot.chart.placement == full.placement and plot.chart.key == full.key


def test_the_garbage_collector_pauses_while_a_drag_lasts(window):
    """A drag makes no reference cycles; the collector's passes would only make frames
    late. It runs again when the drag ends or is cancelled."""
    import gc

    plot = window.chart
    start = on_bandwidth_roof(plot)
    assert gc.isenabled()
    mouse.drag(plot, start, QtCore.QPointF(start.x(), start.y() - 40), steps=4, finish=False)
    assert window.state.in_gesture and not gc.isenabled()
    mouse.release(plot, QtCore.QPointF(start.x(), start.y() - 40))
    assert not window.state.in_gesture and gc.isenabled()
    window.state.undo_stack.undo()  # the roof back under the press
    mouse.drag(plot, start, QtCore.QPointF(start.x(), start.y() - 40), steps=4, finish=False)
    assert window.state.in_gesture and not gc.isenabled()
    QTest.keyClick(plot, QtCore.Qt.Key.Key_Escape)
    assert not window.state.in_gesture and gc.isenabled()


def test_a_gesture_whose_end_never_comes_does_not_keep_the_collector_off(window, monkeypatch):
    import gc

    from explorer.ui import gesture_gc

    window.state.begin_gesture("a drag whose release is lost")
    assert not gc.isenabled()
    [limit] = [t for t in window.chart.findChildren(QtCore.QTimer)
               if t.interval() == gesture_gc.LONGEST_PAUSE_MS]
    assert limit.isActive()
    limit.timeout.emit()  # (30 s later)
    assert gc.isenabled() and window.state.in_gesture
    window.state.cancel_gesture()
    assert gc.isenabled() and not limit.isActive()


def test_a_what_if_roof_is_painted_opaque_in_the_colour_it_shows_faded(window, monkeypatch):
    """A see-through wide line costs Qt's raster painter 25–30 times an opaque one, and a
    drag redraws the roof it moves on every move: it is painted in the colour the faded
    line shows over the background, the pixels the see-through line made."""
    from dataclasses import replace

    from explorer.chart.model import build_chart
    from explorer.chart.options import ChartOptions
    from explorer.chart.palette import blend
    from explorer.core.model.session import WhatIf
    from explorer.ui.chart import painter as painter_module
    from explorer.ui.chart.painter import draw_line, paint

    assert blend("#0072B2", "#ffffff", 0.55) == "#73b1d5" and blend("#0072B2", "#000000", 1.0) == "#0072b2"
    state, page = window.state, window.chart.page()
    state.set_what_if("h100-sxm", WhatIf(bandwidth_scale=2.0))
    chart = build_chart(state, page, ChartOptions())
    state.reset_what_ifs()
    [roof] = [ln for ln in chart.lines
              if ln.kind == "roof" and ln.stroke.opacity < 1 and ln.ref.label == "HBM3"]
    alone = replace(chart, lines=(roof,), markers=(), texts=())
    drawn = []
    monkeypatch.setattr(painter_module, "draw_line",
                        lambda p, line: drawn.append(line.stroke) or draw_line(p, line))
    images = []
    for opaque in (True, False):
        image = QtGui.QImage(int(page.width), int(page.height), QtGui.QImage.Format.Format_RGB32)
        painter = QtGui.QPainter(image)
        if opaque:
            paint(painter, alone)
        else:  # the see-through line itself
            painter.fillRect(image.rect(), QtGui.QColor(chart.background))
            painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
            draw_line(painter, roof)
        painter.end()
        images.append(_pixels(image))
    (xa, ya), (xb, yb) = roof.points
    x, y = round((xa + xb) / 2), round((ya + yb) / 2)  # the middle of the line
    back = QtGui.QColor(chart.background)
    around = images[0][y - 1:y + 2, x - 1:x + 2, :3].reshape(-1, 3).astype(int)
    # its pixel of full coverage: of the nine around the middle, the one farthest from the background
    full = around[np.abs(around - [back.red(), back.green(), back.blue()]).sum(axis=1).argmax()]
    expected = QtGui.QColor(blend(roof.stroke.colour, chart.background, roof.stroke.opacity))
    assert abs(full - [expected.red(), expected.green(), expected.blue()]).max() <= 2
    assert abs(images[0] - images[1]).max() <= 3  # the same picture, to rounding
    assert [stroke.opacity for stroke in drawn] == [1.0]  # painted opaque
