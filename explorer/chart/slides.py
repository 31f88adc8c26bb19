"""Charts for slides: the export options, the page they give, and the SVG of a document's
chart (no Qt needed). PNG and PDF draw the same chart with Qt (``ui/chart/export.py``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path

from explorer import defaults
from explorer.chart.data import chart_csv, chart_data
from explorer.chart.elements import Chart, Page
from explorer.chart.model import build_chart
from explorer.chart.options import ChartOptions
from explorer.chart.scaling_chart import scaling_chart
from explorer.chart.snapshot import Source
from explorer.chart.svg import chart_svg


class ChartFormat(StrEnum):
    """What a chart is exported as: its file's suffix."""

    PNG = "png"
    SVG = "svg"
    PDF = "pdf"
    JSON = "json"  # the chart as data
    CSV = "csv"  # its points and roofs


FORMATS = tuple(f.value for f in ChartFormat)
TEXT_FORMATS = (ChartFormat.SVG, ChartFormat.JSON, ChartFormat.CSV)  # written without Qt
ASPECTS = {"16:9": (16, 9), "4:3": (4, 3)}
# Width of a full slide in inches (PowerPoint's and LibreOffice's defaults): with a DPI,
# a PNG is as wide as the slide at that resolution and says so in its metadata.
SLIDE_INCHES = {"16:9": 13.333, "4:3": 10.0}
THEMES = tuple(defaults.THEMES)
VIEWS = ("roofline", "energy", "serving", "memory", "expected")  # as ``core.words.scenes.View``
SLIDE_HEIGHT_IN = 7.5  # a slide's height in inches, 16:9 (13.33 in wide) or 4:3 (10 in wide)
SERVING_PROMPT_SHARE = 0.5  # the serving view: requests of the step's context, half of it prompt
LOGICAL_WIDTH = 1600  # the page is laid out this wide, then scaled to the output


@dataclass(frozen=True)
class ExportOptions:
    width_px: int = defaults.EXPORT_WIDTH_PX  # PNG only
    aspect: str = "16:9"
    transparent: bool = False  # PNG and SVG
    title: str | None = None  # None: the chart's own title
    legend: bool = True  # the key beside the plot
    subtitle: str | None = None  # a line or two under the title (a scene's caption)
    annotations: bool = True  # roof and ridge labels
    theme: str = "light"
    dpi: int | None = None  # PNG only: instead of width_px, a full slide at this resolution
    heading: bool = True  # the title and subtitle drawn (a deck's slide holds them as text)
    scaling_budget: float | None = None  # draw the scaling laws of this budget, not the roofline
    view: str = "roofline"  # or a scene step's view (``VIEWS``; ``slide_chart`` draws each)
    slot_in: tuple[float, float] | None = None  # a deck's picture: its width and height on the slide
    # A change to the picture drawn (a scene question's: its answer hidden, its guesses drawn).
    overlay: Callable[[Chart, str], Chart] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.aspect not in ASPECTS:
            raise ValueError(f"aspect must be one of {', '.join(ASPECTS)}, got {self.aspect!r}")
        if self.theme not in THEMES:
            raise ValueError(f"theme must be one of {', '.join(THEMES)}, got {self.theme!r}")
        if self.view not in VIEWS:
            raise ValueError(f"view must be one of {', '.join(VIEWS)}, got {self.view!r}")
        if self.dpi is not None and not 20 <= self.dpi <= defaults.EXPORT_DPI_MAX:
            raise ValueError(f"DPI must be between 20 and {defaults.EXPORT_DPI_MAX}, got {self.dpi}")
        low, high = defaults.EXPORT_WIDTH_RANGE
        if not low <= self.png_width <= high:
            raise ValueError(f"width must be between {low} and {high} pixels, got {self.png_width}")

    @property
    def png_width(self) -> int:
        return self.width_px if self.dpi is None else round(SLIDE_INCHES[self.aspect] * self.dpi)

    @property
    def page(self) -> Page:
        """The page laid out: a whole slide, or a deck's picture (``slot_in``) whose text
        keeps the sizes a whole slide's would have, as shares of the slide's height."""
        if self.slot_in is None:
            w, h = ASPECTS[self.aspect]
            return Page.slide(LOGICAL_WIDTH, LOGICAL_WIDTH * h / w)
        width_in, height_in = self.slot_in
        height = LOGICAL_WIDTH * height_in / width_in
        whole = Page.slide(LOGICAL_WIDTH, height * SLIDE_HEIGHT_IN / height_in)
        return Page(LOGICAL_WIDTH, height, whole.text, whole.title, whole.lines)

    def chart_options(self, slots: dict[str, int] | None = None) -> ChartOptions:
        return ChartOptions(title=self.title, subtitle=self.subtitle, theme=self.theme, key=self.legend,
                            annotations=self.annotations, slots=dict(slots or {}), heading=self.heading)


def format_of(path: str | Path) -> ChartFormat:
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in FORMATS:
        raise ValueError(f"cannot export to '.{suffix}': use .png, .svg, .pdf, .json (the chart as data) "
                         "or .csv (its points and roofs)")
    return ChartFormat(suffix)


def slide_chart(doc: Source, options: ExportOptions, slots: dict[str, int] | None = None) -> Chart:
    """The picture ``options.view`` names, changed by ``options.overlay`` where it gives one."""
    chart = _view_chart(doc, options, slots)
    return options.overlay(chart, options.theme) if options.overlay is not None else chart


def _view_chart(doc: Source, options: ExportOptions, slots: dict[str, int] | None = None) -> Chart:
    """The picture ``options.view`` names (the scaling laws where a budget is given)."""
    if options.view == "serving":
        return _serving(doc, options)
    if options.view == "memory":
        from explorer.chart.memory_chart import memory_chart
        from explorer.chart.roofline_frame import default_title

        return memory_chart(doc.analysis(), options.page, options.theme, options.title or default_title(doc),
                            options.subtitle or "", options.heading)
    if options.view == "expected":
        from explorer.chart.expected_ops import expected_ops_chart

        return expected_ops_chart(doc, options.page, options.chart_options(slots))
    if options.view == "energy":
        from explorer.chart.energy_chart import energy_chart, energy_view
        from explorer.chart.snapshot import Snapshot

        return energy_chart(energy_view(Snapshot.of(doc)), options.page, options.theme, options.legend,
                            options.title, options.subtitle or "", options.heading)
    if options.scaling_budget is not None:  # a scene step that shows the scaling laws
        return scaling_chart(doc.model, options.scaling_budget, options.page, options.theme,
                             options.title or "Scaling laws", options.subtitle or "", options.legend,
                             options.heading)
    return build_chart(doc, options.page, options.chart_options(slots))


def slide_text(doc: Source, options: ExportOptions, slots: dict[str, int] | None, kind: ChartFormat) -> str:
    """The chart in a text format: SVG, or the chart as data (JSON: the view's elements;
    CSV: its points and roofs, the roofline's for a view that has none: ``chart.data``)."""
    if kind == ChartFormat.SVG:
        return slide_svg(doc, options, slots)
    if kind == ChartFormat.JSON:  # every element of the view's picture
        return json.dumps(chart_data(slide_chart(doc, options, slots)), indent=1) + "\n"
    if options.view not in ("roofline", "expected"):  # CSV rows are points and roofs: the roofline's
        options = replace(options, view="roofline")
    return chart_csv(slide_chart(doc, options, slots))


def slide_svg(doc: Source, options: ExportOptions, slots: dict[str, int] | None = None) -> str:
    return chart_svg(slide_chart(doc, options, slots), options.transparent, options.title or "Roofline chart")


def _serving(doc: Source, options: ExportOptions) -> Chart:
    """The serving chart of the workload on its primary device (``serve``'s picture): batch 1
    to the KV-cache wall for requests as long as its context, half of it prompt, the step's
    own batch among them and ringed."""
    from explorer.chart.serving_chart import serving_chart
    from explorer.core.analysis.serving import plan

    a = doc.analysis()
    context = a.params.context
    prompt = max(1, round(context * SERVING_PROMPT_SHARE))
    served = plan(a.model, a.params, a.hardware, prompt, max(1, context - prompt), batches=(a.params.batch,))
    own = next((p for p in served.points if p.batch == a.params.batch), None)
    served = replace(served, chosen=own)
    title = options.title or f"Serving {a.model.name} on {served.devices} × {a.hardware.name}"
    return serving_chart(served, options.page, options.theme, title, key=options.legend,
                         subtitle=options.subtitle or "", with_heading=options.heading, ringed="this step")
