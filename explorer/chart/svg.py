"""The chart as SVG that every renderer draws the same way (browsers, resvg, cairo/librsvg,
PowerPoint, Inkscape, LaTeX): plain paths, polylines, polygons and text with explicit font
families, a width, height and viewBox, no clip paths, no filters, no non-scaling strokes.

A *live* SVG (``svg_elements(..., live=True)``, for a web page: ``html_page``) draws the
same elements; those with a tooltip carry it as ``data-tip`` and ``aria-label`` instead of a
``<title>`` child, and its points and roofs are in the Tab order (a roof with a wide
transparent stroke over it, so that a pointer finds it)."""

from __future__ import annotations

import math
from html import escape

from explorer.chart.elements import LINE_ORDER, MARKER_ORDER, Chart, ElementKind, Line, Marker, Stroke, Text
from explorer.chart.text import FONT_FAMILY


def _num(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _stroke(stroke: Stroke) -> str:
    out = f'stroke="{stroke.colour}" stroke-width="{_num(stroke.width)}" fill="none"'
    if stroke.dash:
        out += f' stroke-dasharray="{" ".join(_num(d) for d in stroke.dash)}"'
    if stroke.opacity < 1:
        out += f' stroke-opacity="{_num(stroke.opacity)}"'
    return out


# A live SVG's lines and markers of these kinds are reachable by keyboard (the key's own
# samples are not: the key names what they stand for in text).
_NOT_FOCUSED = (ElementKind.KEY, ElementKind.KEY_LIVE)
HIT_WIDTH = 14.0  # a live line's transparent stroke for the pointer, in page pixels


def page_tip(tooltip: str) -> str:
    """A tooltip as a web page shows it: without the lines that tell how to drag in the
    window ("drag up or down to ask …"), which a page cannot do."""
    return "\n".join(line for line in tooltip.split("\n") if not line.startswith("drag "))


def _tip(tooltip: str, live: bool, focus: bool = True) -> tuple[str, str]:
    """(attributes, child element) carrying a tooltip: a ``<title>`` in a plain SVG; in a
    live one, the text a page shows on hover and focus and a screen reader reads."""
    if not tooltip:
        return "", ""
    if not live:
        return "", f"<title>{escape(tooltip)}</title>"
    text = escape(page_tip(tooltip))
    if not focus:
        return f' class="tip" data-tip="{text}"', ""
    return f' class="tip" tabindex="0" role="img" aria-label="{text}" data-tip="{text}"', ""


def _line(line: Line, live: bool = False) -> str:
    points = " ".join(f"{_num(x)},{_num(y)}" for x, y in line.points)
    attributes, title = _tip(line.tooltip, live, line.kind not in _NOT_FOCUSED)
    drawn = (f'<polyline points="{points}" {_stroke(line.stroke)} stroke-linecap="butt" '
             'stroke-linejoin="round"')
    if not attributes:
        return f"{drawn}>{title}</polyline>"
    hit = (f'<polyline points="{points}" stroke="transparent" stroke-width="{_num(HIT_WIDTH)}" fill="none" '
           'class="hit"/>')
    return f"<g{attributes}>{drawn}/>{hit}</g>"


def shape(symbol: str, center, size: float) -> list[tuple[float, float]] | None:
    """The outline of a marker (None: a circle)."""
    x, y = center
    r = size / 2
    if symbol == "circle":
        return None
    if symbol == "square":
        s = r * 0.85
        return [(x - s, y - s), (x + s, y - s), (x + s, y + s), (x - s, y + s)]
    if symbol == "diamond":
        return [(x, y - r), (x + r, y), (x, y + r), (x - r, y)]
    if symbol in ("triangle", "triangle-down"):
        sign = -1 if symbol == "triangle" else 1
        return [(x, y + sign * r), (x + r * 0.9, y - sign * r * 0.7), (x - r * 0.9, y - sign * r * 0.7)]
    if symbol == "cross":  # an X of two bars, as a 12-corner outline
        t = r * 0.22
        spans: tuple[tuple[float, float], ...] = (
            (0, -t), (r - t, -r), (r, -r + t), (t, 0), (r, r - t), (r - t, r), (0, t),
            (-r + t, r), (-r, r - t), (-t, 0), (-r, -r + t), (-r + t, -r))
        return [(x + u, y + v) for u, v in spans]
    if symbol == "plus":  # a + of two bars, as a 12-corner outline
        t = r * 0.3
        spans = ((-t, -r), (t, -r), (t, -t), (r, -t), (r, t), (t, t), (t, r), (-t, r), (-t, t),
                 (-r, t), (-r, -t), (-t, -t))
        return [(x + u, y + v) for u, v in spans]
    corners = {"star": 5, "pentagon": 5, "hexagon": 6}[symbol]
    points = []
    for k in range(corners * (2 if symbol == "star" else 1)):
        angle = -math.pi / 2 + k * math.pi / (corners if symbol == "star" else corners / 2)
        radius = r if symbol != "star" or k % 2 == 0 else r * 0.45
        points.append((x + radius * math.cos(angle), y + radius * math.sin(angle)))
    return points


def _marker(marker: Marker, live: bool = False) -> str:
    fill = (f'fill="{marker.fill}"' + (f' fill-opacity="{_num(marker.fill_opacity)}"'
                                       if marker.fill_opacity < 1 else "")) if marker.fill else 'fill="none"'
    stroke = _stroke(marker.stroke).replace('fill="none"', "").strip() if marker.stroke else 'stroke="none"'
    attributes, title = _tip(marker.tooltip, live, marker.kind not in _NOT_FOCUSED)
    if attributes:  # (a page's script and tests tell the kinds apart)
        attributes += f' data-kind="{marker.kind}"'
    outline = shape(marker.symbol, marker.center, marker.size)
    if outline is None:
        x, y = marker.center
        radius = _num(marker.size / 2)
        return (f'<circle cx="{_num(x)}" cy="{_num(y)}" r="{radius}" {fill} {stroke}{attributes}>'
                f"{title}</circle>")
    points = " ".join(f"{_num(x)},{_num(y)}" for x, y in outline)
    return f'<polygon points="{points}" {fill} {stroke} stroke-linejoin="round"{attributes}>{title}</polygon>'


def _text(text: Text, live: bool = False) -> str:
    x, y = text.origin
    transform = f"translate({_num(x)},{_num(y)})" + (f" rotate({_num(text.angle)})" if text.angle else "")
    weight = ' font-weight="bold"' if text.bold else ""
    attributes, title = _tip(text.tooltip, live, focus=False)  # (its line or marker takes the focus)
    return (f'<text transform="{transform}" x="{_num(text.dx)}" y="{_num(text.baseline)}" '
            f'font-family="{FONT_FAMILY}" font-size="{_num(text.size)}" fill="{text.colour}"{weight}'
            f"{attributes}>"
            f"{escape(text.text)}{title}</text>")


def svg_elements(chart: Chart, transparent: bool = False, live: bool = False) -> list[str]:
    """The chart's elements as SVG, back to front (the background first, unless
    ``transparent``); ``live``: for a web page (see the module's note)."""
    w, h = chart.page.width, chart.page.height
    body = [] if transparent else [
        f'<rect x="0" y="0" width="{_num(w)}" height="{_num(h)}" fill="{chart.background}"/>']
    body += [_line(line, live) for kind in LINE_ORDER for line in chart.lines if line.kind == kind]
    body += [_marker(m, live) for kind in MARKER_ORDER for m in chart.markers if m.kind == kind]
    body += [_text(t, live) for t in chart.texts]
    return body


def chart_svg(chart: Chart, transparent: bool = False, title: str = "Roofline chart") -> str:
    """The chart as a standalone SVG document sized to its page."""
    w, h = chart.page.width, chart.page.height
    body = svg_elements(chart, transparent)
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{_num(w)}" height="{_num(h)}" '
            f'viewBox="0 0 {_num(w)} {_num(h)}">\n<title>{escape(title)}</title>\n'
            + "\n".join(body) + "\n</svg>\n")
