"""``export --format html``: a scene (or one chart) as a single self-contained web page a
student opens in any browser (``chart.html_page``), and for ``--all-scenes`` a folder of
them with an index.html. The charts are the ones the other formats draw (``slide_chart``
with the same options); the pages are written atomically."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from explorer.chart.html_page import PageStep, chart_page, index_page
from explorer.chart.palette import THEMES
from explorer.chart.points import op_infos
from explorer.chart.slides import ExportOptions, slide_chart
from explorer.core.files.atomic import write_text_atomic

INDEX = "index.html"
INDEX_TITLE = "Roofline Explorer: the scenes"


def page_step(doc, options: ExportOptions, slots: dict[str, int] | None) -> PageStep:
    """The step ``doc`` (a Document) shows now, drawn with ``options``: its chart, its
    caption (the options' subtitle) and its ops."""
    return PageStep(slide_chart(doc, options, slots), options.subtitle or "", tuple(op_infos(doc.analysis())))


def write_pages(pages: dict[Path, tuple[str, list[PageStep]]], theme: str, index: Path | None,
                out: TextIO, err: TextIO) -> int:
    """Write each page (path: (title, steps)) and, with ``index`` (a folder), an index.html
    that links them in order."""
    try:
        for path, (title, steps) in pages.items():
            written = write_text_atomic(path, chart_page(title, steps))
            print(f"wrote {written} ({len(steps)} step(s), {written.stat().st_size:,} bytes)", file=out)
        if index is not None:
            colours = THEMES[theme]
            links = [(path.name, title, len(steps)) for path, (title, steps) in pages.items()]
            written = write_text_atomic(index / INDEX, index_page(INDEX_TITLE, links, colours.background,
                                                                  colours.foreground))
            print(f"wrote {written} ({len(links)} page(s), {written.stat().st_size:,} bytes)", file=out)
    except OSError as exc:
        print(f"roofline-explorer: error: {exc}", file=err)
        return 1
    return 0
