"""What a roofline chart shows, worked out once per snapshot: the devices with their roofs
and style slots, the data's decades, the room the compute roofs' labels need, and the key's
entries (where the key goes changes only where they are drawn)."""

from __future__ import annotations

import math
from functools import lru_cache
from typing import NamedTuple

from explorer.chart import palette
from explorer.chart.compared_marks import compared_entry_text
from explorer.chart.elements import Page
from explorer.chart.geometry import Rect
from explorer.chart.key import WHAT_IF, Entry, unplotted_entries, workload_entries
from explorer.chart.points import pinned_ops
from explorer.chart.profile_marks import profile_entries, profile_points
from explorer.chart.roofs import Shown, merged, roof_text
from explorer.chart.snapshot import Snapshot
from explorer.chart.text import text_width
from explorer.core.analysis.roofline import COMPUTE, Ceilings, Roof
from explorer.core.analysis.terms import op_roofs
from explorer.core.hardware.hardware import Hardware


def shown_devices(shot: Snapshot, slots: dict[str, int]) -> list[Shown]:
    session = shot.session
    out = []
    for device in shot.devices:
        hw = device.hardware
        ceilings, matrix = _ceilings(hw, session.params.dtype, session.precisions)
        out.append(Shown(hw, device.datasheet, ceilings, slots.get(hw.id, 0), matrix))
    return out


@lru_cache(maxsize=64)  # a batch drag asks for the same devices on every move
def _ceilings(hw: Hardware, dtype: str, precisions: tuple[str, ...]) -> tuple[Ceilings, Roof]:
    """The roofs drawn for ``hw`` (the chosen ``precisions``, else those ops of ``dtype``
    run at) and the matrix peak the workload's ops run under."""
    roofs = op_roofs(hw, dtype)
    ceilings = Ceilings.from_hardware(hw, precisions or (roofs.matrix.precision, roofs.vector.precision))
    if not ceilings.compute:  # none of the chosen precisions on this device
        ceilings = Ceilings.from_hardware(hw, ("fp32",))
    return ceilings, _roof_of(roofs.matrix)


def _roof_of(peak) -> Roof:
    return Roof(peak.label, peak.flops_per_s, peak.provenance.derived)


def data_ranges(shot: Snapshot, devices: list[Shown], measured) -> tuple[tuple[float, float], ...]:
    """Decades that hold every op, measured point and ridge (x), every roof and point (y)."""
    a = shot.analysis
    xs = [float(v) for v, f in zip(a.intensity, a.flops, strict=True) if f > 0]
    ys = [float(v) for v, f in zip(a.performance, a.flops, strict=True) if f > 0]
    xs += [p.intensity for _, p in measured]
    ys += [p.flops_per_s for _, p in measured]
    if shot.expected is not None:  # the step at its expected time sits below the bound's
        ys.append(a.totals.flops / shot.expected.time_s)
    for x, y in profile_points(shot.profiles, a.hardware):
        xs.append(x)
        ys.append(y)
    if shot.compared is not None and shot.compared.analysis is not None:
        t = shot.compared.analysis.totals
        if t.flops > 0 and t.time_s > 0:
            xs.append(t.intensity)
            ys.append(t.flops / t.time_s)
    ridge = max(float(s.ceilings.ridges().max()) for s in devices)
    top = max(float(s.ceilings.compute_values.max()) for s in devices)
    low_x, high_x = min([*xs, 1.0]) / 3, max(max(xs, default=1.0) * 3, ridge * 10)
    low_y = min(min(ys, default=top) / 3, top / 1e4)
    return ((10.0 ** math.floor(math.log10(low_x)), 10.0 ** math.ceil(math.log10(high_x))),
            (10.0 ** math.floor(math.log10(low_y)), top * 3))


def flats(devices: list[Shown], page: Page, multi: bool) -> tuple[tuple[float, float], ...]:
    """(ridge, room its label needs) for every compute roof's flat part."""
    return tuple((roof.value / shown.ceilings.bandwidth[0].value,
                  text_width(roof_text(shown, roof, COMPUTE, multi), page.text) + 16)
                 for shown in devices for roof in merged(shown.ceilings).compute)


def room_for_labels(x_range, plot: Rect, flats: tuple[tuple[float, float], ...]):
    """Widen the intensity range (by half decades, at most three) until every compute roof's
    flat part, right of its ridge, is long enough for its label (``flats``)."""
    low, high = x_range
    for _ in range(3):  # at most a decade and a half more: a narrow plot cannot gain by it
        if all(plot.width * math.log10(high / max(ridge, low)) / math.log10(high / low) >= room
               for ridge, room in flats):
            break
        high *= 10 ** 0.5
    return low, high


class Content(NamedTuple):
    """What a chart shows, worked out once: where the key goes (inside, beside, below)
    changes only where it is drawn."""

    devices: list[Shown]
    measured: list
    entries: list[Entry]
    ops: list  # the plotted ops and their tooltips (``points.op_tips``)
    ranges: tuple  # the data's decades (``data_ranges``), before room for the roofs' labels; or kept
    flats: tuple  # the compute roofs' ridges and their labels' widths (``flats``)


def key_entries(shot: Snapshot, devices: list[Shown], theme, measured) -> list[Entry]:
    entries = [Entry("Devices", "heading", bold=True)]
    for shown in devices:
        moved = " (what-if)" if shown.hardware != shown.datasheet else ""
        entries.append(Entry(shown.hardware.label + moved, "line", shown.colour(theme), shown.symbol,
                             shown.dash))
    if any(s.hardware != s.datasheet for s in devices):
        entries.append(Entry(WHAT_IF, "line", theme.track, "", (1.4, 2.1)))
    a = shot.analysis
    pinned = set(pinned_ops(a))  # drawn on their link's roof
    drawn = [o for i, (o, f) in enumerate(zip(a.ops, a.flops, strict=True)) if f > 0 or i in pinned]
    groups = list(dict.fromkeys(palette.group_of(o.role) for o in drawn))
    suites = sorted({p.suite for _, p in measured if not (p.suspect or p.contended)})
    expected = None if shot.expected is None else f"{shot.session.params.efficiency} efficiency"
    unplotted: dict[str, float] = {}
    for i, (o, f, share) in enumerate(zip(a.ops, a.flops, a.time_share, strict=True)):
        if f <= 0 and i not in pinned:
            unplotted[str(o.role)] = unplotted.get(str(o.role), 0.0) + float(share)
    plotted = {o.name for o, f in zip(a.ops, a.flops, strict=True) if f > 0}
    selected = shot.session.selected_op if shot.session.selected_op in plotted else ""
    text = compared_entry_text(shot)
    compared = None if text is None or shot.compared is None else (text, shot.compared.analysis is not None)
    track, fits = shot.sweep.batch.size > 1, bool(shot.sweep.fits.all())
    return entries + workload_entries(groups, suites, any(p.suspect for _, p in measured), theme, expected,
                                      any(p.contended and not p.suspect for _, p in measured),
                                      track=track and fits, selected=selected or "", compared=compared,
                                      unfit_track=track and not fits) \
        + unplotted_entries(unplotted) + profile_entries(shot.profiles, theme, shot.analysis.hardware)

