"""Exporting the chart for slides: PNG (any width, optional transparency), SVG (plain,
portable) and PDF (vector). All three draw one chart description (``explorer.chart``) laid
out on a slide-sized page (1600 px wide, 16:9 or 4:3), with text sized for a projected
slide: SVG written by ``explorer.chart.svg``, PNG and PDF painted with QPainter. Nothing
here uses the window's chart widget, so an export is the same from the window and the CLI.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6 import QtCore, QtGui

from explorer.chart.elements import Chart
from explorer.chart.slides import (
    ASPECTS,
    FORMATS,
    TEXT_FORMATS,
    THEMES,
    ChartFormat,
    ExportOptions,
    format_of,
    slide_chart,
    slide_text,
)
from explorer.core.files.atomic import write_bytes_atomic, write_text_atomic
from explorer.ui.chart.painter import paint

__all__ = ["ASPECTS", "FORMATS", "THEMES", "ExportOptions", "chart_bytes", "export_chart", "format_of",
           "qt_application", "render_image", "write_chart"]


def qt_application() -> None:
    """The Qt application a headless export draws PNG and PDF pictures in (offscreen when
    no display; the window's own when it runs): the ``export`` command's one use of Qt."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    QtGui.QGuiApplication.instance() or QtGui.QGuiApplication(["roofline-explorer"])


def export_chart(doc, path: str | Path, options: ExportOptions | None = None,
                 slots: dict[str, int] | None = None) -> Path:
    """Write the chart of ``doc`` (a Document) to ``path``, the format from its suffix.
    Raises ValueError for a bad format or option, OSError with the system's reason when the
    file cannot be written (a failed write leaves no partial file)."""
    options = options or ExportOptions()
    path = Path(path)
    kind = format_of(path)
    if kind in TEXT_FORMATS:
        return write_text_atomic(path, slide_text(doc, options, slots, kind))
    return write_chart(slide_chart(doc, options, slots), path, options)


def write_chart(chart: Chart, path: str | Path, options: ExportOptions | None = None,
                title: str = "Roofline chart") -> Path:
    """Write ``chart`` (any chart description) to ``path`` as PNG, SVG or PDF, by its suffix."""
    options = options or ExportOptions()
    path = Path(path)
    return write_bytes_atomic(path, chart_bytes(chart, format_of(path), options, title))


def chart_bytes(chart: Chart, kind: ChartFormat, options: ExportOptions,
                title: str = "Roofline chart") -> bytes:
    """``chart`` drawn as a PNG, SVG or PDF file's bytes (any thread: a QImage or PDF writer
    is painted, no widget), so that a caller can drop them unwritten."""
    from explorer.chart.svg import chart_svg

    if kind == ChartFormat.SVG:
        return chart_svg(chart, options.transparent, title).encode("utf-8")
    if kind not in (ChartFormat.PNG, ChartFormat.PDF):
        raise ValueError(f"a chart is drawn as PNG, SVG or PDF, not {kind.upper()}")
    return png_bytes(chart_image(chart, options)) if kind == ChartFormat.PNG else _pdf(chart, title)


def png_bytes(image: QtGui.QImage) -> bytes:
    """``image`` encoded as PNG in memory: writing the file is then an ordinary, atomic write
    whose failure says why (QImage.save only says that it failed)."""
    buffer = QtCore.QBuffer()
    buffer.open(QtCore.QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):  # type: ignore[call-overload]  # (the stubs want bytes; str is taken)
        raise ValueError(f"the {image.width()}×{image.height()} image could not be encoded as PNG")
    return bytes(buffer.data().data())


def chart_image(chart: Chart, options: ExportOptions) -> QtGui.QImage:
    scale = options.png_width / chart.page.width
    image = QtGui.QImage(round(chart.page.width * scale), round(chart.page.height * scale),
                         QtGui.QImage.Format.Format_ARGB32_Premultiplied)
    if options.dpi:
        image.setDotsPerMeterX(round(options.dpi / 0.0254))
        image.setDotsPerMeterY(round(options.dpi / 0.0254))
    _fill(image, QtGui.QColor(0, 0, 0, 0) if options.transparent else QtGui.QColor(chart.background))
    painter = QtGui.QPainter(image)
    try:
        painter.scale(scale, scale)
        paint(painter, chart, background=False)
    finally:
        painter.end()
    return image


def _fill(image: QtGui.QImage, colour: QtGui.QColor, rows: int = 256) -> None:
    """``image`` (ARGB32 premultiplied) filled with ``colour`` a band of rows at a time:
    ``QImage.fill`` holds Python's lock throughout, which for a 16,384 px slide (600 MB)
    stops the GUI thread for a quarter of a second while an export draws in the background."""
    if colour.alpha() not in (0, 255):
        image.fill(colour)  # (premultiplying left to Qt)
        return
    import numpy as np

    pixels = np.frombuffer(image.bits(), dtype=np.uint32).reshape(image.height(), image.bytesPerLine() // 4)
    value = colour.rgba() if colour.alpha() else 0
    for top in range(0, image.height(), rows):
        pixels[top:top + rows] = value


def render_image(doc, options: ExportOptions, slots: dict[str, int] | None = None) -> QtGui.QImage:
    """The chart of ``doc`` as an image ``options.png_width`` wide (PNG, the clipboard)."""
    return chart_image(slide_chart(doc, options, slots), options)


def _pdf(chart: Chart, title: str = "Roofline chart") -> bytes:
    buffer = QtCore.QBuffer()
    buffer.open(QtCore.QIODevice.OpenModeFlag.WriteOnly)
    writer = QtGui.QPdfWriter(buffer)
    writer.setResolution(96)  # one page pixel is one unit: 0.75 pt
    size_pt = QtCore.QSizeF(chart.page.width * 0.75, chart.page.height * 0.75)
    writer.setPageSize(QtGui.QPageSize(size_pt, QtGui.QPageSize.Unit.Point, "chart"))
    writer.setPageMargins(QtCore.QMarginsF(0, 0, 0, 0))
    writer.setTitle(title)
    writer.setCreator("Roofline Explorer")
    painter = QtGui.QPainter(writer)
    try:
        paint(painter, chart)
    finally:
        painter.end()
    del writer  # flushes the document into the buffer
    return bytes(buffer.data().data())
