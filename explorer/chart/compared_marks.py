"""A compared model's whole step on the chart: a grey hexagon at its intensity and FLOP/s
(the bound, as the session's own star), labelled with the model's name, so a slide shows
both models of a comparison (``Session.compare``)."""

from __future__ import annotations

from explorer.chart.elements import Chart, ElementKind, Marker, Stroke, Text
from explorer.chart.layout import Request, Spots
from explorer.chart.snapshot import Snapshot
from explorer.core.units import format_number, format_time

SYMBOL = "hexagon"


def compared_marks(chart: Chart, shot: Snapshot, theme) -> tuple[list[Marker], list[Request]]:
    """The compared step's marker and its label's request (none when no model is compared
    or it cannot run this workload: the key says why)."""
    c = shot.compared
    if c is None or c.analysis is None:
        return [], []
    t = c.analysis.totals
    if t.flops <= 0 or t.time_s <= 0:
        return [], []
    scale = chart.page.lines
    center = (chart.x_px(t.intensity), chart.y_px(t.flops / t.time_s))
    tooltip = (f"{c.name}, whole step, bound: {format_number(t.intensity)} FLOP/byte, "
               f"{format_time(t.time_s)}, {format_number(t.tokens_per_s)} {t.item_unit}/s\n"
               f"the same workload on {c.analysis.hardware.name}, for comparison")
    size = 30 * scale  # larger than the star: where both steps coincide it rings the star
    marker = Marker(center, SYMBOL, size, Stroke(theme.foreground, 1.6 * scale), theme.track,
                    ElementKind.COMPARED, c.name, tooltip, fill_opacity=0.8)
    text = Text(c.name, center, chart.page.text, theme.foreground, ElementKind.COMPARED, tooltip=tooltip)
    spots = Spots([(text, (center[0] + dx * gap, center[1] + dy * gap), 0.0, align, side, 0.0)
                   for gap in (size / 2 + 3, size + 6, 2 * size + 9)
                   # above first: the expected star hangs below the bound's
                   for dx, dy, align, side in ((-1, -1, "end", "above"), (1, -1, "start", "above"),
                                               (-1, 1, "end", "below"), (1, 1, "start", "below"))])
    return [marker], [Request(spots, marker)]


def compared_entry_text(shot: Snapshot) -> str | None:
    """The key's row for the compared model ("Llama 2 13B: whole step, bound"), or why it
    is not drawn; None when no model is compared."""
    c = shot.compared
    if c is None:
        return None
    if c.analysis is None:  # the workload panel's notes say why
        return f"{c.name}: cannot run this workload"
    fits = "" if c.analysis.totals.fits_in_memory else " (does not fit in memory)"
    return f"{c.name}: whole step, bound{fits}"
