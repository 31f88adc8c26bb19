"""The roofline chart in the window: the chart description (``explorer.chart``) built for
the widget's size and painted with QPainter, exactly as PNG, PDF and SVG exports draw it;
hover, click, drag, zoom and pan on top of it.

Drags are gestures on AppState: a roof drag is a what-if on that device's bandwidth or
peak, a drag of the whole-step star moves along its batch track and sets the batch. Moves
during a drag are coalesced (the newest wins); Esc or a right click cancels. The wheel
zooms about the pointer, dragging empty space pans, a double click (or View › Fit, Ctrl+0)
fits again. The widget paints every pixel it covers (opaque): its parents never repaint
under it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import cast

from PySide6 import QtCore, QtGui, QtWidgets

from explorer.chart import hits, palette
from explorer.chart.elements import Chart, ElementKind, Line, Page
from explorer.chart.model import build_chart
from explorer.chart.options import ChartOptions, style_slots
from explorer.core.analysis import drags
from explorer.core.analysis.roofline import COMPUTE
from explorer.state import AppState
from explorer.ui.chart.drag_kinds import BatchChange, Drag, DragKind, Ranges, RoofChange
from explorer.ui.chart.painter import LAYERS, Layer, paint
from explorer.ui.chart.still import StillContent
from explorer.ui.gesture_gc import pause_collection_in_gestures

# A drag's moves are coalesced, not rate-limited: a move only records where the pointer is,
# and the state follows once the moves already queued have been read (a zero-time timer runs
# after the pending events), so each update shows the newest position without waiting.
DRAG_INTERVAL_MS = 0
KEY_MARGIN = 4.0  # pixels around the key's box in its cached pixmap (strokes reach past it)
ZOOM_STEP = 1.25  # one wheel notch


class RooflinePlot(QtWidgets.QWidget):
    def __init__(self, state: AppState, parent=None) -> None:
        super().__init__(parent)
        self.state = state
        self.theme = palette.THEMES["light"]
        self.scale = 1.0  # presentation mode draws text, lines and points larger
        self.slots: dict[str, int] = {}  # device → style slot, kept while the device is shown
        self.measured_suites: set[str] | None = None  # None: every measured suite is drawn
        self.overlay: Callable[[Chart], Chart] | None = None  # changes the chart built (a scene question)
        self._chart: Chart | None = None  # built when first shown or asked for (``chart``)
        self._ranges: Ranges | None = None  # the ranges shown (kept until a refit)
        self._zoomed = False
        self._fit_key: tuple[object, ...] | None = None
        self._hover: Line | None = None
        self._layer_cache: dict[str, tuple] = {}  # layer → (what it shows, the pixmap)
        self._still = StillContent()  # during a drag: what the drag leaves in place
        # Once a drag's frame is shown (a zero-time timer runs when the events queued are
        # handled): the cache of what stayed still in it, made while the next move is awaited.
        self._prepare = QtCore.QTimer(self, singleShot=True, interval=0)
        self._prepare.timeout.connect(self._prepare_still)
        self._drag: Drag | None = None
        # The newest drag update, applied once queued moves are read.
        self._pending: BatchChange | RoofChange | None = None
        self._timer = QtCore.QTimer(self, singleShot=True, interval=DRAG_INTERVAL_MS)
        self._timer.timeout.connect(self._apply_pending)
        self.setMouseTracking(True)
        self.setAttribute(QtCore.Qt.WidgetAttribute.WA_OpaquePaintEvent)  # the frame pixmap covers it
        self.setFocusPolicy(QtCore.Qt.FocusPolicy.StrongFocus)
        self.setMinimumSize(320, 240)
        self.setAccessibleName("Roofline chart")
        for signal in (state.sig_hardware_changed, state.sig_workload_changed, state.sig_precisions_changed,
                       state.sig_results_changed, state.sig_live_changed):
            signal.connect(self.redraw)
        state.sig_selection_changed.connect(lambda _selection: self.redraw(fit=False))
        pause_collection_in_gestures(state, self)  # (its drags are the state's gestures)

    @property
    def chart(self) -> Chart:
        """The chart on the screen. Built when the widget is first shown (at start-up a
        chart at the widget's size before the window is laid out would be thrown away) or
        first asked for."""
        if self._chart is None:
            self._build(fit=True)
        assert self._chart is not None  # (built)
        return self._chart

    # -- drawing ---------------------------------------------------------------------------------
    def page(self) -> Page:
        return Page.screen(max(self.width(), 320), max(self.height(), 240), self.scale)

    def options(self, ranges=None, hints: tuple[int, ...] = (),
                key_place: str | None = None, plot=None) -> ChartOptions:
        suites = frozenset(self.measured_suites) if self.measured_suites is not None else None
        return ChartOptions(theme=self.theme.name, slots=self.slots, suites=suites, ranges=ranges,
                            hints=hints, key_place=key_place, plot=plot)

    def redraw(self, fit: bool | None = None) -> None:
        """Rebuild the chart for the state and repaint. The ranges are fitted again when
        what is shown changes (devices, model, phase, precision, measurements), not after
        a drag, a batch change or a zoom."""
        if self._chart is None and not self.isVisible():
            return  # nothing built or shown yet: the first paint (or ``chart``) builds it
        self._build(fit)
        self.update()

    def _build(self, fit: bool | None) -> None:
        session = self.state.session
        key = (session.hardware, session.model, session.params.phase, session.params.dtype,
               session.precisions, len(self.state.results()), bool(self.state.live_points))
        if fit is None:
            fit = key != self._fit_key and not self.state.in_gesture
        self._fit_key = key
        if fit:
            self._ranges, self._zoomed = None, False
        self.slots = style_slots(self.slots, session.hardware)
        # During a drag the labels try last frame's places first and the key stays where it
        # was: they stay put, and the layout takes a fraction of the time.
        last = self._chart if self.state.in_gesture else None
        self._chart = build_chart(self.state, self.page(), self.options(
            self._ranges, last.placement if last else (), last.key_place if last else None,
            last.plot if last and last.page == self.page() else None))
        if self.overlay is not None:  # a scene question: its answer hidden, its guesses drawn
            self._chart = self.overlay(self._chart)
        self._ranges = (self._chart.x_range, self._chart.y_range)
        self._hover = None
        self.setAccessibleDescription(self.title())

    def title(self) -> str:
        return " ".join(t.text for t in self.chart.texts_of(ElementKind.TITLE))

    def fit_view(self) -> None:
        """Fit the ranges to everything shown again (after a zoom or pan)."""
        self._zoomed = False
        self.redraw(fit=True)

    def paintEvent(self, _event) -> None:
        painter = QtGui.QPainter(self)
        try:
            drag = self._drag
            # During a drag, once it has moved something (the press itself paints as usual):
            # what stays still comes from a cache, and only what moves is painted.
            if drag is not None and drag.kind is not DragKind.PAN and self._hover is None \
                    and self.chart is not drag.chart:
                layers = (Layer.FRAME, Layer.KEY) if self.chart.key is not None else (Layer.FRAME,)
                underlay_id = tuple(self._cached(layer).cacheKey() for layer in layers)
                self._still.paint(painter, self.chart, self.devicePixelRatioF(), self._underlay, underlay_id)
                if self._still.wanted:
                    self._prepare.start()
            else:
                self._still.reset()
                self._underlay(painter)
                paint(painter, self.chart, clip=True, emphasis=self._hover, layer=Layer.CONTENT)
        finally:
            painter.end()

    def _prepare_still(self) -> None:
        """(After a drag's frame) cache what stayed still in it (``StillContent.prepare``)."""
        if self._drag is not None and self._chart is not None:
            self._still.prepare(self._chart)

    def _underlay(self, painter: QtGui.QPainter) -> None:
        """The frame and the key, from their cached pixmaps."""
        painter.drawPixmap(0, 0, self._cached(Layer.FRAME))
        if self.chart.key is not None:
            key = self.chart.key.grow(KEY_MARGIN)
            painter.drawPixmap(QtCore.QPointF(key.left, key.top), self._cached(Layer.KEY))

    def _cached(self, layer: Layer) -> QtGui.QPixmap:
        """The ``layer`` (``painter.LAYERS``: the frame, the key) drawn once for as long as it
        stays the same: a drag repaints only the content on top of them."""
        chart, ratio = self.chart, self.devicePixelRatioF()
        lines, markers, texts = LAYERS[layer]
        area = chart.key.grow(KEY_MARGIN) if layer == Layer.KEY and chart.key is not None else None
        key = (chart.page, chart.plot, chart.x_range, chart.y_range, chart.background, ratio, area,
               tuple(ln for ln in chart.lines if ln.kind in lines),
               tuple(m for m in chart.markers if m.kind in markers),
               tuple(t for t in chart.texts if t.kind in texts))
        cached = self._layer_cache.get(layer)
        if cached is None or cached[0] != key:
            width, height = (area.width, area.height) if area else (chart.page.width, chart.page.height)
            pixmap = QtGui.QPixmap(max(1, round(width * ratio)), max(1, round(height * ratio)))
            pixmap.setDevicePixelRatio(ratio)
            pixmap.fill(QtCore.Qt.GlobalColor.transparent)
            painter = QtGui.QPainter(pixmap)
            try:
                if area:
                    painter.translate(-area.left, -area.top)
                paint(painter, chart, layer=layer)
            finally:
                painter.end()
            cached = self._layer_cache[layer] = (key, pixmap)
        return cached[1]

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.redraw(fit=not self._zoomed and not self.state.in_gesture)

    # -- appearance ------------------------------------------------------------------------------
    def set_theme(self, name: str) -> None:
        """``light``, ``dark`` or ``contrast`` (for projectors)."""
        if name == self.theme.name and self._chart is not None:
            return  # drawn in it already (the window sets its theme as it starts)
        self.theme = palette.THEMES[name]
        self.redraw(fit=False)  # (nothing to redraw before the first build, which uses it)

    def set_scale(self, factor: float) -> None:
        """Bigger text, lines and points (presentation mode), fitted again."""
        self.scale = factor
        self.redraw(fit=True)

    # -- pointer ---------------------------------------------------------------------------------
    def _movable(self, line: Line | None) -> bool:
        if line is None or line.kind != ElementKind.ROOF or line.ref is None:
            return False
        main = self.state.device(line.ref.device).main_memory.name
        return line.ref.kind == COMPUTE or line.ref.label == main

    def _roof_at(self, pos: QtCore.QPointF) -> Line | None:
        point = (pos.x(), pos.y())
        line = hits.line_at(self.chart, point)
        if line is None:  # its label grabs it too
            text = hits.text_at(self.chart, point, (ElementKind.ROOF,))
            line = next((ln for ln in self.chart.lines if text is not None and ln.kind == ElementKind.ROOF
                         and ln.ref == text.ref), None)
        return line

    def event(self, event: QtCore.QEvent) -> bool:
        if event.type() == QtCore.QEvent.Type.ToolTip:
            event = cast(QtGui.QHelpEvent, event)  # (a tool tip's event)
            pos = event.position() if hasattr(event, "position") else QtCore.QPointF(event.pos())
            tip = hits.tooltip_at(self.chart, (pos.x(), pos.y()))
            if tip:
                QtWidgets.QToolTip.showText(event.globalPos(), tip, self)
            else:
                QtWidgets.QToolTip.hideText()
                event.ignore()
            return True
        return super().event(event)

    def mousePressEvent(self, event: QtGui.QMouseEvent) -> None:
        if event.button() == QtCore.Qt.MouseButton.RightButton and self._drag is not None:
            self.cancel_drag()
            return
        if event.button() != QtCore.Qt.MouseButton.LeftButton:
            return super().mousePressEvent(event)
        pos = event.position()
        under = hits.markers_at(self.chart, (pos.x(), pos.y()), (ElementKind.STEP, ElementKind.OP))
        if under and under[0].kind == ElementKind.STEP:
            self._drag = Drag(DragKind.STAR, pos, chart=self.chart)
            self.state.begin_gesture("Drag the batch")
            return
        if under:
            self.state.select_op(under[0].name)
            return
        roof = self._roof_at(pos)
        if roof is not None and self._movable(roof):
            ref = roof.ref
            assert ref is not None  # (``_movable``)
            what = "bandwidth" if ref.kind != COMPUTE else f"{ref.label} peak"
            self.state.begin_gesture(f"Drag the {what} of {self.state.catalog[ref.device].name}")
            base = drags.drag_start(self.state.session.what_if(ref.device), ref.kind,
                                    self.state.device(ref.device), self.state.catalog[ref.device])
            self._drag = Drag(DragKind.ROOF, pos, ref, base, chart=self.chart)
        elif roof is not None:
            self.state.select(roof.ref)
        else:
            self._drag = Drag(DragKind.PAN, pos, ranges=self._ranges, chart=self.chart)

    def mouseMoveEvent(self, event: QtGui.QMouseEvent) -> None:
        pos, drag = event.position(), self._drag
        if drag is None:
            self._hover_at(pos)
        elif drag.kind is DragKind.STAR:
            x, _ = hits.value_at(drag.began_on, (pos.x(), pos.y()))
            self._later(BatchChange(self.batch_at(math.log10(x))))
        elif drag.kind is DragKind.ROOF:
            self._later(RoofChange(drag.roof.device, self._what_if(drag, pos)))
        else:
            self._pan(drag, pos)

    def mouseReleaseEvent(self, event: QtGui.QMouseEvent) -> None:
        if event.button() != QtCore.Qt.MouseButton.LeftButton:
            return  # (another button let go during a drag leaves the drag going)
        drag, self._drag = self._drag, None
        if drag is None:
            return
        self._timer.stop()
        pos = event.position()
        if drag.kind is DragKind.STAR:
            x, _ = hits.value_at(drag.began_on, (pos.x(), pos.y()))
            self._pending = BatchChange(self.batch_at(math.log10(x)))
        elif drag.kind is DragKind.ROOF:
            self._pending = RoofChange(drag.roof.device, self._what_if(drag, pos))
        if drag.kind is not DragKind.PAN:
            self._apply_pending()
            self.state.end_gesture()
            self.redraw(fit=False)  # the full label layout (a drag reuses the last one's places)

    def mouseDoubleClickEvent(self, event: QtGui.QMouseEvent) -> None:
        if event.button() == QtCore.Qt.MouseButton.LeftButton:
            self.fit_view()

    def wheelEvent(self, event: QtGui.QWheelEvent) -> None:
        if self._drag is not None:
            return
        steps = event.angleDelta().y() / 120
        if not steps:
            return
        pos = event.position()
        x, y = hits.value_at(self.chart, (pos.x(), pos.y()))
        factor = ZOOM_STEP ** -steps  # the wheel forward zooms in
        assert self._ranges is not None  # (kept with the chart)
        (x0, x1), (y0, y1) = self._ranges
        self._ranges = ((x * (x0 / x) ** factor, x * (x1 / x) ** factor),
                        (y * (y0 / y) ** factor, y * (y1 / y) ** factor))
        self._zoomed = True
        self.redraw(fit=False)

    def leaveEvent(self, _event) -> None:
        if self._hover is not None:
            self._hover = None
            self.update()

    def _hover_at(self, pos: QtCore.QPointF) -> None:
        under = hits.markers_at(self.chart, (pos.x(), pos.y()))  # the topmost first
        roof = None if under else self._roof_at(pos)
        top = under[0].kind if under else None
        shape = QtCore.Qt.CursorShape
        if top == ElementKind.STEP:
            self.setCursor(shape.SizeHorCursor)
        elif top == ElementKind.OP:
            self.setCursor(shape.PointingHandCursor)
        elif self._movable(roof):
            self.setCursor(shape.SizeVerCursor)
        else:
            self.unsetCursor()
        if roof is not self._hover:
            self._hover = roof
            self.update()

    def _pan(self, drag: Drag, pos: QtCore.QPointF) -> None:
        dx, dy = hits.decades_per_pixel(drag.began_on)
        shift_x = 10 ** (-(pos.x() - drag.start.x()) * dx)
        shift_y = 10 ** ((pos.y() - drag.start.y()) * dy)
        (x0, x1), (y0, y1) = drag.start_ranges
        self._ranges = ((x0 * shift_x, x1 * shift_x), (y0 * shift_y, y1 * shift_y))
        self._zoomed = True
        self.redraw(fit=False)

    # -- drags -----------------------------------------------------------------------------------
    def batch_at(self, x_view: float) -> int:
        """The batch for the star dragged to ``x_view`` (log10 FLOP/byte)."""
        params = self.state.params
        return drags.batch_at(self.state.sweep(), x_view, params.batch, params.split.batch_share)

    def _what_if(self, drag: Drag, pos: QtCore.QPointF):
        _, per_px = hits.decades_per_pixel(drag.began_on)
        offset = (drag.start.y() - pos.y()) * per_px
        return drags.dragged_roof(drag.start_what_if, drag.roof.kind, drag.roof.label, offset)

    def _later(self, pending) -> None:
        self._pending = pending
        if not self._timer.isActive():
            self._timer.start()

    def _apply_pending(self) -> None:
        if self._pending is None:
            return
        pending, self._pending = self._pending, None
        if isinstance(pending, BatchChange):  # a device may be called anything, even "batch"
            self.state.set_params(batch=pending.batch)
        else:
            self.state.set_what_if(pending.device, pending.what_if)

    def cancel_drag(self) -> bool:
        """Cancel a drag in progress (Esc, a right click); False when there is none."""
        drag, self._drag = self._drag, None
        self._timer.stop()
        self._pending = None
        if drag is not None and drag.kind is DragKind.PAN:
            self._ranges = drag.ranges
            self.redraw(fit=False)
            return True
        if not self.state.in_gesture:
            return False
        self.state.cancel_gesture()
        self.redraw(fit=False)  # the full layout, even where the drag came back to where it began
        return True

    def keyPressEvent(self, event: QtGui.QKeyEvent) -> None:
        if event.key() == QtCore.Qt.Key.Key_Escape and self.cancel_drag():
            event.accept()
            return
        super().keyPressEvent(event)
