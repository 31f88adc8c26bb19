"""``roofline-explorer calibrate``: measure this machine's matrix products and streams, fit
the efficiency factors of the expected time (``kernels.calibrate``), check the fit on
held-out shapes, and write the device profile ``--efficiency calibrated`` uses."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from explorer.commands.common import open_catalog
from explorer.commands.measure import (
    EXIT_CANCELLED,
    EXIT_TERMINATED,
    StopNow,
    check_out,
    interrupts,
    journal_folders_for,
    journal_point,
    recover_journals,
    say_refused,
    shield,
    start_journal,
)
from explorer.commands.texttable import format_table


def add_parser(sub) -> None:
    from explorer.kernels.backends import BACKENDS
    from explorer.kernels.calibrate import HELD_OUT_EACH, HELD_OUT_MEDIAN

    ca = sub.add_parser("calibrate", help="fit this machine's efficiency factors (the expected time)",
                        description="Run the shapes and stream suites, fit the shares of the roofs "
                                    "matrix products and streams reach here, check the fit on held-out "
                                    "shapes and write a device profile (YAML) for --efficiency calibrated "
                                    f"(a fit that misses them by more than {HELD_OUT_MEDIAN:.0%} (median) "
                                    f"or {HELD_OUT_EACH:.0%} (any) is "
                                    "kept aside in efficiency/rejected/, not used, and exits 1). "
                                    "Every point is journalled as it is measured, and the run is saved "
                                    "beside the profile before the fit (calibrate --results fits it "
                                    "again). Ctrl+C cancels between launches and keeps what was "
                                    "measured; a second Ctrl+C stops at once.")
    ca.add_argument("--backend", choices=BACKENDS, default="numpy")
    ca.add_argument("--device", type=int, default=0, metavar="N", help="GPU number (cupy)")
    ca.add_argument("--preset", choices=("quick", "full"), default="quick",
                    help="sizes: quick (default) or full (smoke's sets stay in the caches, which "
                         "gives no main-memory rate to fit)")
    ca.add_argument("--results", metavar="FILE.json",
                    help="fit a run already measured (bench's results with the shapes and stream "
                         "suites) instead of measuring")
    ca.add_argument("--out", metavar="FILE.yaml",
                    help="where the profile goes (default: efficiency/ in the data folder, where "
                         "--efficiency calibrated finds it)")
    ca.add_argument("--no-load-check", action="store_true",
                    help="do not read other programs' load around each case (no waiting for a quiet "
                         "machine, no retries); the results say it was not checked, and a point "
                         "other programs slowed is fitted as it is")


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from explorer.core.files.fallback import Placed
    from explorer.kernels.results import load_results

    if args.out and (problem := check_out(args.out)):
        print(f"roofline-explorer: error: cannot save to {args.out}: {problem}", file=err)
        return 2
    catalog = open_catalog(err)
    if args.results:
        return _fit(args, load_results(args.results), Placed(Path(args.results)), catalog, out, err)
    # From the first probe to the profile on disk: a Ctrl+C cancels between launches and a
    # second one stops at once (StopNow), both keeping what was measured; once the run is
    # saved, the fit and the profile finish whatever comes.
    with interrupts(err) as cancel:
        try:
            measured = _measure(args, cancel, err)
        except StopNow:
            print("\nstopped before the first measurement: nothing was measured", file=err)
            return EXIT_TERMINATED
        if isinstance(measured, int):
            return measured
        results, kept, code = measured
        return code or _fit(args, results, kept, catalog, out, err)


def _fit(args: argparse.Namespace, results, kept, catalog, out: TextIO, err: TextIO) -> int:
    """Fit ``results`` (saved as ``kept`` says), write and report the profile; the exit code."""
    from explorer.kernels import calibrate

    profile_path = Path(args.out) if args.out else None
    try:
        done = calibrate.calibrate_and_write(results, catalog, profile_path, kept)
    except calibrate.CalibrationError as exc:
        print(f"roofline-explorer: error: {exc}", file=err)
        return 1
    _report(done, out, err)
    if done.rejected:
        print(f"roofline-explorer: the calibration is not used: {done.rejected}", file=err)
        return 1
    if done.path is None or (done.path != profile_path if profile_path else not done.in_data_folder):
        return 1  # not where it was meant to go: the user or --efficiency calibrated would miss it
    return 0


def _measure(args: argparse.Namespace, cancel, err: TextIO):
    """Run the calibration suites, journalling each point, and save the run beside where
    the profile goes: (results, where they were saved, the exit code when the run did not
    finish), or the exit code when nothing could be measured."""
    from explorer.kernels import calibrate
    from explorer.kernels.backends import BackendUnavailable, open_backend
    from explorer.kernels.energy import meter_for
    from explorer.kernels.runner import OFF, drive, results_of, run
    from explorer.kernels.suites import resolve

    folders = journal_folders_for(args.out)
    recover_journals(folders, err)
    try:
        backend = open_backend(args.backend, args.device)
    except BackendUnavailable as exc:
        print(f"roofline-explorer: error: the {args.backend} backend cannot run here: {exc}", file=err)
        return 1
    meter = meter_for(backend)  # (once: finding an energy counter's step may take a second)
    suites = [*calibrate.suites_for(meter), args.preset]
    journal = start_journal(folders, backend, suites, None, err)
    measured = []

    def progress(p) -> None:
        if p.point is not None:
            measured.append(p.point)
            journal_point(journal, p.point, err)
        if p.current:
            print(f"[{p.done + 1}/{p.total}] {p.current}", file=err)

    code = 0
    try:
        try:
            results = drive(run(backend, suites, cancel=cancel, energy=meter,
                                load=OFF if args.no_load_check else "auto"), progress)
        except StopNow:
            print("\nstopped; keeping what was measured", file=err)
            results = results_of(backend, *resolve(suites, args.preset), measured, None, cancelled=True,
                                 notes=("stopped at once: the kernel in progress was not measured",))
            code = EXIT_TERMINATED
        shield(err)
        if results.cancelled:
            code = code or EXIT_CANCELLED
        kept = _keep(results, args, journal, err)
    finally:
        if journal is not None:
            journal.close()
    return results, kept, code


def _keep(results, args: argparse.Namespace, journal, err: TextIO):
    """The run saved beside the profile and its journal settled (``calibrate.keep_run``);
    what was saved where, said."""
    from explorer.kernels import calibrate

    kept = calibrate.keep_run(results, Path(args.out) if args.out else None, journal)
    say_refused(kept.refused, err)
    if not results.points:
        if results.cancelled:
            print("calibration cancelled before its first point: nothing was measured", file=err)
    elif kept.path is None:
        print("roofline-explorer: the run could not be saved anywhere; its journal keeps it for the "
              "next bench or calibrate to recover", file=err)
    elif results.cancelled:
        print(f"calibration cancelled: the {len(results.points)} points measured are saved in "
              f"{kept.path} (no profile was fitted; fit what a full run measured with "
              "roofline-explorer calibrate --results FILE)", file=err)
    else:
        print(f"saved the {len(results.points)} measured points to {kept.path}", file=err)
    return kept


def _energy_line(done) -> str:
    """What the profile keeps of energy, or why nothing."""
    from explorer.core.analysis.energy import describe
    from explorer.kernels.calibrate import measured_energy

    kept = done.profile.energy
    if kept is None:
        return f"energy: not kept ({measured_energy(done.results)[1]})"
    return f"energy ({kept.precision}): {describe(kept.constants)}, {kept.constants.source}"


def _report(done, out: TextIO, err: TextIO) -> None:
    profile, held_out, roofs = done.profile, done.held_out, done.roofs
    rows = [(name, f"{factor.value:.4g}", factor.note) for name, factor in profile.factors.items()]
    print(f"{profile.name}: shares of {roofs.peak_flops / 1e12:.3g} TFLOP/s ({roofs.peak_source}) and "
          f"{roofs.bandwidth / 1e9:.3g} GB/s ({roofs.bandwidth_source})", file=out)
    print(format_table(("factor", "value", "how"), rows), file=out)
    if held_out:
        shapes = ", ".join(f"{label} {ratio:.2f}" for label, ratio in held_out)
        print(f"held-out products, predicted ÷ measured: {shapes} (median error "
              f"{done.median_error:.0%})", file=out)
    print(_energy_line(done), file=out)
    say_refused(done.refused, err)
    print(_where(done), file=out)


def _where(done) -> str:
    """Where the profile went and what uses it; nowhere, the profile itself to copy."""
    from explorer.core.hardware.efficiency import to_text

    profile, path = done.profile, done.path
    if path is None:
        return ("the profile could not be saved anywhere (see the errors above); here it is, to "
                "save by hand in the data folder's efficiency/ as " f"{profile.id}.yaml:\n"
                + to_text(profile).rstrip("\n"))
    if done.rejected:
        return (f"wrote {path}, where --efficiency calibrated does not read it: the fit failed its "
                "held-out check (below)")
    if profile.machine:
        return (f"wrote {path}. {profile.machine} is not in the catalogue: the profile applies to no "
                "device until it is (Hardware › Duplicate and edit, with its datasheet peaks and "
                "bandwidth); then calibrate again")
    if done.in_data_folder:
        return f"wrote {path}: --efficiency calibrated uses it for {', '.join(profile.devices)}"
    return (f"wrote {path}: copy it into the data folder's efficiency/ for --efficiency calibrated "
            "to use it")
