"""``roofline-explorer export``: the chart of a session to PNG, SVG or PDF, without a display."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TextIO

from explorer.cli_common import count_type

FORMATS = ("png", "svg", "pdf")


def add_parser(sub) -> None:
    export = sub.add_parser("export", help="render the chart to PNG, SVG or PDF (no display needed)",
                            description="Render the roofline chart of a session (or of --hardware "
                                        "and --model) for slides.")
    export.add_argument("--session", metavar="FILE", help="a saved session")
    export.add_argument("--hardware", default=None, metavar="ID", help="device (without --session)")
    export.add_argument("--model", default=None, metavar="ID", help="model (without --session)")
    export.add_argument("--out", required=True, metavar="FILE.{png,svg,pdf}")
    export.add_argument("--width", type=count_type(16384), default=3840, metavar="PX",
                        help="PNG width in pixels (default 3840)")
    export.add_argument("--aspect", choices=("16:9", "4:3"), default="16:9")
    export.add_argument("--transparent", action="store_true", help="PNG with a transparent background")
    export.add_argument("--title", help="a title instead of the chart's own")
    export.add_argument("--no-legend", action="store_true")
    export.add_argument("--theme", choices=("light", "dark", "contrast"), default="light",
                        help="colours: light, dark, or high contrast for projectors")


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6 import QtWidgets

    from explorer.core.catalog import load_catalog
    from explorer.core.models import load_models
    from explorer.core.session import Session, load_session
    from explorer.paths import user_path
    from explorer.state import AppState
    from explorer.ui.chart.export import ExportOptions, export_chart, format_of
    from explorer.ui.chart.roofline_plot import RooflinePlot

    try:
        format_of(args.out)
        options = ExportOptions(width_px=args.width, aspect=args.aspect, transparent=args.transparent,
                                title=args.title, legend=not args.no_legend)
    except ValueError as exc:
        print(f"roofline-explorer: error: {exc}", file=err)
        return 2
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(["roofline-explorer"])
    catalog = load_catalog(user_directory=user_path("hardware"))
    models = load_models()
    if args.session:
        session = load_session(args.session, catalog, set(models))
    else:
        hardware, model = args.hardware or "h100-sxm", args.model or "llama-3-8b"
        catalog[hardware]
        models[model]
        session = Session(hardware=(hardware,), model=model)
    state = AppState(catalog, models, session)
    for path in session.results:
        state.add_results(path)
    chart = RooflinePlot(state)
    chart.set_theme(args.theme)
    try:
        written = export_chart(chart, args.out, options)
    except OSError as exc:
        print(f"roofline-explorer: error: {exc}", file=err)
        return 1
    finally:
        chart.deleteLater()
        app.processEvents()
    print(f"wrote {written} ({Path(written).stat().st_size:,} bytes)", file=out)
    return 0
