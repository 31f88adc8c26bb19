"""A picture's heading: its title (up to two lines, smaller where that keeps it whole) and
caption (up to three) centred at the top of the page, each wrapped to the page and cut
with "…" where it runs longer.
Every chart kind (the roofline, the scaling laws) draws the same heading."""

from __future__ import annotations

from explorer.chart.elements import ElementKind, Page, Text
from explorer.chart.text import LINE_HEIGHT, text_width, wrap

CAPTION_SCALE = 1.15  # a caption's text against the chart's (2.9 % of a slide's height)


def lines(text: str, size: float, width: float, most: int) -> list[str]:
    """``text`` wrapped to ``width``, at most ``most`` lines, the last ending in "…" when
    some was left out."""
    wrapped = wrap(text, size, width)
    if len(wrapped) <= most:
        return wrapped
    last = " ".join(wrapped[most - 1:])
    while len(last) > 1 and text_width(last + "…", size) > width:
        last = last[:-1].rstrip()
    return [*wrapped[:most - 1], last + "…"]


def title_size(title: str, page: Page, width: float) -> float:
    """The title's size: the page's, or smaller (down to the caption's) where that keeps a
    long title whole in two lines (a training step over 1,024 devices in a window at
    1366 px was cut with "…")."""
    size, least = page.title, CAPTION_SCALE * page.text
    while size > least and len(wrap(title, size, width)) > 2:
        size = max(least, size * 0.95)
    return size


def heading(title: str, caption: str, page: Page, colour: str) -> tuple[list[Text], float]:
    """The title's and caption's texts, and the height they take from the page's top."""
    pad = 0.6 * page.text
    width = page.width - 2 * pad
    texts, y = [], pad
    for kind, size, text, most in ((ElementKind.TITLE, title_size(title, page, width), title, 2),
                                   (ElementKind.SUBTITLE, CAPTION_SCALE * page.text, caption, 3)):
        for line in lines(text, size, width, most):
            texts.append(Text(line, (page.width / 2, y), size, colour, kind, dx=-text_width(line, size) / 2))
            y += LINE_HEIGHT * size
    return texts, y
