"""The chart as SVG that every renderer draws the same way (browsers, resvg, cairo/librsvg,
PowerPoint, Inkscape, LaTeX): plain paths, polylines, polygons and text with explicit font
families, a width, height and viewBox, no clip paths, no filters, no non-scaling strokes."""

from __future__ import annotations

import math
from html import escape

from explorer.chart.elements import LINE_ORDER, MARKER_ORDER, Chart, Line, Marker, Stroke, Text
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


def _line(line: Line) -> str:
    points = " ".join(f"{_num(x)},{_num(y)}" for x, y in line.points)
    title = f"<title>{escape(line.tooltip)}</title>" if line.tooltip else ""
    return (f'<polyline points="{points}" {_stroke(line.stroke)} stroke-linecap="butt" '
            f'stroke-linejoin="round">{title}</polyline>')


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


def _marker(marker: Marker) -> str:
    fill = (f'fill="{marker.fill}"' + (f' fill-opacity="{_num(marker.fill_opacity)}"'
                                       if marker.fill_opacity < 1 else "")) if marker.fill else 'fill="none"'
    stroke = _stroke(marker.stroke).replace('fill="none"', "").strip() if marker.stroke else 'stroke="none"'
    title = f"<title>{escape(marker.tooltip)}</title>" if marker.tooltip else ""
    outline = shape(marker.symbol, marker.center, marker.size)
    if outline is None:
        x, y = marker.center
        radius = _num(marker.size / 2)
        return f'<circle cx="{_num(x)}" cy="{_num(y)}" r="{radius}" {fill} {stroke}>{title}</circle>'
    points = " ".join(f"{_num(x)},{_num(y)}" for x, y in outline)
    return f'<polygon points="{points}" {fill} {stroke} stroke-linejoin="round">{title}</polygon>'


def _text(text: Text) -> str:
    x, y = text.origin
    transform = f"translate({_num(x)},{_num(y)})" + (f" rotate({_num(text.angle)})" if text.angle else "")
    weight = ' font-weight="bold"' if text.bold else ""
    title = f"<title>{escape(text.tooltip)}</title>" if text.tooltip else ""
    return (f'<text transform="{transform}" x="{_num(text.dx)}" y="{_num(text.baseline)}" '
            f'font-family="{FONT_FAMILY}" font-size="{_num(text.size)}" fill="{text.colour}"{weight}>'
            f"{escape(text.text)}{title}</text>")


def chart_svg(chart: Chart, transparent: bool = False, title: str = "Roofline chart") -> str:
    """The chart as a standalone SVG document sized to its page."""
    w, h = chart.page.width, chart.page.height
    body = [] if transparent else [
        f'<rect x="0" y="0" width="{_num(w)}" height="{_num(h)}" fill="{chart.background}"/>']
    body += [_line(line) for kind in LINE_ORDER for line in chart.lines if line.kind == kind]
    body += [_marker(m) for kind in MARKER_ORDER for m in chart.markers if m.kind == kind]
    body += [_text(t) for t in chart.texts]
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{_num(w)}" height="{_num(h)}" '
            f'viewBox="0 0 {_num(w)} {_num(h)}">\n<title>{escape(title)}</title>\n'
            + "\n".join(body) + "\n</svg>\n")
