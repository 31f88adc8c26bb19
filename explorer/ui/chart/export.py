"""Exporting the chart for slides: PNG (any width, optional transparency), SVG (plain,
portable) and PDF (vector). All three draw one chart description (``explorer.chart``) laid
out on a slide-sized page (1600 px wide, 16:9 or 4:3), with text sized for a projected
slide: SVG written by ``explorer.chart.svg``, PNG and PDF painted with QPainter. Nothing
here uses the window's chart widget, so an export is the same from the window and the CLI.
"""

from __future__ import annotations

from pathlib import Path

from PySide6 import QtCore, QtGui

from explorer.chart.elements import Chart
from explorer.chart.slides import ASPECTS, FORMATS, THEMES, ExportOptions, format_of, slide_chart, slide_svg
from explorer.core.atomic import write_text_atomic
from explorer.ui.chart.painter import paint

__all__ = ["ASPECTS", "FORMATS", "THEMES", "ExportOptions", "export_chart", "format_of", "render_image"]


def export_chart(doc, path: str | Path, options: ExportOptions | None = None,
                 slots: dict[str, int] | None = None) -> Path:
    """Write the chart of ``doc`` (a Document) to ``path``, the format from its suffix.
    Raises ValueError for a bad format or option, OSError when the file cannot be written
    (a failed write leaves no partial file)."""
    options = options or ExportOptions()
    path = Path(path)
    kind = format_of(path)
    if kind == "svg":
        return write_text_atomic(path, slide_svg(doc, options, slots))
    chart = slide_chart(doc, options, slots)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        if kind == "png":
            if not chart_image(chart, options).save(str(tmp), "PNG"):
                raise OSError(f"could not write {path} (is the folder writable and the disk not full?)")
        else:
            _pdf(chart, tmp)
        if not tmp.exists() or tmp.stat().st_size == 0:
            raise OSError(f"nothing was written to {path}")
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def chart_image(chart: Chart, options: ExportOptions) -> QtGui.QImage:
    scale = options.png_width / chart.page.width
    image = QtGui.QImage(round(chart.page.width * scale), round(chart.page.height * scale),
                         QtGui.QImage.Format.Format_ARGB32_Premultiplied)
    if options.dpi:
        image.setDotsPerMeterX(round(options.dpi / 0.0254))
        image.setDotsPerMeterY(round(options.dpi / 0.0254))
    image.fill(QtCore.Qt.GlobalColor.transparent if options.transparent else QtGui.QColor(chart.background))
    painter = QtGui.QPainter(image)
    try:
        painter.scale(scale, scale)
        paint(painter, chart, background=False)
    finally:
        painter.end()
    return image


def render_image(doc, options: ExportOptions, slots: dict[str, int] | None = None) -> QtGui.QImage:
    """The chart of ``doc`` as an image ``options.png_width`` wide (PNG, the clipboard)."""
    return chart_image(slide_chart(doc, options, slots), options)


def _pdf(chart: Chart, path: Path) -> None:
    writer = QtGui.QPdfWriter(str(path))
    writer.setResolution(96)  # one page pixel is one unit: 0.75 pt
    size_pt = QtCore.QSizeF(chart.page.width * 0.75, chart.page.height * 0.75)
    writer.setPageSize(QtGui.QPageSize(size_pt, QtGui.QPageSize.Unit.Point, "chart"))
    writer.setPageMargins(QtCore.QMarginsF(0, 0, 0, 0))
    writer.setTitle("Roofline chart")
    writer.setCreator("Roofline Explorer")
    painter = QtGui.QPainter(writer)
    try:
        paint(painter, chart)
    finally:
        painter.end()
