"""``roofline-explorer validate``: the bound and the expected time beside published
measurements of real serving and training runs (``core.analysis.validation``), one row per
run: fitted to every run, and held out (each source predicted with terms fitted without it).
``--runs FILE`` costs a user's own runs, which no term was fitted to."""

from __future__ import annotations

import argparse
import json
from typing import Any, TextIO

from explorer.commands.common import open_catalog
from explorer.commands.texttable import format_table


def add_parser(sub) -> None:
    va = sub.add_parser("validate", help="the predictions beside published measurements of real runs",
                        description="Cost each published serving and training run of "
                                    "resources/validation (its exact configuration and source) and "
                                    "print its measured time, the roofline bound over it and the "
                                    "expected time over it: fitted to every run, and held out (each "
                                    "source's runs predicted with terms fitted without that source).")
    va.add_argument("--runs", metavar="FILE",
                    help="cost these runs instead (the format of resources/validation/"
                         "published-runs.yaml, schema 1): none of them was fitted to, so every "
                         "figure is held out")
    va.add_argument("--markdown", action="store_true",
                    help="print the Markdown table docs/validation.md holds")
    va.add_argument("--terms", action="store_true",
                    help="print the Markdown table of which fitted terms close which source's gap, held "
                         "out (docs/validation.md holds it)")
    va.add_argument("--json", action="store_true", help="print JSON")


def checked_runs(err: TextIO, path: str | None = None) -> list:
    from explorer.core.analysis.validation import check, read_runs
    from explorer.core.hardware.efficiency import published
    from explorer.core.model.presets import load_models

    catalog, models, families = open_catalog(err), load_models(), published()
    origin = path or "published-runs.yaml"
    return [check(run, models, catalog, families, origin=origin) for run in read_runs(path)]


def _json(c, held) -> dict[str, Any]:
    h = held.get(c.run.id)
    return {"id": c.run.id, "kind": c.run.kind.value, "model": c.run.model, "hardware": c.run.hardware,
            "workload": c.run.workload, "measured_s": c.run.measured_s, "bound_s": c.bound_s,
            "kernels_s": c.kernels_s, "expected_s": c.expected_s,
            "expected_low_s": None if c.band is None else c.band[0],
            "expected_high_s": None if c.band is None else c.band[1],
            "held_out_expected_s": None if h is None else h.expected_s,
            "held_out_low_s": None if h is None else h.low_s,
            "held_out_high_s": None if h is None else h.high_s,
            "source": c.run.source, "group": c.run.source_group, "where": c.run.where}


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from explorer.core.analysis.validation import held_out_runs, markdown_table, summary, terms_table
    from explorer.core.files.datafile import DataFileError

    try:
        checked = checked_runs(err, args.runs)
    except (DataFileError, OSError) as error:
        print(f"roofline-explorer validate: {error}", file=err)
        return 1
    if not checked:
        print("roofline-explorer validate: the file lists no runs", file=err)
        return 1
    if args.terms:
        print(terms_table(checked), file=out)
        return 0
    held = {} if args.runs else held_out_runs(checked)
    if args.json:
        json.dump({"runs": [_json(c, held) for c in checked], "summary": summary(checked, held),
                   "held_out": not args.runs and bool(held), "fitted_to_these": not args.runs}, out, indent=1)
        out.write("\n")
        return 0
    if args.markdown:
        print(markdown_table(checked, held), file=out)
    else:
        rows = [(c.run.id, f"{c.run.measured_s:.4g} s", f"{c.bound_ratio:.2f}",
                 "–" if c.expected_ratio is None else f"{c.expected_ratio:.2f}",
                 f"{held[c.run.id].ratio:.2f}" if c.run.id in held else "–",
                 "–" if c.band is None else ("yes" if c.band[0] <= c.run.measured_s <= c.band[1] else "no"))
                for c in checked]
        heads = ("run", "measured", "bound ÷ measured", "expected ÷ measured", "held out ÷ measured",
                 "in band")
        print(format_table(heads, rows, right=(1, 2, 3, 4)), file=out)
    note = ("\nThese runs were not fitted to: every expected time is held out. " if args.runs else "\n")
    print(note + summary(checked, held), file=out)
    return 0
