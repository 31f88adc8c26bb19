"""What a chart is made of: strokes, lines, markers and texts on a page (pixels, y down),
and the page itself with the sizes its text and lines are drawn at."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property

from explorer.chart.geometry import Point, Rect, quad
from explorer.chart.text import ASCENT, LINE_HEIGHT, text_width
from explorer.document import RoofRef


class ElementKind(StrEnum):
    """What a line, marker or text of the chart shows; outputs draw, hit-test and layer by it."""

    GRID = "grid"
    AXIS = "axis"
    TICK = "tick"
    TITLE = "title"
    SUBTITLE = "subtitle"
    NOTE = "note"
    ROOF = "roof"  # a roof (line) or its label (text)
    ORIGINAL = "original"  # a roof's datasheet line under a what-if
    TRACK = "track"  # the step's batch track
    MEASURED_ROOF = "measured-roof"
    LINK = "link"  # a link's roof (communication)
    RIDGE = "ridge"
    OP = "op"
    STEP = "step"
    EXPECTED = "expected"  # the whole step at its expected time, and its drop from the bound
    COMPARED = "compared"  # another model's whole step (the session's ``compare``) and its label
    CURVE = "curve"  # a scaling-law picture's curves, points and labels (``scaling_chart``)
    SERVING = "serving"  # a serving plan's batches, their curve and labels (``serving_chart``)
    MEMORY = "memory"  # the memory bar's parts, budget and labels (``memory_chart``)
    PROFILE = "profile"  # a kernel of a real run's profile
    MEASURED = "measured"
    SELECTION = "selection"
    KEY = "key"
    KEY_LIVE = "key-live"  # key entries that change while a drag moves the chart


# The order kinds are drawn in, back to front (every output draws in this order).
E = ElementKind
LINE_ORDER = (E.GRID, E.AXIS, E.ORIGINAL, E.TRACK, E.EXPECTED, E.MEASURED_ROOF, E.LINK, E.ROOF, E.CURVE,
              E.SERVING, E.MEMORY, E.PROFILE, E.KEY, E.KEY_LIVE)
# (the whole step's star, and a compared model's, under the ops: at batch 1 most of them
# sit on it)
MARKER_ORDER = (E.RIDGE, E.MEASURED, E.PROFILE, E.COMPARED, E.STEP, E.OP, E.SERVING, E.SELECTION, E.EXPECTED,
                E.CURVE, E.KEY, E.KEY_LIVE)

# Chart text and titles as shares of the page height, for a picture projected in a room.
TEXT_SHARE, TITLE_SHARE = 0.025, 0.04


@dataclass(frozen=True)
class Page:
    """A page to draw on and the sizes of its text (pixels per em) and lines (a scale)."""

    width: float
    height: float
    text: float
    title: float
    lines: float = 1.0

    @classmethod
    def slide(cls, width: float, height: float) -> Page:
        """An exported slide, sized for a lecture hall: ticks, labels and key 2.5 % of the page
        height, the caption 2.9 % (``CAPTION_SCALE``) and the title 4 %."""
        return cls(width, height, TEXT_SHARE * height, TITLE_SHARE * height, height / 700)

    @classmethod
    def screen(cls, width: float, height: float, scale: float = 1.0) -> Page:
        """A window: at least 13 px text (more on a tall chart); ``scale`` above 1 for a
        projector (presentation mode: text about 2.6 % of the height)."""
        text = max(13.0 * scale, (0.019 if scale <= 1 else 0.026) * height)
        return cls(width, height, text, text * 1.4, scale)


@dataclass(frozen=True)
class Stroke:
    """How a line or a marker's outline is drawn."""

    colour: str
    width: float
    dash: tuple[float, ...] = ()  # on, off, … in pixels; empty: solid
    opacity: float = 1.0


@dataclass(frozen=True)
class Line:
    """A polyline in page pixels, with what it shows (its kind) and, for a roof, which one."""

    points: tuple[Point, ...]
    stroke: Stroke
    kind: ElementKind  # roof, original, track, measured-roof, link, grid, axis, key
    ref: RoofRef | None = None
    tooltip: str = ""


@dataclass(frozen=True)
class Marker:
    """A symbol at a point in page pixels, with its tooltip."""

    center: Point
    symbol: str  # circle square diamond triangle triangle-down star hexagon pentagon cross plus
    size: float  # across, in pixels
    stroke: Stroke | None
    fill: str | None
    kind: ElementKind  # op, step, measured, ridge, selection, key
    name: str = ""
    tooltip: str = ""
    fill_opacity: float = 1.0


@dataclass(frozen=True)
class Text:
    """A line of text: a box ``width`` × ``height`` whose top-left corner is at (``dx``,
    ``dy``) from ``origin`` in a frame turned by ``angle`` degrees (clockwise)."""

    text: str
    origin: Point
    size: float
    colour: str
    kind: ElementKind  # title, subtitle, tick, axis, roof, ridge, measured, link, key, note
    angle: float = 0.0
    dx: float = 0.0
    dy: float = 0.0
    bold: bool = False
    ref: RoofRef | None = None
    tooltip: str = ""

    @cached_property
    def width(self) -> float:
        return text_width(self.text, self.size, self.bold)

    @property
    def height(self) -> float:
        return LINE_HEIGHT * self.size

    @property
    def baseline(self) -> float:
        """The baseline's offset in the text's own frame (``dy`` + the ascent)."""
        return self.dy + ASCENT * self.size

    @cached_property
    def corners(self) -> tuple[Point, ...]:
        return quad(self.origin, self.width, self.height, math.radians(self.angle), self.dx, self.dy)


@dataclass(frozen=True)
class Chart:
    """A chart laid out on a page: every element in page pixels, ready for any painter."""

    page: Page
    plot: Rect  # the plot area inside the axes
    x_range: tuple[float, float]  # data values at the plot's left and right edges
    y_range: tuple[float, float]  # at its bottom and top
    background: str
    foreground: str
    lines: tuple[Line, ...] = ()
    markers: tuple[Marker, ...] = ()
    texts: tuple[Text, ...] = ()
    key: Rect | None = None  # where the key (legend) is, outside the plot
    overflow: tuple[Text, ...] = field(default=())  # labels the plot had no room for (in the key)
    placement: tuple[int, ...] = ()  # the candidate each label took (a hint for the next frame)

    def x_px(self, value: float) -> float:
        low, high = (math.log10(v) for v in self.x_range)
        return self.plot.left + (math.log10(value) - low) / (high - low) * self.plot.width

    def y_px(self, value: float) -> float:
        low, high = (math.log10(v) for v in self.y_range)
        return self.plot.bottom - (math.log10(value) - low) / (high - low) * self.plot.height

    @property
    def key_outside(self) -> bool:
        """Whether the key sits outside the plot, in a column beside it or a band under it
        (not in one of its corners)."""
        return self.key is not None and (self.key.left >= self.plot.right or self.key.top >= self.plot.bottom)

    @property
    def key_place(self) -> str | None:
        """Where the key went: "inside" the plot (a corner), "below" it or "beside" it."""
        if self.key is None:
            return None
        return "below" if self.key.top >= self.plot.bottom else "beside" if self.key_outside else "inside"

    def texts_of(self, *kinds: str) -> list[Text]:
        return [t for t in self.texts if t.kind in kinds]
