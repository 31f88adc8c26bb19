"""A chart's web page: one self-contained HTML file that holds a scene's steps (or one
chart), each step's chart a live SVG drawn from the same chart description as every other
output (``svg.svg_elements``), with its caption and a table of its ops (what its points
show, for a screen reader and for whoever wants the numbers). The page's style and script
(``html_assets``) are written into it and its Content-Security-Policy allows nothing else:
no font, script, style or picture is fetched, so it opens the same from a course page, a
USB stick or a phone with no network."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from explorer.chart.elements import Chart
from explorer.chart.html_assets import SCRIPT, STYLE
from explorer.chart.palette import ROLE_GROUP
from explorer.chart.points import OpInfo
from explorer.chart.svg import svg_elements
from explorer.core.units import format_number, format_si, format_time

KEYS = ("Keys: → or Page Down: the next step; ← or Page Up: the previous one. Tab moves through the "
        "chart's points and roofs, each showing its numbers.")
COLUMNS = ("Op", "Group", "FLOPs", "Bytes", "Intensity (FLOP/byte)", "Attainable", "Bound", "Time (each)",
           "Share of the step")


@dataclass(frozen=True)
class PageStep:
    """One step of a page: its chart, its caption ("" for none) and the ops its points show."""

    chart: Chart
    caption: str
    ops: tuple[OpInfo, ...] = ()


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def _head(title: str, style: str, script: str | None) -> str:
    """The page's head: no request allowed but for its own style and script (by hash)."""
    scripts = _hash(script) if script is not None else "'none'"
    policy = (f"default-src 'none'; style-src {_hash(style)}; script-src {scripts}; img-src 'none'; "
              "base-uri 'none'; form-action 'none'")
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{escape(title)}</title>\n<style>{style}</style>\n</head>\n")


def page_style(background: str, foreground: str, ratio: float = 16 / 9) -> str:
    """The style sheet in a theme's colours (its colour scheme dark where the background is),
    for charts ``ratio`` times as wide as they are high."""
    red, green, blue = (int(background.lstrip("#")[i:i + 2], 16) for i in (0, 2, 4))
    scheme = "light" if 0.299 * red + 0.587 * green + 0.114 * blue >= 128 else "dark"
    return (STYLE.replace("{scheme}", scheme).replace("{bg}", background).replace("{fg}", foreground)
            .replace("{ratio}", f"{ratio:.4f}"))


def live_svg(chart: Chart, label: str) -> str:
    """The chart as an SVG element for the page: sized by its box (the viewBox keeps the
    page's proportions), named for a screen reader, its points and roofs focusable."""
    w, h = chart.page.width, chart.page.height
    return (f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w:g} {h:g}" role="group" '
            f'aria-label="{escape(label)}">\n' + "\n".join(svg_elements(chart, live=True)) + "\n</svg>")


def ops_table(ops: Sequence[OpInfo], caption: str) -> str:
    """The text equivalent of a step's points: every op with what its tooltip says."""
    if not ops:
        return f"<p>{escape(caption)}: none (this chart shows no ops).</p>"
    head = "".join(f'<th scope="col">{escape(c)}</th>' for c in COLUMNS)
    rows = []
    for o in ops:
        name = o.name + (f" (×{o.count} layers)" if o.count > 1 else "")
        cells = (format_si(o.flops, "FLOP"), format_si(o.bytes, "B"), format_number(o.intensity),
                 format_si(o.performance, "FLOP/s"))
        group = ROLE_GROUP.get(o.role, "elementwise")
        rows.append(f'<tr><th scope="row">{escape(name)}</th><td>{escape(group)}</td>'
                    + "".join(f'<td class="n">{escape(c)}</td>' for c in cells)
                    + f'<td>{escape(o.bound)}</td><td class="n">{escape(format_time(o.time_s))}</td>'
                    f'<td class="n">{o.share:.1%}</td></tr>')
    # (a region in the Tab order: a table wider than a phone scrolls by keyboard too)
    return (f'<div class="ops" role="region" tabindex="0" aria-label="{escape(caption)}">\n'
            f"<table>\n<caption>{escape(caption)}</caption>\n<thead><tr>{head}</tr></thead>\n<tbody>\n"
            + "\n".join(rows) + "\n</tbody>\n</table>\n</div>")


def _step(step: PageStep, number: int, count: int) -> str:
    ident = f"scene-step-{number}"  # (not the #step-N an address names: the browser would scroll to it)
    of = f"Step {number} of {count}" if count > 1 else "The chart"
    heading = step.caption or of
    svg = live_svg(step.chart, f"{of}: the roofline chart. Tab moves through its points and roofs; the "
                               "table below lists its ops.")
    table = ops_table(step.ops, f"{of}: its ops, one point each on the chart")
    return (f'<section class="step" id="{ident}" aria-labelledby="{ident}-caption">\n'
            f'<h2 id="{ident}-caption" class="sr-only" tabindex="-1">{escape(heading)}</h2>\n'
            f"<figure>\n{svg}\n</figure>\n{table}\n</section>")


def chart_page(title: str, steps: Sequence[PageStep], start: int = 0) -> str:
    """A page holding ``steps`` (a scene's, or one chart), opened at step ``start`` (from 0),
    in the colours of the first step's chart."""
    if not steps:
        raise ValueError("a page needs at least one step")
    if not 0 <= start < len(steps):
        raise ValueError(f"start must be a step from 0 to {len(steps) - 1}, got {start}")
    first = steps[0].chart
    nav = ""
    if len(steps) > 1:
        nav = ('<nav aria-label="Steps">\n<button type="button" id="prev">← Previous</button>\n'
               f'<span id="counter">Step {start + 1} of {len(steps)}</span>\n'
               '<button type="button" id="next">Next →</button>\n</nav>\n'
               '<p id="said" class="sr-only" aria-live="polite"></p>\n')
    body = "\n".join(_step(step, i, len(steps)) for i, step in enumerate(steps, 1))
    keys = f'<p class="keys">{escape(KEYS if len(steps) > 1 else KEYS.split(". ", 1)[1])}</p>\n'
    style = page_style(first.background, first.foreground, first.page.width / first.page.height)
    return (_head(title, style, SCRIPT)
            + f'<body data-start="{start}">\n<header>\n<h1>{escape(title)}</h1>\n{nav}</header>\n'
            + f"<main>\n{body}\n{keys}</main>\n"
            + '<div id="tip" role="tooltip" hidden></div>\n'
            + f"<script>{SCRIPT}</script>\n</body>\n</html>\n")


def index_page(title: str, pages: Sequence[tuple[str, str, int]], background: str, foreground: str) -> str:
    """A page of links to other pages: (file name, title, number of steps) each."""
    items = "\n".join(f'<li><a href="{escape(href)}">{escape(name)}</a> ({steps} step{"s" * (steps != 1)})'
                      "</li>" for href, name, steps in pages)
    return (_head(title, page_style(background, foreground), None)
            + f"<body>\n<header>\n<h1>{escape(title)}</h1>\n</header>\n"
            + f"<main>\n<ul>\n{items}\n</ul>\n</main>\n</body>\n</html>\n")
