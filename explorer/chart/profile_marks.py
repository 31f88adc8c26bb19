"""A profile of a real run on the chart: each kernel (its launches summed; small ones
folded into "other") a square at its DRAM intensity and achieved FLOP/s, its area by its
share of the profile's time, coloured like the predicted ops of its class (told by its
name: ``profiles.matching``), grey when no name pattern matched it."""

from __future__ import annotations

import math
from pathlib import Path

from explorer.chart.elements import Chart, ElementKind, Marker, Stroke
from explorer.chart.key import Entry
from explorer.core.analysis.expected import OpClass
from explorer.core.profile import Profile
from explorer.core.units import format_number, format_si, format_time
from explorer.profiles.matching import class_of, read_patterns

# A class of kernels → the op group whose colour it takes (``palette.ROLE_GROUPS``).
GROUP_OF_CLASS = {OpClass.GEMM: "projection", OpClass.ATTENTION: "attention", OpClass.MEMORY: "elementwise",
                  OpClass.LINK: "communication"}


def placed(profile: Profile) -> list:
    """The kernels a chart can place: FLOPs and DRAM bytes both counted."""
    return [k for k in profile.shown if k.total_flops > 0 and k.time_s > 0 and k.bytes.get("dram", 0) > 0]


def profile_points(profiles) -> list[tuple[float, float]]:
    """(intensity, FLOP/s) of every kernel the chart places, for its ranges."""
    return [(k.intensity("dram"), k.flops_per_s) for p in profiles for k in placed(p)]


def profile_marks(chart: Chart, profiles, theme) -> list[Marker]:
    scale = chart.page.lines
    patterns = read_patterns()
    colours = dict(theme.groups)
    out = []
    for profile in profiles:
        total = profile.time_s
        for k in placed(profile):
            op_class = class_of(k.name, patterns)
            colour = colours.get(GROUP_OF_CLASS.get(op_class, ""), theme.suspect)
            share = k.time_s / total if total else 0.0
            tooltip = (f"{k.name} (measured, {Path(profile.source).name}): {k.launches:,} launch(es), "
                       f"{format_time(k.time_s)} ({share:.1%} of the profile)\n"
                       f"{format_number(k.intensity('dram'))} FLOP/byte at DRAM, "
                       f"{format_si(k.flops_per_s, 'FLOP/s')}; {op_class or 'no name pattern matched it'}"
                       + (f"\n{profile.estimated} (estimated, not counted)" if profile.estimated else ""))
            out.append(Marker((chart.x_px(k.intensity("dram")), chart.y_px(k.flops_per_s)), "square",
                              (6 + 18 * math.sqrt(share)) * scale, Stroke(theme.foreground, 1.0 * scale),
                              colour, ElementKind.PROFILE, k.name, tooltip, fill_opacity=0.75))
    return out


def profile_entries(profiles, theme) -> list[Entry]:
    if not profiles:
        return []
    out = [Entry("Profile (measured)", "heading", bold=True)]
    for profile in profiles:
        shown, kernels = len(placed(profile)), len(profile.shown)
        counted = f"{shown} of {kernels} kernels" + ("" if shown else " (no FLOPs and DRAM bytes counted)")
        if profile.estimated:
            counted += f", {profile.estimated}"
        out.append(Entry(f"{Path(profile.source).stem}: {counted}", "marker", theme.foreground, "square",
                         fill=theme.suspect))
    return out
