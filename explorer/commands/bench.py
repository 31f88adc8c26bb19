"""``roofline-explorer bench``: run kernel suites from a terminal.

Progress goes to stderr; the summary table (or JSON) to stdout. The first Ctrl+C
cancels between kernel launches; a second Ctrl+C or a SIGTERM stops at once. Either way
what was measured is summarised and saved: ``--out``'s folder is checked before the run,
the table is printed before the file is written, and a file that cannot be written is
saved in the data folder (or the temporary folder) instead, with the reason. While it runs,
each point is also appended to a journal (``kernels.journal``) beside where the results go, so
even a SIGKILL keeps what was measured: the next ``bench`` turns a journal left behind into a
results file and says so.
"""

from __future__ import annotations

import argparse
import json
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
    save_first,
    shield,
    start_journal,
)
from explorer.commands.texttable import format_table
from explorer.core.files.fallback import fallbacks
from explorer.core.units import format_si, format_time, rate_unit
from explorer.kernels.backends import BACKENDS, BackendUnavailable, open_backend
from explorer.kernels.cases import PRESETS, Preset
from explorer.kernels.journal import Journal
from explorer.kernels.reference import Reference, reference_for
from explorer.kernels.results import Point, Results, new_results_name
from explorer.kernels.runner import OFF, Progress, drive, results_of, run
from explorer.kernels.suites import SUITES, UnknownSuiteError, resolve

EXIT_CONTENDED = 3


def add_parser(sub) -> None:
    bench = sub.add_parser(
        "bench", help="measure this machine with live kernels (NumPy on the CPU, CuPy on a GPU)",
        description="Run micro-kernels and report achieved FLOP/s and bytes/s next to the "
                    "catalogue (or derived) peaks.")
    bench.add_argument("--backend", choices=BACKENDS, default="numpy")
    bench.add_argument("--device", type=int, default=0, metavar="N", help="GPU number (cupy)")
    bench.add_argument("--suite", nargs="+", default=["quick"], metavar="NAME",
                       help=f"a preset ({', '.join(PRESETS)}) or suites: {', '.join(SUITES)}")
    bench.add_argument("--compare", metavar="ID",
                       help="catalogue device to judge against (default: the GPU's own entry, "
                            "or the CPU's derived peak)")
    bench.add_argument("--out", metavar="FILE.json", help="save the results (also when cancelled)")
    bench.add_argument("--json", action="store_true", help="print the results as JSON")
    bench.add_argument("--strict", action="store_true",
                       help="fail (exit 3) when a point stayed contended by other programs' load")
    bench.add_argument("--no-load-check", action="store_true",
                       help="do not read other programs' load around each case (no retries, no "
                            "point marked contended); the results say it was not checked")


class ProgressLine:
    """One self-updating line on a terminal, one line per case otherwise."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = stream.isatty()

    def __call__(self, p: Progress) -> None:
        width = 24
        filled = int(width * p.fraction)
        eta = f"ETA {format_time(p.eta_s)}" if p.eta_s is not None else "ETA …"
        text = f"[{'#' * filled}{'-' * (width - filled)}] {p.done}/{p.total} {eta}  {p.current}"
        if self.tty:
            self.stream.write("\r\033[K" + text[:160])
            if not p.current:
                self.stream.write("\n")
        elif p.current:
            self.stream.write(text + "\n")
        self.stream.flush()


def _fraction(point: Point, reference: Reference) -> str:
    """Achieved share of the roof that binds this kernel (compute or memory)."""
    shares = []
    peak = reference.flops_per_s.get(point.dtype)
    if peak and point.flops:
        shares.append((point.flops_per_s / peak, "peak"))
    if reference.bandwidth_bytes_per_s:
        shares.append((point.bytes_per_s / reference.bandwidth_bytes_per_s, "bw"))
    if not shares:
        return "-"
    share, what = max(shares)
    return f"{share:.2f} {what}"


def summary(results: Results, reference: Reference) -> str:
    rows = []
    for p in results.points:
        knob = " ".join(f"{k}={v}" for k, v in p.param.items())
        spread = f"{format_time(p.time_p20_s)}–{format_time(p.time_p80_s)}"
        flag = p.flag.upper()
        rows.append([p.suite, p.kernel, p.dtype, knob, format_time(p.time_median_s), spread,
                     format_si(p.flops_per_s, rate_unit(p.dtype)) if p.flops else "-",
                     format_si(p.bytes_per_s, "B/s"), _fraction(p, reference), flag])
    lines = [format_table(["suite", "kernel", "dtype", "param", "median", "p20–p80", "compute",
                           "memory", "of roof", "flag"], rows, right=(4, 6, 7))]
    lines.append(f"\nreference: {reference.source}; fractions are of the roof the kernel is "
                 "nearest to (peak for its precision, or main-memory bandwidth)")
    for p in results.points:
        if p.doubt:
            lines.append(f"{p.suite}/{p.kernel} {p.dtype}: {p.doubt}")
    bandwidth = results.best_bandwidth()
    if bandwidth:
        lines.append(f"best sustained bandwidth: {format_si(bandwidth.value, 'B/s')} "
                     f"({bandwidth.suite}/{bandwidth.kernel})")
    elif results.preset == Preset.SMOKE:
        lines.append("best sustained bandwidth: none measured (a smoke run's working sets stay in "
                     "the caches; quick or full sizes stream from main memory)")
    for dtype, ceiling in results.best_flops().items():
        lines.append(f"best {dtype}: {format_si(ceiling.value, rate_unit(dtype))} "
                     f"({ceiling.suite}/{ceiling.kernel})")
    lines += _energy_lines(results)
    lines += [f"skipped {s['suite']}/{s['kernel']} {s['dtype']}: {s['reason']}" for s in results.skipped]
    lines += [f"note: {n}" for n in results.notes]
    if results.cancelled:
        lines.append("cancelled: the table holds the kernels that finished")
    return "\n".join(lines)


def _energy_lines(results) -> list[str]:
    """The energy constants a run's powers give (Choi et al.'s model), or why none; beside
    them, the 45 nm circuit energies of the same precision, for scale."""
    from explorer.core.analysis.energy import describe
    from explorer.core.analysis.energy_roofline import circuit_roof
    from explorer.kernels import energy

    if not any(p.power_w is not None for p in results.points):
        return []  # the notes say why energy was not measured
    constants = energy.fitted(results)
    if isinstance(constants, str):
        return [f"energy: no fit ({constants})"]
    dtype, _ = energy.metered(results)
    circuit = circuit_roof(dtype)
    scale = [] if circuit is None else [
        f"energy at 45 nm circuit energies ({dtype}, Horowitz, ISSCC 2014), for scale: "
        f"ε_flop {circuit.constants.flop_j * 1e12:.3g} pJ/FLOP, ε_byte {circuit.constants.byte_j * 1e12:.3g} "
        f"pJ/byte (energy balance {circuit.balance:.3g} FLOP/byte)"]
    return [f"energy: {describe(constants)}, {constants.source}", *scale]


def _save(results: Results, path: str | None, err: TextIO) -> Path | None:
    """Save ``results`` to ``path``; when that fails, to the data folder or the temporary
    folder, saying why. Returns where they went (None: nowhere)."""
    name = new_results_name("bench", results.created)
    targets = [Path(path)] if path else []
    saved = save_first(results.save, [*targets, *fallbacks("results", name)], err)
    if saved is not None:
        print(f"saved {len(results.points)} points to {saved}", file=err)
    return saved


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.out and (problem := check_out(args.out)):
        print(f"roofline-explorer: error: cannot save to {args.out}: {problem}", file=err)
        return 2
    try:
        backend = open_backend(args.backend, args.device)
    except BackendUnavailable as exc:
        print(f"roofline-explorer: the {args.backend} backend cannot run here: {exc}", file=err)
        return 1
    reference, note = reference_for(backend, open_catalog(err), args.compare)
    if note:
        print(f"note: {note}", file=err)
    print(f"measuring with {backend.label}", file=err)
    measured: list[Point] = []
    progress = ProgressLine(err)
    folders = journal_folders_for(args.out)
    recover_journals(folders, err)
    journal = start_journal(folders, backend, args.suite, reference, err)

    def on_progress(p: Progress) -> None:
        if p.point is not None:
            measured.append(p.point)
            journal_point(journal, p.point, err)
        progress(p)

    try:
        with interrupts(err) as cancel:
            return _measure_and_keep(args, backend, reference, cancel, measured, on_progress, out, err,
                                     journal)
    finally:
        if journal is not None:
            journal.close()


def _measure_and_keep(args, backend, reference, cancel, measured, on_progress, out, err,
                      journal: Journal | None) -> int:
    stopped = False
    try:
        suites, preset = resolve(args.suite, "quick")
        load = OFF if args.no_load_check else "auto"
        results = drive(run(backend, args.suite, cancel=cancel, reference=reference, load=load),
                        on_progress)
    except UnknownSuiteError as exc:
        print(f"roofline-explorer: error: {exc}", file=err)
        return 2
    except StopNow:
        stopped = True
        print("\nstopped; keeping what was measured", file=err)
        results = results_of(backend, suites, preset, measured, reference, cancelled=True,
                             notes=("stopped at once: the kernel in progress was not measured",))
    shield(err)
    if args.json:
        json.dump(results.to_dict(), out, indent=1)
        out.write("\n")
    else:
        print(summary(results, reference), file=out)
    out.flush()
    saved = _save(results, args.out, err) if (args.out or results.points) else None
    if journal is not None and not results.points:
        journal.discard()  # nothing was measured
    elif journal is not None and not journal.settle(saved):
        print(f"note: the run's journal stays in {journal.path.parent} until its results are somewhere "
              "lasting: the next bench recovers it", file=err)
    if args.out and (saved is None or saved != Path(args.out)):
        return 1
    if stopped:
        return EXIT_TERMINATED
    if results.cancelled:
        return EXIT_CANCELLED
    contended = sum(1 for p in results.points if p.contended)
    if args.strict and contended:
        print(f"roofline-explorer: {contended} point(s) stayed contended by other programs' load "
              "(--strict): measure again on a quiet machine", file=err)
        return EXIT_CONTENDED
    return 0
