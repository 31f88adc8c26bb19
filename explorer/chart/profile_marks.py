"""A profile of a real run on the chart: each kernel (its launches summed, each product shape
apart; small ones folded into "other", not placed from shapes) a square at its DRAM
intensity and achieved FLOP/s, its area by its share of the profile's time, coloured like
the predicted op its product shape matches, else like the predicted ops of its class (told
by its name: ``core.analysis.profile_match``), grey when neither matched it; where the
profile counts a kernel's bytes at the L2 and L1 caches, a hollow mark at each of those
intensities on a line at the same FLOP/s (Nsight Compute's hierarchical roofline)."""

from __future__ import annotations

import math
from pathlib import Path

from explorer.chart.elements import Chart, ElementKind, Line, Marker, Stroke
from explorer.chart.key import Entry
from explorer.chart.palette import ROLE_GROUP
from explorer.core.analysis.expected import OpClass
from explorer.core.model.profile import OTHER, Profile
from explorer.core.units import format_number, format_si, format_time

# A class of kernels → the op group whose colour it takes (``palette.ROLE_GROUPS``).
GROUP_OF_CLASS = {OpClass.GEMM: "projection", OpClass.ATTENTION: "attention", OpClass.MEMORY: "elementwise",
                  OpClass.LINK: "communication"}


def placed(profile: Profile, hardware=None) -> list:
    """The kernels a chart can place: FLOPs and DRAM bytes both counted. Where FLOPs come
    from recorded shapes, the small kernels folded into "other" are not: most have no FLOPs
    known (not none done), and the FLOPs of a few over the bytes of all would place them
    at an intensity none of them has. Nor is a kernel whose estimate from shapes is beyond
    ``hardware``'s roofs (``profile_match.beyond_roof``): no measurement of that device."""
    from explorer.core.analysis.profile_match import beyond_roof  # (with a profile only)

    unknown = "FLOPs" in profile.estimated
    judged = hardware is not None and profile.estimated
    return [k for k in profile.shown if not (unknown and k.name == OTHER) and k.total_flops > 0
            and k.time_s > 0 and k.bytes.get("dram", 0) > 0
            and not (judged and beyond_roof(k, hardware, profile.estimated))]


def beyond(profile: Profile, hardware) -> int:
    """How many of the kernels the chart shows it leaves out as beyond ``hardware``'s roofs."""
    from explorer.core.analysis.profile_match import beyond_roof

    if hardware is None or not profile.estimated:
        return 0
    return sum(1 for k in profile.shown if k.time_s > 0 and beyond_roof(k, hardware, profile.estimated))


# The caches a profile may count bytes at, each with its mark: Nsight Compute's hierarchical
# roofline draws a kernel once per level, at the same FLOP/s and that level's intensity.
PROFILE_MIN_PX = 11.0  # a kernel's square, before its share of the profile adds to it
# (shapes no op group has: a hollow mark in a group's colour must not read as an op of it)
CACHE_SYMBOLS = {"l2": "plus", "l1": "cross"}
CACHE_NAMES = {"l2": "L2", "l1": "L1"}


def _levels(k) -> list[str]:
    """The caches ``k`` has bytes counted at (``CACHE_SYMBOLS``' order)."""
    return [level for level in CACHE_SYMBOLS if k.bytes.get(level, 0) > 0]


def profile_points(profiles, hardware=None) -> list[tuple[float, float]]:
    """(intensity, FLOP/s) of every kernel the chart places, at DRAM and at each cache it
    counts, for the chart's ranges."""
    return [(k.intensity(level), k.flops_per_s) for p in profiles for k in placed(p, hardware)
            for level in ("dram", *_levels(k))]


def name_of(k) -> str:
    """A placed kernel's name on the chart: its product shape beside it ("aten::addmm 768×3072")."""
    return f"{k.name} {k.shape[0]}×{k.shape[1]}" if len(k.shape) == 2 else k.name


def _matched(k, analysis, colours, theme) -> tuple[str, str]:
    """(colour, words) of a kernel: the predicted op its shape matches, else its class by name."""
    from explorer.core.analysis.profile_match import kernel_class, ops_of_shape  # (with a profile only)

    ops = ops_of_shape(analysis, k.shape) if analysis is not None else []
    if ops:
        k_dim, n = k.shape
        names = " + ".join(dict.fromkeys(o.name for o in ops))
        return (colours.get(ROLE_GROUP.get(str(ops[0].role), ""), theme.suspect),
                f"matched by its shape {k_dim:,} × {n:,} to {names}")
    op_class = kernel_class(k)
    colour = colours.get(GROUP_OF_CLASS.get(op_class or "", ""), theme.suspect)
    return colour, op_class or "no name pattern matched it"


def profile_marks(chart: Chart, profiles, theme, analysis=None) -> tuple[list[Line], list[Marker]]:
    """Each placed kernel's square at DRAM and, where the profile counts them, a hollow mark
    at L2 and at L1 on a thin line at the same FLOP/s (the hierarchical view). ``analysis``:
    the prediction a product is matched to by its shape."""
    scale = chart.page.lines
    colours = dict(theme.groups)
    lines, out = [], []
    hardware = analysis.hardware if analysis is not None else None
    for profile in profiles:
        total = profile.time_s
        for k in placed(profile, hardware):
            colour, matched = _matched(k, analysis, colours, theme)
            name = name_of(k)
            share = k.time_s / total if total else 0.0
            tooltip = (f"{name} (measured, {Path(profile.source).name}): {k.launches:,} launch(es), "
                       f"{format_time(k.time_s)} ({share:.1%} of the profile)\n"
                       f"{format_number(k.intensity('dram'))} FLOP/byte at DRAM, "
                       f"{format_si(k.flops_per_s, 'FLOP/s')}; {matched}"
                       + (f"\n{profile.estimated} (estimated, not counted)" if profile.estimated else ""))
            square = (chart.x_px(k.intensity("dram")), chart.y_px(k.flops_per_s))
            # at least as large as a measured point (11 px at scale 1), larger by its share
            out.append(Marker(square, "square", (PROFILE_MIN_PX + 16 * math.sqrt(share)) * scale,
                              Stroke(theme.foreground, 1.4 * scale), colour, ElementKind.PROFILE, name,
                              tooltip, fill_opacity=0.75))
            levels = _levels(k)
            for level in levels:
                at = (chart.x_px(k.intensity(level)), square[1])
                out.append(Marker(at, CACHE_SYMBOLS[level], 12 * scale, Stroke(colour, 1.6 * scale),
                                  theme.background, ElementKind.PROFILE, f"{name} at {CACHE_NAMES[level]}",
                                  f"{name} at {CACHE_NAMES[level]}: {format_number(k.intensity(level))} "
                                  f"FLOP/byte of the {format_si(k.bytes[level], 'B')} the "
                                  f"{CACHE_NAMES[level]} served, {format_si(k.flops_per_s, 'FLOP/s')}"))
            if levels:
                ends = sorted([square[0], *(chart.x_px(k.intensity(level)) for level in levels)])
                lines.append(Line(((ends[0], square[1]), (ends[-1], square[1])),
                                  Stroke(colour, 1.0 * scale, (2.0 * scale, 2.0 * scale), opacity=0.8),
                                  ElementKind.PROFILE, tooltip=f"{name}: DRAM, L2 and L1 intensities"))
    return lines, out


def profile_entries(profiles, theme, hardware=None) -> list[Entry]:
    if not profiles:
        return []
    out = [Entry("Profile (measured)", "heading", bold=True)]
    for profile in profiles:
        shown, kernels = len(placed(profile, hardware)), len(profile.shown)
        counted = f"{shown} of {kernels} kernels" + ("" if shown else " (no FLOPs and DRAM bytes counted)")
        left_out = beyond(profile, hardware)
        if left_out:
            counted += f", {left_out} left out: their estimates from shapes are beyond the device's roofs"
        if profile.estimated:
            counted += f", {profile.estimated}"
        where = f", on {profile.device}" if profile.device else ""
        out.append(Entry(f"{Path(profile.source).stem}{where}: {counted}", "marker", theme.foreground,
                         "square", fill=theme.suspect))
    levels = {level for p in profiles for k in placed(p, hardware) for level in _levels(k)}
    out += [Entry(f"the same kernel at {CACHE_NAMES[level]} (its bytes there)", "marker", theme.foreground,
                  CACHE_SYMBOLS[level], fill=theme.background) for level in CACHE_SYMBOLS if level in levels]
    return out
