"""The key beside the plot: the devices with their line styles and ridge marks, what the
star, hollow points and point sizes mean, the op colours, measured points, and any label
the plot had no room for. Laid out in a column of its own, so it never covers the data."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

from explorer.chart import palette
from explorer.chart.elements import ElementKind, Line, Marker, Stroke, Text
from explorer.chart.text import BOLD, text_width, wrap


@dataclass(frozen=True)
class Entry:
    """One row of the chart's key: its text and its swatch."""

    text: str
    swatch: str  # "line" | "marker" | "heading" | "more" (the second row of a long entry)
    colour: str = ""
    symbol: str = ""
    dash: tuple[float, ...] = ()
    fill: str | None = None
    fill_opacity: float = 1.0  # as the chart fills the mark
    bold: bool = False
    live: bool = False  # changes while a drag moves the chart (the labels with no room): KEY_LIVE


def entry_width(entry: Entry, size: float) -> float:
    swatch = 0.0 if entry.swatch == "heading" else 2.4 * size
    return swatch + text_width(entry.text, size, entry.bold)


def key_width(entries: list[Entry], size: float) -> float:
    return max((entry_width(e, size) for e in entries), default=0.0) + size


KeyParts = tuple[tuple[Line, ...], tuple[Marker, ...], tuple[Text, ...]]  # a key's lines, markers, texts
MAX_ROWS = 3  # a key entry wraps to at most three rows (a number is rarely cut then)
WHAT_IF = "datasheet value (before a what-if)"  # the entry a dragged roof adds


@lru_cache(maxsize=1024)  # a drag fits the same entries on every move
def fitted(entry: Entry, size: float, width: float) -> tuple[Entry, ...]:
    """``entry`` as one to ``MAX_ROWS`` rows that fit ``width``: its text wrapped at
    spaces, the last row shortened with "…" if need be (rows after the first have no
    swatch)."""
    room = width - entry_width(replace(entry, text=""), size)
    lines = wrap(entry.text, size * (BOLD if entry.bold else 1.0), room) or [""]
    rows = [replace(entry, text=lines[0])]
    rest = lines[1:]
    while rest:
        last = len(rows) == MAX_ROWS - 1
        rows.append(replace(entry, text=" ".join(rest) if last else rest[0], swatch="more"))
        rest = [] if last else rest[1:]
    out = []
    for row in rows:
        text = row.text
        while len(text) > 1 and entry_width(replace(row, text=text), size) > width:
            text = text.rstrip("…")[:-1].rstrip() + "…"
        out.append(replace(row, text=text))
    return tuple(out)


def draw_key(entries: list[Entry], left: float, top: float, right: float, bottom: float, size: float,
             foreground: str, background: str, scale: float) -> KeyParts:
    """The key's swatches and texts (lines, markers, texts), one entry per row from ``top``
    (up to ``MAX_ROWS`` when its text is wider than the key); rows that would pass ``bottom``
    are left out after a "…" row."""
    return _drawn_key(tuple(entries), left, top, right, bottom, size, foreground, background, scale)


@lru_cache(maxsize=16)  # the same for every frame of a drag
def _drawn_key(entries: tuple[Entry, ...], left: float, top: float, right: float, bottom: float,
               size: float, foreground: str, background: str, scale: float) -> KeyParts:
    lines: list[Line] = []
    markers: list[Marker] = []
    texts: list[Text] = []
    row = 1.45 * size
    y = top
    rows = [r for e in entries for r in fitted(e, size, right - left)]
    for index, entry in enumerate(rows):
        if y + 2 * row > bottom and index < len(rows) - 1:
            texts.append(Text("…", (left, y), size, foreground, ElementKind.KEY))
            break
        middle = y + row / 2
        kind = ElementKind.KEY_LIVE if entry.live else ElementKind.KEY
        if entry.swatch == "line":
            stroke = Stroke(entry.colour, 2.4 * scale, tuple(d * 2.4 * scale for d in entry.dash))
            lines.append(Line(((left, middle), (left + 1.8 * size, middle)), stroke, kind))
            if entry.symbol:
                markers.append(Marker((left + 0.9 * size, middle), entry.symbol, 0.8 * size,
                                      Stroke(entry.colour, 1.4 * scale), background, kind))
        elif entry.swatch == "marker":
            markers.append(Marker((left + 0.9 * size, middle), entry.symbol, 0.85 * size,
                                  Stroke(entry.colour, 1.6 * scale), entry.fill, kind,
                                  fill_opacity=entry.fill_opacity))
        text_left = left if entry.swatch == "heading" else left + 2.4 * size
        texts.append(Text(entry.text, (text_left, middle), size, foreground, kind,
                          dy=-0.58 * size, bold=entry.bold))
        y += row
    return tuple(lines), tuple(markers), tuple(texts)


# What an op with no arithmetic is, where the key lists it (it has no place on a log axis).
UNPLOTTED = {"all_to_all": "all-to-all", "send_recv": "pipeline sends", "all_gather": "all-gather",
             "embedding": "embedding lookup"}


def unplotted_entries(shares: dict[str, float]) -> list[Entry]:
    """The ops the plot cannot show (no FLOPs, so no intensity), with their share of the
    step, so no part of the step is dropped silently: {role: share}."""
    shown = {role: share for role, share in shares.items() if share >= 0.001}
    if not shown:
        return []
    return [Entry("Not on the plot (no arithmetic)", "heading", bold=True)] + [
        Entry(f"{UNPLOTTED.get(role, role.replace('_', ' '))}: {share:.1%} of the step", "more")
        for role, share in sorted(shown.items(), key=lambda item: -item[1])]


def workload_entries(groups: list[str], suites: list[str], suspect: bool, theme, expected: str | None = None,
                     contended: bool = False, track: bool = False, selected: str = "",
                     compared: tuple[str, bool] | None = None, unfit_track: bool = False) -> list[Entry]:
    """The workload's rows of the key; ``expected``: what the expected time uses ("published
    efficiency"; None: the bound alone is shown); ``compared``: the row of a compared model
    and whether its step is drawn; ``track``: the batch track is drawn (``unfit_track``: a
    track of a step that does not fit at any batch);
    ``selected``: the op ringed as selected (a scene's caption discusses it)."""
    step = "whole step" if expected is None else "whole step, bound"
    out = [Entry(step, "marker", theme.foreground, "star", fill=theme.star)]
    if expected is not None:
        out.append(Entry(f"expected: {expected}", "marker", theme.foreground, "star"))
    if compared is not None:
        text, drawn = compared
        out.append(Entry(text, "marker", theme.foreground, "hexagon", fill=theme.track, fill_opacity=0.8)
                   if drawn else Entry(text, "more"))
    if track:
        out.append(Entry("the step as the batch changes", "line", theme.track, "", palette.TRACK_DASH))
    if unfit_track:
        out.append(Entry("the step as the batch changes: it does not fit", "line", theme.track, "",
                         palette.UNFIT_DASH))
    if selected:
        out.append(Entry(f"selected: {selected}", "marker", theme.selected, "circle"))
    out.append(Entry("Ops (area ∝ time)", "heading", bold=True))
    out += [Entry(group, "marker", dict(theme.groups)[group], palette.GROUP_SHAPES[group],
                  fill=theme.background) for group in groups]
    if suites:
        out.append(Entry("Measured (filled)", "heading", bold=True))
        out += [Entry(suite, "marker", theme.foreground, palette.SUITE_SHAPES.get(suite, "circle"),
                      fill=theme.measured) for suite in suites]
    if suspect:
        out.append(Entry("suspect: may have run from cache", "marker", theme.suspect, "cross",
                         fill=theme.suspect))
    if contended:
        out.append(Entry("contended: other programs were busy", "marker", theme.suspect, "triangle-down",
                         fill=theme.suspect))
    return out
