"""What stays still during a drag, painted once: a roof drag moves one device's roofs, its
ridge and the workload's points; the other devices' roofs, their labels and ridges stay as
they were. ``StillContent`` keeps the content elements (``painter.paint``'s "content"
layer) that were the same in the last two frames in two cached pixmaps, the frame, key,
lines and points below (opaque: one copy) and the texts above, and paints the rest live
between them: labels stay on top of lines, as in a full paint. The cache holds only
elements the current chart still has; it is made again when one of them moves, and when
more have stopped moving.

An element that has changed once in a drag (what it stands for, its ``_slot``: a roof, a
point, the note under the axis, a row of the key) is painted live for the rest of the drag,
even in frames where it stays the same: a star drag changes the batch on some moves and
not on others, and an element that changed, stood still, was cached and changed again
would cost two remakes of the cache (each a whole paint of the still content, and the frames
that paid for one took more than a frame at 60 Hz).

The pixmaps are made after a frame is shown, not in it: a frame that finds them stale (a
kept element moved) is painted without them, one that finds more to cache uses them as they
are, and either leaves the making to ``prepare``, which the window calls while it waits for
the next move."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from PySide6 import QtCore, QtGui

from explorer.chart.elements import Chart, Line, Marker, Text
from explorer.ui.chart.painter import Layer, layer_of, paint


class StillContent:
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget everything (the drag ended): the next paint starts again."""
        self._kept: frozenset = frozenset()  # the elements in the pixmaps
        self._pixmaps: tuple[QtGui.QPixmap, QtGui.QPixmap] | None = None
        self._previous: frozenset = frozenset()  # the last frame's elements
        self._size: tuple | None = None
        self._restless: set[tuple] = set()  # the slots (``_slot``) of elements that changed in this drag
        self._wanted: tuple | None = None  # what ``prepare`` makes the pixmaps of

    def paint(self, painter: QtGui.QPainter, chart: Chart, ratio: float,
              underlay: Callable[[QtGui.QPainter], None], underlay_id: tuple) -> None:
        """Paint ``chart``'s content layer (clipped to the plot) over ``underlay`` (what
        paints the frame and the key, ``underlay_id`` says when it changed): the underlay
        and the still lines and points as one opaque pixmap, the moving ones, the still
        texts as a second pixmap, the moving texts. Where the pixmaps no longer hold what
        stays still, the frame is painted without them, and ``wanted`` says to make them
        afresh (``prepare``) once the frame is shown."""
        content = layer_of(chart, Layer.CONTENT)
        current = frozenset((*content.lines, *content.markers, *content.texts))
        size = (chart.page.width, chart.page.height, ratio, underlay_id)
        self._restless.update(_slot(e) for e in self._previous - current)
        still = frozenset(e for e in current & self._previous if _slot(e) not in self._restless)
        first = not self._previous  # the drag's first move: nothing has stayed still over two frames yet
        self._previous = current
        usable = self._pixmaps is not None and size == self._size and self._kept <= current
        # Made again when a kept element moved, or more have stopped moving (once per drag,
        # mostly: an element that changed once is never kept again).
        self._wanted = None if first or (usable and still <= self._kept) else (chart, content, still, ratio,
                                                                                 underlay, size)
        if not usable:  # (the first move also redraws the key, which says "what-if" now)
            underlay(painter)
            paint(painter, content, background=False, clip=True)
            return
        assert self._pixmaps is not None  # (usable)
        below, above = self._pixmaps
        moving = current - self._kept
        painter.drawPixmap(0, 0, below)
        paint(painter, _split(content, moving, True, False), background=False, clip=True)
        painter.drawPixmap(0, 0, above)
        paint(painter, _split(content, moving, False, True), background=False, clip=True)

    @property
    def wanted(self) -> bool:
        """Whether the last frame found more to cache than the pixmaps hold (``prepare``)."""
        return self._wanted is not None

    def prepare(self, chart: Chart) -> bool:
        """Make the pixmaps for what stayed still in the last frame painted, when that frame
        was ``chart``'s (the window calls it once the frame is shown, while it waits for
        the next move: no frame pays for it); False when there was nothing to make."""
        if self._wanted is None or self._wanted[0] is not chart:
            return False
        _, content, still, ratio, underlay, size = self._wanted
        self._wanted = None
        self._kept, self._size = still, size
        self._pixmaps = (_render(_split(content, still, True, False), ratio, underlay),
                         _render(_split(content, still, False, True), ratio, None))
        return True


def _slot(element: object) -> tuple:
    """What an element stands for, the same from frame to frame while what it shows changes:
    a line or a text by its kind and its roof, else by its stroke or colour (a device's); a
    point by its kind, name, symbol and fill; a text with no roof also by its row (the note
    under the axis, a row of the key). Elements that share a slot change together for the
    cache: one more painted live, never a stale one kept."""
    if isinstance(element, Marker):
        return (Marker, element.kind, element.name, element.symbol, element.fill)
    if isinstance(element, Line):
        return (Line, element.kind, element.ref, None if element.ref else element.stroke)
    assert isinstance(element, Text)  # (a chart's content: lines, points and texts)
    return (Text, element.kind, element.ref, None if element.ref else (element.colour, element.origin[1]))


def _split(chart: Chart, elements: frozenset, graphics: bool, texts: bool) -> Chart:
    """``chart`` with only those of ``elements`` that are lines and points (``graphics``)
    or texts, in their drawing order."""
    return replace(chart, lines=tuple(e for e in chart.lines if graphics and e in elements),
                   markers=tuple(e for e in chart.markers if graphics and e in elements),
                   texts=tuple(e for e in chart.texts if texts and e in elements))


def _render(part: Chart, ratio: float, underlay: Callable[[QtGui.QPainter], None] | None) -> QtGui.QPixmap:
    """``part`` on a pixmap the size of the page: over ``underlay`` (opaque), else on a
    transparent one."""
    pixmap = QtGui.QPixmap(max(1, round(part.page.width * ratio)), max(1, round(part.page.height * ratio)))
    pixmap.setDevicePixelRatio(ratio)
    pixmap.fill(QtGui.QColor(part.background) if underlay else QtCore.Qt.GlobalColor.transparent)
    painter = QtGui.QPainter(pixmap)
    try:
        if underlay:
            underlay(painter)
        paint(painter, part, background=False, clip=True)
    finally:
        painter.end()
    return pixmap
