"""``roofline-explorer calibrate``: measure this machine's matrix products and streams, fit
the efficiency factors of the expected time (``kernels.calibrate``), check the fit on
held-out shapes, and write the device profile ``--efficiency calibrated`` uses."""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path
from typing import TextIO

from explorer.cli_common import open_catalog
from explorer.texttable import format_table

EXIT_CANCELLED = 130


def add_parser(sub) -> None:
    from explorer.kernels.backends import BACKENDS

    ca = sub.add_parser("calibrate", help="fit this machine's efficiency factors (the expected time)",
                        description="Run the shapes and stream suites, fit the shares of the roofs "
                                    "matrix products and streams reach here, check the fit on held-out "
                                    "shapes and write a device profile (YAML) for --efficiency calibrated.")
    ca.add_argument("--backend", choices=BACKENDS, default="numpy")
    ca.add_argument("--device", type=int, default=0, metavar="N", help="GPU number (cupy)")
    ca.add_argument("--preset", choices=("quick", "full"), default="quick",
                    help="sizes: quick (default) or full (smoke's sets stay in the caches, which "
                         "gives no main-memory rate to fit)")
    ca.add_argument("--results", metavar="FILE.json",
                    help="fit a run already measured (bench's results with the shapes and stream "
                         "suites) instead of measuring")
    ca.add_argument("--check", action="store_true",
                    help="exit 1 unless the held-out products are predicted within 15 %% (median) "
                         "and 40 %% (each)")
    ca.add_argument("--out", metavar="FILE.yaml",
                    help="where the profile goes (default: efficiency/ in the data folder, where "
                         "--efficiency calibrated finds it)")


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from explorer.kernels import calibrate
    from explorer.kernels.results import load_results

    catalog = open_catalog(err)
    results = load_results(args.results) if args.results else _measure(args, err)
    if results is None:
        return EXIT_CANCELLED if args.results is None else 2
    try:
        done = calibrate.calibrate_and_write(results, catalog, Path(args.out) if args.out else None)
    except calibrate.CalibrationError as exc:
        print(f"roofline-explorer: error: {exc}", file=err)
        return 1
    _report(done, out)
    errors = [abs(ratio - 1) for _, ratio in done.held_out]
    if args.check and (not errors or statistics.median(errors) > 0.15 or max(errors) > 0.4):
        print("roofline-explorer: the calibration does not predict its held-out products within "
              "15 % (median) and 40 % (each)", file=err)
        return 1
    return 0


def _measure(args: argparse.Namespace, err: TextIO):
    """Run the calibration suites (None: the backend cannot run, or the user cancelled)."""
    from explorer.kernels import calibrate
    from explorer.kernels.backends import BackendUnavailable, open_backend
    from explorer.kernels.runner import drive, run

    try:
        backend = open_backend(args.backend, args.device)
    except BackendUnavailable as exc:
        print(f"roofline-explorer: error: {exc}", file=err)
        return None

    def progress(p) -> None:
        if p.current:
            print(f"[{p.done + 1}/{p.total}] {p.current}", file=err)

    try:
        return drive(run(backend, calibrate.suites_for(backend), args.preset), progress)
    except KeyboardInterrupt:
        print("calibration cancelled: nothing was written", file=err)
        return None


def _energy_line(done) -> str:
    """What the profile keeps of energy, or why nothing."""
    from explorer.core.analysis.energy import describe
    from explorer.kernels.calibrate import measured_energy

    kept = done.profile.energy
    if kept is None:
        return f"energy: not kept ({measured_energy(done.results)[1]})"
    return f"energy ({kept.precision}): {describe(kept.constants)}, {kept.constants.source}"


def _report(done, out: TextIO) -> None:
    profile, held_out, path, roofs = done.profile, done.held_out, done.path, done.roofs
    rows = [(name, f"{factor.value:.4g}", factor.note) for name, factor in profile.factors.items()]
    print(f"{profile.name}: shares of {roofs.peak_flops / 1e12:.3g} TFLOP/s and "
          f"{roofs.bandwidth / 1e9:.3g} GB/s ({roofs.bandwidth_source})", file=out)
    print(format_table(("factor", "value", "how"), rows), file=out)
    if held_out:
        shapes = ", ".join(f"{label} {ratio:.2f}" for label, ratio in held_out)
        print(f"held-out products, predicted ÷ measured: {shapes} (median error "
              f"{done.median_error:.0%})", file=out)
    print(_energy_line(done), file=out)
    if profile.machine:
        print(f"wrote {path}. {profile.machine} is not in the catalogue: the profile applies to no "
              "device until it is (Hardware › Duplicate and edit, with its datasheet peaks and "
              "bandwidth); then calibrate again", file=out)
    elif done.in_data_folder:
        print(f"wrote {path}: --efficiency calibrated uses it for {', '.join(profile.devices)}", file=out)
    else:
        print(f"wrote {path}: copy it into the data folder's efficiency/ for --efficiency calibrated "
              "to use it", file=out)
