"""Exporting the chart for slides: PNG (any width, optional transparency), SVG (text kept
as text) and PDF (vector).

The chart is laid out at a logical size (16:9 or 4:3, 1600 px wide by default) and
rendered by Qt onto the target device, so text and lines keep their proportions at any
output size. Traps avoided (DESIGN.md): pyqtgraph's SVGExporter fails on closed paths, so
SVG goes through QSvgGenerator; PrintExporter is dead, and a PDF rendered at 300 dpi
breaks the layout, so the PDF page is the widget's size in points at its logical DPI.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6 import QtCore, QtGui, QtSvg, QtWidgets

from explorer import defaults

FORMATS = ("png", "svg", "pdf")
ASPECTS = {"16:9": (16, 9), "4:3": (4, 3)}
# Width of a full slide in inches (PowerPoint's and LibreOffice's defaults): with a DPI,
# a PNG is as wide as the slide at that resolution and says so in its metadata.
SLIDE_INCHES = {"16:9": 13.333, "4:3": 10.0}
THEMES = tuple(defaults.THEMES)
LOGICAL_WIDTH = 1600  # layout width: fonts and lines are sized for this, then scaled


@dataclass(frozen=True)
class ExportOptions:
    width_px: int = defaults.EXPORT_WIDTH_PX  # PNG only
    aspect: str = "16:9"
    transparent: bool = False  # PNG only
    title: str | None = None  # None: the chart's own title
    legend: bool = True
    subtitle: str | None = None  # a line or two under the title (a scene's caption)
    annotations: bool = True  # roof and ridge labels
    theme: str = "light"
    dpi: int | None = None  # PNG only: instead of width_px, a full slide at this resolution

    def __post_init__(self) -> None:
        if self.aspect not in ASPECTS:
            raise ValueError(f"aspect must be one of {', '.join(ASPECTS)}, got {self.aspect!r}")
        if self.theme not in THEMES:
            raise ValueError(f"theme must be one of {', '.join(THEMES)}, got {self.theme!r}")
        if self.dpi is not None and not 20 <= self.dpi <= defaults.EXPORT_DPI_MAX:
            raise ValueError(f"DPI must be between 20 and {defaults.EXPORT_DPI_MAX}, got {self.dpi}")
        low, high = defaults.EXPORT_WIDTH_RANGE
        if not low <= self.png_width <= high:
            raise ValueError(f"width must be between {low} and {high} pixels, got {self.png_width}")

    @property
    def png_width(self) -> int:
        if self.dpi is None:
            return self.width_px
        return round(SLIDE_INCHES[self.aspect] * self.dpi)

    @property
    def logical_size(self) -> QtCore.QSize:
        w, h = ASPECTS[self.aspect]
        return QtCore.QSize(LOGICAL_WIDTH, LOGICAL_WIDTH * h // w)


def format_of(path: str | Path) -> str:
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in FORMATS:
        raise ValueError(f"cannot export to '.{suffix}': use .png, .svg or .pdf")
    return suffix


def _prepare(chart: QtWidgets.QWidget, options: ExportOptions) -> None:
    if not chart.isVisible():
        # A hidden view never lays out its viewport: show it, but not on a screen.
        chart.setAttribute(QtCore.Qt.WidgetAttribute.WA_DontShowOnScreen, True)
        chart.show()
    chart.resize(options.logical_size)
    if hasattr(chart, "prepare_export"):
        chart.prepare_export(options)
    QtWidgets.QApplication.processEvents()


def export_chart(chart: QtWidgets.QWidget, path: str | Path, options: ExportOptions | None = None) -> Path:
    """Write ``chart`` to ``path`` (format from the suffix). Raises ValueError for a bad
    format or option, OSError when the file cannot be written."""
    options = options or ExportOptions()
    path = Path(path)
    kind = format_of(path)
    _prepare(chart, options)
    {"png": _png, "svg": _svg, "pdf": _pdf}[kind](chart, path, options)
    if not path.exists() or path.stat().st_size == 0:
        raise OSError(f"nothing was written to {path}")
    return path


def render_image(chart: QtWidgets.QWidget, options: ExportOptions) -> QtGui.QImage:
    """The chart as an image ``options.png_width`` wide (for PNG and the clipboard)."""
    _prepare(chart, options)
    scale = options.png_width / chart.width()
    image = QtGui.QImage(round(chart.width() * scale), round(chart.height() * scale),
                         QtGui.QImage.Format.Format_ARGB32)
    # Qt scales everything drawn on a device with a pixel ratio, cosmetic pens included:
    # the export looks like the window, only sharper.
    image.setDevicePixelRatio(scale)
    if options.dpi:
        image.setDotsPerMeterX(round(options.dpi / 0.0254))
        image.setDotsPerMeterY(round(options.dpi / 0.0254))
    background = getattr(getattr(chart, "theme", None), "background", "#ffffff")
    image.fill(QtCore.Qt.GlobalColor.transparent if options.transparent else QtGui.QColor(background))
    # Cosmetic pens keep their width in device pixels whatever the scale: widen them too.
    widen = getattr(chart, "set_pen_scale", None)
    if widen:
        widen(scale)
    try:
        _paint(chart, image)
    finally:
        if widen:
            widen(1.0)
    return image


def _paint(chart: QtWidgets.QGraphicsView, device: QtGui.QPaintDevice) -> None:
    """Render what the view shows (the plot with its axes, title and legend, all items of
    its scene) without the widget's own background: the device's fill decides it."""
    painter = QtGui.QPainter(device)
    try:
        painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QtGui.QPainter.RenderHint.TextAntialiasing)
        source = chart.mapToScene(chart.viewport().rect()).boundingRect()
        target = QtCore.QRectF(QtCore.QPointF(0, 0), QtCore.QSizeF(chart.viewport().size()))
        chart.scene().render(painter, target, source)
    finally:
        painter.end()


def _png(chart, path: Path, options: ExportOptions) -> None:
    if not render_image(chart, options).save(str(path), "PNG"):
        raise OSError(f"could not write {path}")


def _svg(chart, path: Path, options: ExportOptions) -> None:
    generator = QtSvg.QSvgGenerator()
    generator.setFileName(str(path))
    generator.setSize(chart.viewport().size())
    generator.setViewBox(QtCore.QRect(QtCore.QPoint(), chart.viewport().size()))
    generator.setTitle(options.title or "Roofline chart")
    generator.setDescription("Roofline Explorer: predicted and measured performance on a roofline")
    _paint(chart, generator)


def _pdf(chart, path: Path, options: ExportOptions) -> None:
    writer = QtGui.QPdfWriter(str(path))
    dpi = chart.logicalDpiX()
    writer.setResolution(dpi)
    size = chart.viewport().size()
    size_pt = QtCore.QSizeF(size.width() * 72.0 / dpi, size.height() * 72.0 / dpi)
    writer.setPageSize(QtGui.QPageSize(size_pt, QtGui.QPageSize.Unit.Point, "chart"))
    writer.setPageMargins(QtCore.QMarginsF(0, 0, 0, 0))
    writer.setTitle(options.title or "Roofline chart")
    writer.setCreator("Roofline Explorer")
    _paint(chart, writer)
