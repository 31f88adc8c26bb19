"""``roofline-explorer profile FILE``: a profile of a real run (an Nsight Compute CSV
export, a PyTorch profiler trace, a rocprof-compute workload), one row per kernel (its
launches summed): time, FLOPs, DRAM bytes, intensity, achieved FLOP/s and, against a
device's roofs (``--hardware``), its bound and the share of the roof it reached. The JSON
lists every kernel; the table folds those under 1 % of the time into "other", and says so."""

from __future__ import annotations

import argparse
import json
from typing import TextIO

from explorer.commands.common import open_catalog
from explorer.commands.texttable import format_table
from explorer.core.analysis.profile_match import beyond_roofs, device_mismatch

MAX_LISTED_NAME = 120  # characters of an unmatched kernel's name in a sentence (C++ templates run to 2,000)


def shortened(name: str, limit: int = MAX_LISTED_NAME) -> str:
    """``name`` cut to ``limit`` characters, an ellipsis marking the cut."""
    return name if len(name) <= limit else name[:limit - 1] + "…"


def add_parser(sub) -> None:
    pr = sub.add_parser("profile", help="read a profile of a real run (Nsight Compute CSV, PyTorch trace, "
                                        "rocprof-compute)",
                        description="Read an Nsight Compute CSV export (ncu --csv --page raw, or the "
                                    "--page details / --metrics layout), a PyTorch profiler trace "
                                    "(JSON, .gz too) or a rocprof-compute workload (its folder or its "
                                    "pmc_perf.csv) and print each kernel's time, FLOPs, DRAM bytes, "
                                    "intensity and achieved FLOP/s.")
    pr.add_argument("file", metavar="FILE")
    pr.add_argument("--hardware", metavar="ID",
                    help="judge each kernel against this device's roofs: its bound and the share of "
                         "the roof it reached")
    pr.add_argument("--json", action="store_true", help="print JSON")


def judged(kernel, hardware) -> dict:
    """The kernel against ``hardware``'s roofs at DRAM: the roof of its main precision
    (vector units: these FLOPs are counted from SASS instructions, not tensor cores)."""
    intensity = kernel.intensity("dram")
    if hardware is None or intensity is None or not kernel.flops:
        return {}
    precision = max(kernel.flops, key=kernel.flops.get)
    peak = hardware.vector_peak(precision)
    if peak is None:
        return {"note": f"{hardware.name} lists no {precision} peak"}
    attainable = min(peak.flops_per_s, intensity * hardware.bandwidth_bytes_per_s)
    bound = "memory" if intensity * hardware.bandwidth_bytes_per_s < peak.flops_per_s else "compute"
    return {"roof": peak.label, "bound": bound, "share_of_roof": kernel.flops_per_s / attainable}


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from explorer.core.model.profile import FOLD_SHARE, OTHER
    from explorer.core.units import format_count, format_number, format_si, format_time
    from explorer.profiles.reading import read_profile

    profile = read_profile(args.file)
    hardware = open_catalog(err)[args.hardware] if args.hardware else None
    mismatch = device_mismatch(profile.device, hardware)
    implausible = beyond_roofs(profile, hardware)
    if args.json:
        kernels = profile.folded(share=0.0)  # every kernel
        json.dump({"tool": profile.tool, "source": profile.source, "device": profile.device,
                   "devices": profile.devices, "steps": profile.steps, "time_s": profile.time_s,
                   "notes": list(profile.notes), "warnings": [mismatch] if mismatch else [],
                   "beyond_roof": [note for _, note in implausible],
                   "kernels": [{"name": k.name, "launches": k.launches, "time_s": k.time_s, "flops": k.flops,
                                "bytes": k.bytes, "intensity_dram": k.intensity("dram"),
                                "flops_per_s": k.flops_per_s, **judged(k, hardware)} for k in kernels]},
                  out, indent=1)
        out.write("\n")
        return 0
    kernels = profile.folded()
    rows = []
    for k in kernels:
        verdict = judged(k, hardware)
        share = f"{verdict['share_of_roof']:.0%} of {verdict['bound']} roof" if "bound" in verdict else ""
        intensity = k.intensity("dram")
        rows.append((k.name[:60], f"×{k.launches}", format_time(k.time_s), f"{k.time_s / profile.time_s:.1%}",
                     format_count(k.total_flops) if k.flops else "–", format_si(k.bytes.get("dram", 0), "B"),
                     format_number(intensity) if intensity is not None else "–",
                     format_si(k.flops_per_s, "FLOP/s") if k.flops else "–", share))
    on = f" on {profile.device}" if profile.device else ""
    gpus = f" on {profile.devices} GPUs" if profile.devices > 1 else ""
    print(f"{profile.tool}{on}: {profile.source}, {sum(k.launches for k in kernels):,} launches, "
          f"{format_time(profile.time_s)} of kernels{gpus}", file=out)
    print(format_table(("kernel", "launches", "time", "share", "FLOPs", "DRAM", "FLOP/B", "achieved",
                        "against the roof" if hardware else ""), rows, right=(1, 2, 3, 4, 5, 6, 7)), file=out)
    other = next((k for k in kernels if k.name == OTHER), None)
    if other is not None:
        print(f'note: "{OTHER}" folds {len(profile.folded(share=0.0)) - len(kernels) + 1:,} kernel(s), each '
              f"under {FOLD_SHARE:.0%} of the time ({format_time(other.time_s)} in all); --json lists each",
              file=out)
    for note in profile.notes:
        print(f"note: {note}", file=out)
    for _, note in implausible:
        print(f"note: {note}", file=out)
    if mismatch:
        print(f"warning: {mismatch}", file=out)
    return 0


def compared(path: str, analysis, steps: int | None):
    """(profile, comparison) of the profile at ``path`` with ``analysis`` (and its expected time)."""
    from explorer.core.analysis.expected import expected_for
    from explorer.core.analysis.profile_match import compare
    from explorer.profiles.reading import read_profile

    profile = read_profile(path)
    return profile, compare(profile, analysis, expected_for(analysis), steps)


def _ratio(measured: float, predicted: float | None) -> float | None:
    return measured / predicted if predicted else None


def comparison_dict(profile, comparison, hardware=None) -> dict:
    mismatch = device_mismatch(profile.device, hardware)
    return {"tool": profile.tool, "source": profile.source, "device": profile.device,
            "steps": comparison.steps, "devices": profile.devices,
            "notes": list(profile.notes), "warnings": [mismatch] if mismatch else [],
            "beyond_roof": [note for _, note in beyond_roofs(profile, hardware)],
            "classes": [{"class": r.op_class, "bound_s": r.bound_s, "expected_s": r.expected_s,
                         "measured_s": r.measured_s,  # (no kernel of the class: no ratio)
                         "measured_over_bound": _ratio(r.measured_s, r.bound_s) if r.kernels else None,
                         "measured_over_expected": _ratio(r.measured_s, r.expected_s) if r.kernels else None,
                         "kernels": list(r.kernels)} for r in comparison.rows],
            "unmatched": [{"name": k.name, "time_s": k.time_s / comparison.steps / profile.devices}
                          for k in comparison.unmatched],
            "products_by_shape": [{"ops": list(r.ops), "fused": r.fused, "k": r.shape[0], "n": r.shape[1],
                                   "bound_s": r.bound_s, "expected_s": r.expected_s,
                                   "measured_s": r.measured_s,
                                   "measured_over_bound": _ratio(r.measured_s, r.bound_s),
                                   "measured_over_expected": _ratio(r.measured_s, r.expected_s),
                                   "kernels": list(r.kernels)} for r in comparison.products],
            "products_of_no_predicted_shape": [{"k": shape[0], "n": shape[1], "measured_s": seconds}
                                               for shape, seconds in comparison.unshaped]}


def comparison_lines(profile, comparison, hardware=None) -> list[str]:
    """The table of a profile beside the prediction, per class of op, one step each (and
    one GPU's, where the profile's kernels ran on several)."""
    from explorer.core.units import format_time

    def ratio(value) -> str:
        return "–" if value is None else f"{value:.2f}"

    def predicted(seconds: float | None) -> str:
        return "–" if seconds is None else format_time(seconds) if seconds > 0 else "none predicted"

    def measured(r) -> tuple[str, str, str]:  # the time and its ratios; none for a class without kernels
        if not r.kernels:
            return "none measured", "–", "–"
        return (format_time(r.measured_s), ratio(_ratio(r.measured_s, r.bound_s)),
                ratio(_ratio(r.measured_s, r.expected_s)))

    rows = [(r.op_class, predicted(r.bound_s), predicted(r.expected_s), *measured(r), f"{len(r.kernels)}")
            for r in comparison.rows]
    steps = f", its time over {comparison.steps:,} steps" if comparison.steps > 1 else ""
    gpus = f", each of its {profile.devices} GPUs on its own" if profile.devices > 1 else ""
    on = f" on {profile.device}" if profile.device else ""
    lines = ["", f"measured ({profile.tool}{on}: {profile.source}{steps}{gpus}), one step:",
             format_table(("class", "bound", "expected", "measured", "÷ bound", "÷ expected", "kernels"),
                          rows, right=(1, 2, 3, 4, 5, 6))]
    faster = [r.op_class for r in comparison.rows if r.measured_s and r.measured_s < r.bound_s]
    if faster:
        lines.append(f"measured faster than the bound ({', '.join(faster)}): no real run is, so the profile "
                     "is not of this workload or covers another number of steps (--profile-steps)")
    if comparison.products:
        shaped = [(r.name, f"{r.shape[0]:,} × {r.shape[1]:,}", format_time(r.bound_s),
                   "–" if r.expected_s is None else format_time(r.expected_s), format_time(r.measured_s),
                   ratio(_ratio(r.measured_s, r.bound_s)), ratio(_ratio(r.measured_s, r.expected_s)))
                  for r in comparison.products]
        lines += ["", "matrix products matched to the predicted ops by their recorded shapes (K × N), "
                      "one step:",
                  format_table(("op", "K × N", "bound", "expected", "measured", "÷ bound", "÷ expected"),
                               shaped, right=(1, 2, 3, 4, 5, 6))]
    elif any(k.shape for k in profile.kernels) and comparison.steps and not comparison.products:
        lines.append("no product in the profile has the shape of one of this workload's products: is the "
                     "profile of this model (and of inference)?")
    if comparison.products and comparison.unshaped:
        shapes = ", ".join(f"{shape[0]:,} × {shape[1]:,} ({format_time(seconds)})"
                           for shape, seconds in comparison.unshaped)
        lines.append(f"products of a shape no predicted op has, alone or with the ops next to it, "
                     f"left out of the rows above: {shapes}")
    if comparison.unmatched:
        share = comparison.steps * profile.devices  # one step of one GPU
        names = ", ".join(f"{shortened(k.name)} ({format_time(k.time_s / share)})"
                          for k in comparison.unmatched)
        lines.append(f"unmatched kernels (no name pattern of resources/profiles/kernel-names.yaml): {names}")
    lines += [f"note: {note}" for _, note in beyond_roofs(profile, hardware)]
    mismatch = device_mismatch(profile.device, hardware)
    if mismatch:
        lines.append(f"warning: {mismatch}")
    return lines
