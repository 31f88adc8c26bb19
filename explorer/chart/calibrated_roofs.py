"""The roofs a calibration measured, drawn under the datasheet's: the share of the matrix
peak products reach and the share of bandwidth a product reading its weights reaches, for
the primary device, when the expected time uses a calibration of it ("calibrated products
73% of peak")."""

from __future__ import annotations

from explorer.chart.elements import Chart, ElementKind, Line, Stroke, Text
from explorer.core.analysis.roofline import COMPUTE, Ceilings, Roof
from explorer.core.units import format_si


def calibrated_ceilings(chart: Chart, shot, theme) -> list[tuple[Line, Text]]:
    e = shot.expected
    if e is None or not e.efficiency.measured:  # published factors: the hollow star says enough
        return []
    a, family = shot.analysis, e.efficiency
    when = family.measured[:10]
    peak = a.roofs.matrix.flops_per_s * family.gemm
    bandwidth = a.roofs.bandwidth_bytes_per_s * family.value("gemm_bandwidth")
    compute_words = f"calibrated products {family.gemm:.0%} of peak"
    memory_words = f"calibrated weights {family.value('gemm_bandwidth'):.0%} of bandwidth"
    ceilings = Ceilings((Roof(compute_words, peak),), (Roof(memory_words, bandwidth),))
    unit = chart.page.lines
    stroke = Stroke(theme.track, 1.6 * unit, (5 * unit, 3 * unit))
    out = []
    for segment in ceilings.segments(*chart.x_range):
        words = segment.roof.label
        value = format_si(segment.roof.value, "FLOP/s" if segment.kind == COMPUTE else "B/s")
        tooltip = (f"{words}: {value}, measured {when} ({family.name}, {family.origin or 'a calibration'}): "
                   "what this machine's kernels reach")
        ends = ((chart.x_px(segment.x[0]), chart.y_px(segment.y[0])),
                (chart.x_px(segment.x[1]), chart.y_px(segment.y[1])))
        line = Line(ends, stroke, ElementKind.MEASURED_ROOF, tooltip=tooltip)
        out.append((line, Text(words, ends[0], chart.page.text, theme.track, ElementKind.MEASURED,
                               tooltip=tooltip)))
    return out
