"""``roofline-explorer scaling``: the compute-optimal model and data size for a training
budget under each scaling-law fit (``core.scaling_laws``), the ~20 tokens per parameter
rule of thumb beside them, and, on a chosen cluster, how long the budget takes."""

from __future__ import annotations

import argparse
import json
from typing import Any, TextIO

from explorer.commands.common import amount_type, count_type, open_catalog, share_from

SHORT = {"hoffmann": "hoffmann-2022", "besiroglu": "besiroglu-2024"}


def add_parser(sub) -> None:
    from explorer.core.analysis.scaling_laws import FITS

    sc = sub.add_parser("scaling", help="compute-optimal model and data size for a training budget",
                        description="The model size N and token count D that minimise the fitted loss "
                                    "L(N, D) = E + A/N^α + B/D^β for a budget C = 6·N·D, under each fit "
                                    "(cited), with the ~20 tokens per parameter rule of thumb; with "
                                    "--hardware, the days the budget takes on --devices of them.")
    sc.add_argument("--flops", "--budget", dest="budget", required=True, metavar="C",
                    type=amount_type(1e15, 1e30, "a budget in FLOPs", "5.76e23"),
                    help="training compute in FLOPs, e.g. 5.76e23 (Gopher's and Chinchilla's)")
    sc.add_argument("--fit", choices=[*FITS, *SHORT, "all"], default="all",
                    help="hoffmann: Hoffmann et al. 2022, Approach 3; besiroglu: the 2024 replication; "
                         "all (default): both")
    sc.add_argument("--hardware", metavar="ID", help="the device the cluster is made of")
    sc.add_argument("--devices", type=count_type(1 << 20), default=1024, help="devices training together")
    sc.add_argument("--mfu", type=share_from(0.01), default=0.4, metavar="SHARE",
                    help="model-FLOPs utilisation: the share of the peak training achieves (default 0.4)")
    sc.add_argument("--json", action="store_true", help="print JSON")


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from explorer.core.analysis.scaling_laws import (
        FITS,
        FLOPS_PER_PARAMETER_TOKEN,
        rule_of_thumb,
        training_seconds,
    )
    from explorer.core.analysis.terms import op_roofs
    from explorer.core.units import format_number, format_parameters, format_si

    budget = args.budget
    fits = list(FITS.values()) if args.fit == "all" else [FITS[SHORT.get(args.fit, args.fit)]]
    rows: list[dict[str, Any]] = []
    for fit in fits:
        n, d = fit.optimal(budget)
        rows.append({"fit": fit.id, "name": fit.name, "source": fit.source, "parameters": n, "tokens": d,
                     "n_opt": n, "d_opt": d, "tokens_per_parameter": d / n, "loss": fit.loss(n, d),
                     "kind": "fit"})
    n, d = rule_of_thumb(budget)
    rows.append({"fit": "rule-of-thumb", "name": "about 20 tokens per parameter (approximate)", "source": "",
                 "parameters": n, "tokens": d, "tokens_per_parameter": d / n, "loss": None,
                 "kind": "rule of thumb"})
    cluster = None
    if args.hardware:
        hw = open_catalog(err)[args.hardware]
        peak = op_roofs(hw, "bf16").matrix
        seconds = training_seconds(budget, args.devices, peak.flops_per_s, args.mfu)
        cluster = {"hardware": hw.id, "devices": args.devices, "peak": peak.label,
                   "peak_flops_per_s": peak.flops_per_s, "mfu": args.mfu, "seconds": seconds,
                   "device_hours": seconds * args.devices / 3600}
        if hw.specs.tdp_w:
            cluster["energy_j_at_tdp"] = seconds * args.devices * hw.specs.tdp_w
        for row in rows:  # the same budget, whichever split: the same time
            row["training_seconds"] = seconds
    if args.json:
        json.dump({"budget_flops": budget, "flops_per_parameter_token": FLOPS_PER_PARAMETER_TOKEN,
                   "optima": rows, "cluster": cluster}, out, indent=1)
        out.write("\n")
        return 0
    print(f"budget {budget:.3g} FLOP = 6 × parameters × tokens (training: forward and backward)", file=out)
    for row in rows:
        loss = f", loss {row['loss']:.3f}" if row["loss"] is not None else ""
        print(f"  {row['name']}: {format_parameters(row['parameters'])} parameters, "
              f"{format_parameters(row['tokens'])} tokens ({format_number(row['tokens_per_parameter'])} per "
              f"parameter){loss}" + (f"  [{row['source']}]" if row["source"] else ""), file=out)
    print("  fits: L(N, D) = E + A/N^α + B/D^β, fitted on models from 70 M to a little over 16 B "
          "parameters; beyond, they extrapolate", file=out)
    if cluster:
        days = cluster["seconds"] / 86400
        print(f"on {args.devices:,} × {hw.name} ({peak.label} {format_si(peak.flops_per_s, 'FLOP/s')} each, "
              f"{args.mfu:.0%} of it used): {format_number(days)} days, "
              f"{format_si(cluster['device_hours'], '').strip()} device-hours", file=out)
    return 0
