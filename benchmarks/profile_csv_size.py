"""Time and memory of ``roofline-explorer profile`` on the largest CSV profile it reads (64 MB,
``ncu.MAX_PROFILE_BYTES``) in each CSV format, side by side with Python's ``csv.reader``
holding every row of the same file (what a reader that keeps the file as cells pays).

The files are made here from real ones of the conformance corpus (tests/data/third_party/),
their rows repeated with the launch or dispatch numbers renumbered, until each is about
``--megabytes`` (63: just under the limit):

- an Nsight Compute raw page (microgpusim's 2019 export: 400 columns, a units row);
- an Nsight Compute details page (ml-operator-parameters' ``nsight162.csv``: a row a metric);
- a rocprof-compute ``pmc_perf.csv`` (the MI300X dispatch of rocprofiler-compute: 2,718
  counters a dispatch);
- a rocprofv3 kernel trace (rocprofiler-sdk's: a short row a dispatch, so the most
  dispatches, each kept as a kernel).

Each round runs each in fresh interpreters, interleaved (``profile_size._child``), and
reads its wall time and peak resident memory. The goal (issue 54): every format in at most 8 s and
400 MB, the trace's limits, on this 2-core machine.

    python benchmarks/profile_csv_size.py [--megabytes 63] [--rounds 5]
"""

from __future__ import annotations

import argparse
import csv
import io
import statistics
import sys
import tempfile
from pathlib import Path

from profile_size import _child, _summary

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "data" / "third_party"
RAW = CORPUS / "ncu" / "microgpusim" / "nsight_vectoradd_100_32_metrics_all.csv"
DETAILS = CORPUS / "ncu" / "ml-operator-parameters" / "nsight162.csv"
PMC = CORPUS / "rocprofiler-compute" / "dispatch_2-MI300X_A1" / "pmc_perf.csv"
TRACE = CORPUS / "rocprofiler-sdk" / "kernel_trace.csv"


def _repeat(source: Path, target: Path, megabytes: float, kept: int, renumber) -> int:
    """``source``'s first ``kept`` lines, then its other rows again and again, each copy passed
    through ``renumber(row, copy)``, until ``target`` is about ``megabytes``; the copies."""
    lines = source.read_text(encoding="utf-8").splitlines()
    header = next(csv.reader([lines[0]]))
    rows = [row for row in csv.reader(lines[kept:]) if len(row) >= len(header) - 3]
    out = io.StringIO()
    out.write("\n".join(lines[:kept]) + "\n")
    write = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerow
    copies = 0
    while out.tell() < megabytes * 1e6:
        for number, row in enumerate(rows):
            write(renumber(header, row, copies, number, len(rows)))
        copies += 1
    target.write_text(out.getvalue(), encoding="utf-8")
    return copies


def _set(row: list[str], at: int, value: int) -> list[str]:
    out = list(row)
    out[at] = str(value)
    return out


def make_files(folder: Path, megabytes: float) -> dict[str, Path]:
    """The four files (see the module's description), by format."""
    files = {"ncu raw page": (RAW, 2, lambda h, r, c, n, k: _set(r, h.index("ID"), c * k + n)),
             "ncu details page": (DETAILS, 1, lambda h, r, c, n, k: _set(r, 0, c * 162 + int(r[0]))),
             "rocprof-compute": (PMC, 1, lambda h, r, c, n, k: _set(r, h.index("Dispatch_ID"), c * k + n)),
             "rocprofv3 trace": (TRACE, 1, lambda h, r, c, n, k: _set(
                 _set(r, h.index("Dispatch_Id"), c * k + n), h.index("Correlation_Id"), c * k + n))}
    out = {}
    for name, (source, kept, renumber) in files.items():
        path = folder / f"{name.replace(' ', '-')}.csv"
        copies = _repeat(source, path, megabytes, kept, renumber)
        print(f"{name}: {path.stat().st_size / 1e6:.1f} MB, {copies} copies of {source.name}")
        out[name] = path
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=63)
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        files = make_files(Path(folder), options.megabytes)
        runs = {}
        for name, path in files.items():
            runs[name] = [sys.executable, "-m", "explorer", "profile", str(path)]
            whole = "import csv, sys; list(csv.reader(open(sys.argv[1])))"
            runs[f"{name}, csv.reader"] = [sys.executable, "-c", whole, str(path)]
        seconds: dict[str, list[float]] = {name: [] for name in runs}
        memory: dict[str, list[float]] = {name: [] for name in runs}
        for round_ in range(options.rounds):
            for name in (runs if round_ % 2 == 0 else reversed(list(runs))):
                took, _, peak = _child(runs[name])
                seconds[name].append(took)
                memory[name].append(peak)
        met = True
        for name in files:
            reference = f"{name}, csv.reader"
            ratio = [a / b for a, b in zip(memory[name], memory[reference], strict=True)]
            print(f"{name:>17}: wall {_summary(seconds[name])} s, peak {_summary(memory[name])} MB; "
                  f"csv.reader holding every row: wall {_summary(seconds[reference])} s, peak "
                  f"{_summary(memory[reference])} MB; memory ÷ csv.reader's {_summary(ratio)}× "
                  f"({options.rounds} rounds)")
            met &= statistics.median(seconds[name]) <= 8 and statistics.median(memory[name]) <= 400
        print(f"goal: every format ≤ 8 s (wall) and ≤ 400 MB: {'met' if met else 'not met'}")


if __name__ == "__main__":
    main()
