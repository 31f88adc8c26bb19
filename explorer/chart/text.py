"""How wide a line of text is, without a font engine: DejaVu Sans advance widths (measured
once with Qt at 1000 px per em). DejaVu is among the widest common sans fonts, so text laid
out with these widths also fits where Arial or Helvetica draw it."""

from __future__ import annotations

from functools import lru_cache

FONT_FAMILY = "DejaVu Sans, Verdana, Arial, Helvetica, sans-serif"
ASCENT, DESCENT = 0.928, 0.236  # of the font size, above and below the baseline
LINE_HEIGHT = 1.164
BOLD = 1.10  # bold text is about this much wider
UNKNOWN = 0.65  # a character not in the table

_WIDTHS = dict(zip(
    " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~"
    "×µ–—…·°≥≤÷→’“”éü",
    (318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337, *[636] * 10, 337, 337,
     838, 838, 838, 531, 1000, 684, 686, 698, 770, 632, 575, 775, 752, 295, 295, 656, 557, 863, 748, 787,
     603, 787, 695, 635, 611, 732, 684, 989, 685, 611, 685, 390, 337, 390, 838, 500, 500, 613, 635, 550,
     635, 615, 352, 635, 634, 278, 278, 579, 278, 974, 634, 612, 635, 635, 411, 521, 392, 634, 592, 818,
     592, 592, 525, 636, 337, 636, 838, 838, 636, 500, 1000, 1000, 318, 500, 838, 838, 838, 838, 318,
     518, 518, 615, 634), strict=True))


def text_width(text: str, size: float, bold: bool = False) -> float:
    """Width in pixels of ``text`` drawn at ``size`` pixels per em."""
    return _ems(text) * size * (BOLD if bold else 1.0)


@lru_cache(maxsize=4096)
def _ems(text: str) -> float:
    return sum(_WIDTHS.get(c, UNKNOWN * 1000) for c in text) / 1000


def wrap(text: str, size: float, width: float) -> list[str]:
    """``text`` broken at spaces into lines no wider than ``width`` (a word longer than the
    width gets a line of its own)."""
    lines: list[str] = []
    for word in text.split():
        if lines and text_width(f"{lines[-1]} {word}", size) <= width:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    return lines
