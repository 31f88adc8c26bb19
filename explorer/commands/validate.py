"""``roofline-explorer validate``: the bound and the expected time beside published
measurements of real serving and training runs (``core.analysis.validation``), one row per run."""

from __future__ import annotations

import argparse
import json
from typing import TextIO

from explorer.commands.common import open_catalog
from explorer.commands.texttable import format_table


def add_parser(sub) -> None:
    va = sub.add_parser("validate", help="the predictions beside published measurements of real runs",
                        description="Cost each published serving and training run of "
                                    "resources/validation (its exact configuration and source) and "
                                    "print its measured time, the roofline bound over it and the "
                                    "expected time over it.")
    va.add_argument("--markdown", action="store_true",
                    help="print the Markdown table docs/validation.md holds")
    va.add_argument("--json", action="store_true", help="print JSON")


def checked_runs(err: TextIO) -> list:
    from explorer.core.analysis.validation import check, read_runs
    from explorer.core.hardware.efficiency import published
    from explorer.core.model.presets import load_models

    catalog, models, families = open_catalog(err), load_models(), published()
    return [check(run, models, catalog, families) for run in read_runs()]


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from explorer.core.analysis.validation import markdown_table, summary

    checked = checked_runs(err)
    if args.json:
        json.dump([{"id": c.run.id, "kind": c.run.kind.value, "model": c.run.model,
                    "hardware": c.run.hardware, "workload": c.run.workload, "measured_s": c.run.measured_s,
                    "bound_s": c.bound_s,
                    "expected_s": c.expected_s, "source": c.run.source, "where": c.run.where}
                   for c in checked], out, indent=1)
        out.write("\n")
        return 0
    if args.markdown:
        print(markdown_table(checked), file=out)
    else:
        rows = [(c.run.id, f"{c.run.measured_s:.4g} s", f"{c.bound_ratio:.2f}",
                 "–" if c.expected_ratio is None else f"{c.expected_ratio:.2f}") for c in checked]
        print(format_table(("run", "measured", "bound ÷ measured", "expected ÷ measured"), rows,
                           right=(1, 2, 3)), file=out)
    print("\n" + summary(checked), file=out)
    return 0
