"""``roofline-explorer layouts``: every tensor × pipeline × data × expert parallel layout of
a step on N devices, costed and ranked by a goal (``core.analysis.layouts``), each with
why it ranks where it does."""

from __future__ import annotations

import argparse
import json
from typing import TextIO

from explorer.commands.common import (
    add_model_arguments,
    add_workload_arguments,
    count_type,
    model_of,
    open_catalog,
    workload_params,
)
from explorer.commands.texttable import format_table
from explorer.core.hardware.cores import restrict_cores

# The rows a layout search chooses itself.
CHOSEN = ("tp", "pp", "dp", "ep", "sp", "zero", "recompute", "vpp", "micro_batch")


def add_parser(sub) -> None:
    from explorer.core.analysis.layouts import GOALS, MAX_DEVICES

    la = sub.add_parser("layouts", help="every parallel layout of a step on N devices, ranked",
                        description="Cost every tensor × pipeline × data × expert parallel layout of the "
                                    "step on --devices devices (in training also sequence parallel, "
                                    "ZeRO-1 and full recomputation, and the micro-batch: the largest that "
                                    "fits without a pipeline, one sequence with one) and rank them by "
                                    "--goal; each says why it ranks where it does.")
    la.add_argument("--hardware", required=True, metavar="ID", help="device id (see: hardware list)")
    add_model_arguments(la, required=True, help="model id (see: analyze --help)")
    la.add_argument("--devices", type=count_type(MAX_DEVICES), required=True, metavar="N",
                    help="devices the step is spread over")
    la.add_argument("--goal", choices=GOALS, default="latency",
                    help="latency: the shortest step; throughput: the most tokens/s a device; "
                         "fit: the least memory a device (default latency)")
    la.add_argument("--top", type=count_type(1 << 20), default=20, metavar="N",
                    help="the text table's rows (default 20; --json lists every layout)")
    add_workload_arguments(la, leave_out=CHOSEN)
    la.add_argument("--json", action="store_true", help="print JSON: every candidate, best first")


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from explorer.core.analysis.layouts import layouts, ranked, why
    from explorer.core.model.presets import load_models
    from explorer.core.units import format_bytes, format_time

    catalog = open_catalog(err)
    model = model_of(args, load_models())
    params = workload_params(args, model, err)
    hardware = restrict_cores(catalog[args.hardware], params.threads)  # a CPU: the cores its threads use
    order = ranked(layouts(model, hardware, args.devices, params), args.goal)
    best = order[0]
    if args.json:
        candidates = [{**c.to_dict(), "why": why(c, best, args.goal)} for c in order]
        json.dump({"model": model.id, "hardware": hardware.id, "devices": args.devices,
                   "phase": params.phase.value, "batch": params.batch, "goal": args.goal,
                   "candidates": candidates}, out, indent=1)
        out.write("\n")
        return 0
    rows = []
    for rank, c in enumerate(order[:args.top], 1):
        costed = not c.error
        rows.append((str(rank), c.name, "yes" if c.fits else "no",
                     format_time(c.time_s) if costed else "–",
                     f"{c.tokens_per_s_per_device:,.0f}" if costed else "–",
                     format_bytes(c.memory_bytes) if costed else "–", why(c, best, args.goal)))
    kind = "expected" if best.expected else "bound"
    print(f"{model.name} on {args.devices:,} × {hardware.name}, {params.phase}, batch {params.batch:,}: "
          f"{len(order)} layouts ranked by {args.goal} (step times: {kind})", file=out)
    print(format_table(("#", "layout", "fits", "step", "tokens/s a device", "memory a device", "why"), rows,
                       right=(0, 3, 4, 5)), file=out)
    if len(order) > args.top:
        print(f"… {len(order) - args.top} more (--top N, or --json for every one)", file=out)
    return 0
