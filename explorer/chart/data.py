"""The chart as data: the description a picture is drawn from, written as JSON (every
element, with its page box and, for what sits on the axes, its values) or as CSV (the
points and the roofs' end points in data units), so a figure can be redrawn elsewhere
(pgfplots, matplotlib) with the same numbers, colours and dashes."""

from __future__ import annotations

import csv
import io
import math

from explorer.chart.elements import Chart, ElementKind, Line, Marker, Text

# Markers that stand for a value on the axes (the rest are key swatches and decorations).
POINT_KINDS = (ElementKind.OP, ElementKind.STEP, ElementKind.EXPECTED, ElementKind.MEASURED,
               ElementKind.PROFILE, ElementKind.RIDGE, ElementKind.COMPARED)
ROOF_KINDS = (ElementKind.ROOF, ElementKind.ORIGINAL, ElementKind.MEASURED_ROOF, ElementKind.LINK)


ROOFLINE_AXES = {"x_axis": "arithmetic intensity (FLOP/byte), log", "y_axis": "performance (FLOP/s), log"}
SCALING_AXES = {"x_axis": "parameters N, log", "y_axis": "predicted loss, log"}


SERVING_AXES = {"x_axis": "tokens/s a user, log", "y_axis": "tokens/s a device, log"}


def _axes_of(chart: Chart) -> dict:
    kinds = {line.kind for line in chart.lines}
    if ElementKind.CURVE in kinds:
        return SCALING_AXES
    return SERVING_AXES if ElementKind.SERVING in kinds else ROOFLINE_AXES


def _value(chart: Chart, x: float, y: float) -> tuple[float, float]:
    """Page pixels back to (intensity FLOP/byte, performance FLOP/s)."""
    (x0, x1), (y0, y1) = (tuple(math.log10(v) for v in r) for r in (chart.x_range, chart.y_range))
    plot = chart.plot
    return (10 ** (x0 + (x - plot.left) / plot.width * (x1 - x0)),
            10 ** (y0 + (plot.bottom - y) / plot.height * (y1 - y0)))


def _stroke(stroke) -> dict | None:
    if stroke is None:
        return None
    return {"colour": stroke.colour, "width": stroke.width, "dash": list(stroke.dash),
            "opacity": stroke.opacity}


def _line(chart: Chart, line: Line) -> dict:
    out = {"kind": str(line.kind), "stroke": _stroke(line.stroke), "tooltip": line.tooltip,
           "points_px": [list(p) for p in line.points]}
    if line.ref is not None:
        out.update(device=line.ref.device, roof=line.ref.kind, label=line.ref.label)
    if line.kind in ROOF_KINDS:
        out["points"] = [list(_value(chart, *p)) for p in line.points]
    return out


def _marker(chart: Chart, m: Marker) -> dict:
    out = {"kind": str(m.kind), "name": m.name, "symbol": m.symbol, "size_px": m.size,
           "stroke": _stroke(m.stroke), "fill": m.fill, "fill_opacity": m.fill_opacity,
           "center_px": list(m.center), "tooltip": m.tooltip}
    if m.kind in POINT_KINDS:
        intensity, performance = _value(chart, *m.center)
        out.update(intensity=intensity, flops_per_s=performance)
    elif m.kind == ElementKind.CURVE:  # a scaling-law point: parameters and predicted loss
        parameters, loss = _value(chart, *m.center)
        out.update(parameters=parameters, loss=loss)
    elif m.kind == ElementKind.SERVING:  # a serving plan's batch
        per_user, per_device = _value(chart, *m.center)
        out.update(tokens_per_s_per_user=per_user, tokens_per_s_per_device=per_device)
    return out


def _text(t: Text) -> dict:
    return {"kind": str(t.kind), "text": t.text, "size_px": t.size, "colour": t.colour, "bold": t.bold,
            "angle": t.angle, "box_px": [list(c) for c in t.corners], "tooltip": t.tooltip}


def chart_data(chart: Chart) -> dict:
    """Every element of ``chart`` (its page, plot and axis ranges; lines, markers, texts)."""
    titles = {str(k): [t.text for t in chart.texts if t.kind == k] for k in (ElementKind.TITLE,
                                                                             ElementKind.SUBTITLE)}
    return {
        "page": {"width": chart.page.width, "height": chart.page.height},
        "plot_px": {"left": chart.plot.left, "top": chart.plot.top, "right": chart.plot.right,
                    "bottom": chart.plot.bottom},
        "x_range": list(chart.x_range), "y_range": list(chart.y_range),
        **_axes_of(chart),
        "background": chart.background, "foreground": chart.foreground,
        "title": " ".join(titles["title"]), "caption": " ".join(titles["subtitle"]),
        "lines": [_line(chart, line) for line in chart.lines],
        "markers": [_marker(chart, m) for m in chart.markers],
        "texts": [_text(t) for t in chart.texts],
    }


def chart_csv(chart: Chart) -> str:
    """One row per point (op, step, measurement, ridge) and per roof end, in data units; a
    scaling-laws picture's points and curves in parameters and predicted loss."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    if any(line.kind == ElementKind.CURVE for line in chart.lines):
        writer.writerow(["element", "name", "parameters", "loss", "colour"])
        for m in chart.markers:
            if m.kind == ElementKind.CURVE:
                x, y = _value(chart, *m.center)
                writer.writerow(["point", m.name, f"{x:.6g}", f"{y:.6g}", m.fill or ""])
        for line in chart.lines:
            if line.kind == ElementKind.CURVE:
                for p in line.points:
                    x, y = _value(chart, *p)
                    writer.writerow(["curve", line.tooltip.split(":")[0], f"{x:.6g}", f"{y:.6g}",
                                     line.stroke.colour])
        return out.getvalue()
    writer.writerow(["element", "kind", "name", "device", "intensity_flop_per_byte", "flops_per_s", "colour"])
    for m in chart.markers:
        if m.kind in POINT_KINDS:
            x, y = _value(chart, *m.center)
            colour = m.stroke.colour if m.stroke is not None else (m.fill or "")
            writer.writerow(["point", str(m.kind), m.name, "", f"{x:.6g}", f"{y:.6g}", colour])
    for line in chart.lines:
        if line.kind in ROOF_KINDS:
            device = line.ref.device if line.ref else ""
            name = line.ref.label if line.ref else line.tooltip.split("\n")[0]
            for p in (line.points[0], line.points[-1]):
                x, y = _value(chart, *p)
                writer.writerow(["roof", str(line.kind), name, device, f"{x:.6g}", f"{y:.6g}",
                                 line.stroke.colour])
    return out.getvalue()
