"""Time and memory of ``roofline-explorer profile`` on a large PyTorch profiler trace, side by
side with Python's own ``json.load`` of the same file (the least any reader that parses
it whole pays).

The trace is made here: the events of the shipped TraceLens trace of Qwen1.5-0.5B on an
H100 (``tests/data/tracelens``) repeated, each copy a profiler step of its own (its
timestamps moved past the copy before, its External ids, correlation ids and flow ids
renumbered), until the file is about ``--megabytes`` (250: just under the 256 MB limit).
Each round runs both in fresh interpreters, interleaved, and reads each one's wall time,
its CPU time (user + system, ``ru_utime + ru_stime`` of the finished child: on a machine
that others load, the wall time follows their load and the CPU time far less) and its
peak resident memory (``ru_maxrss``). The goal (issue 54): the profile in at most 8 s and
400 MB on this 2-core machine (wall time, judged on an idle machine; the CPU time says
what the reader itself costs).

    python benchmarks/profile_size.py [--megabytes 250] [--rounds 5] [--keep PATH] [--baseline TREE]

``--baseline``: another checkout's root (an earlier commit's ``git archive``, say), whose
``profile`` runs in the same rounds, to compare a change with what it replaced.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "tests" / "data" / "tracelens" / "qwen1.5-0.5b-chat-h100.pt.trace.json.gz"
IDS = ("External id", "correlation", "Ev Idx", "Record function id", "Sequence number")


def _shifted(event: dict, copy: int, span: float, ids: int) -> dict:
    out = dict(event)
    if isinstance(out.get("ts"), int | float) and not isinstance(out.get("ts"), bool):
        out["ts"] = out["ts"] + copy * span
    if isinstance(out.get("id"), int):
        out["id"] = out["id"] + copy * ids
    name = out.get("name")
    if isinstance(name, str) and name.startswith("ProfilerStep#"):
        out["name"] = f"ProfilerStep#{int(name.split('#')[1]) + copy}"
    args = out.get("args")
    if isinstance(args, dict):
        out["args"] = {k: (v + copy * ids if k in IDS and isinstance(v, int) and not isinstance(v, bool)
                           else v) for k, v in args.items()}
    return out


def make_trace(path: Path, megabytes: float) -> int:
    """Write the trace (see the module's description); the number of copies."""
    doc = json.loads(gzip.decompress(SOURCE.read_bytes()))
    events = doc.pop("traceEvents")
    times = [e["ts"] + e.get("dur", 0) for e in events if isinstance(e.get("ts"), int | float)]
    span = max(times) - min(times) + 1000.0
    ids = 1 + max((v for e in events for k, v in (e.get("args") or {}).items()
                   if k in IDS and isinstance(v, int)), default=0)
    ids = max(ids, 1 + max((e["id"] for e in events if isinstance(e.get("id"), int)), default=0))
    one = sum(len(json.dumps(e)) + 2 for e in events)
    copies = max(1, int(megabytes * 2**20 * 0.98 / one))
    with path.open("w", encoding="utf-8") as out:
        out.write("{\n" + "".join(f"  {json.dumps(k)}: {json.dumps(v)},\n" for k, v in doc.items()))
        out.write('  "traceEvents": [\n')
        first = True
        for copy in range(copies):
            for event in events:
                out.write(("" if first else ",\n") + json.dumps(_shifted(event, copy, span, ids)))
                first = False
        out.write("\n  ]\n}\n")
    return copies


def _child(command: list[str], root: Path = ROOT) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak MB) of one fresh interpreter running ``command``."""
    script = ("import resource, subprocess, sys, time\n"
              "t = time.perf_counter()\n"
              "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
              "t = time.perf_counter() - t\n"
              "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
              "print(r.returncode, t, u.ru_utime + u.ru_stime, u.ru_maxrss)\n")
    # (a wrapper per run, so that RUSAGE_CHILDREN holds that run alone; run in ``root``, whose
    # code ``-m`` then imports before any other)
    out = subprocess.run([sys.executable, "-c", script, *command], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(root)}, cwd=root, check=True).stdout.split()
    if out[0] != "0":
        raise SystemExit(f"{command} failed ({out[0]})")
    return float(out[1]), float(out[2]), float(out[3]) / 1024  # (ru_maxrss: KiB on Linux)


def _summary(values: list[float]) -> str:
    low, high = min(values), max(values)
    return f"median {statistics.median(values):.2f} (range {low:.2f}–{high:.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=250)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="write the trace here (and reuse it when present)")
    parser.add_argument("--baseline", type=Path, help="another checkout whose profile runs beside this one")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = (options.keep or Path(folder) / "large.pt.trace.json").resolve()
        if not path.exists():
            copies = make_trace(path, options.megabytes)
            print(f"{path.name}: {copies} copies of {SOURCE.name}")
        print(f"trace: {path.stat().st_size / 2**20:.0f} MB; {resource.getpagesize()} B pages")
        runs = {"profile": [sys.executable, "-m", "explorer", "profile", str(path)],
                "json.load": [sys.executable, "-c", "import json, sys; json.load(open(sys.argv[1]))",
                              str(path)]}
        roots = {name: ROOT for name in runs}
        if options.baseline:
            runs["baseline"], roots["baseline"] = runs["profile"], options.baseline.resolve()
        seconds: dict[str, list[float]] = {name: [] for name in runs}
        cpu: dict[str, list[float]] = {name: [] for name in runs}
        memory: dict[str, list[float]] = {name: [] for name in runs}
        for round_ in range(options.rounds):
            for name in (runs if round_ % 2 == 0 else reversed(list(runs))):
                took, used, peak = _child(runs[name], roots[name])
                seconds[name].append(took)
                cpu[name].append(used)
                memory[name].append(peak)
        for name in runs:
            print(f"{name:>9}: wall {_summary(seconds[name])} s, CPU (user + system) "
                  f"{_summary(cpu[name])} s, peak {_summary(memory[name])} MB ({options.rounds} rounds)")
        time_ratio = [a / b for a, b in zip(seconds["profile"], seconds["json.load"], strict=True)]
        memory_ratio = [a / b for a, b in zip(memory["profile"], memory["json.load"], strict=True)]
        print(f"profile ÷ json.load: time {_summary(time_ratio)}×, memory {_summary(memory_ratio)}×")
        met = statistics.median(seconds["profile"]) <= 8 and statistics.median(memory["profile"]) <= 400
        print(f"goal: ≤ 8 s (wall) and ≤ 400 MB: {'met' if met else 'not met'}; CPU time "
              f"{'within' if statistics.median(cpu['profile']) <= 8 else 'beyond'} 8 s")


if __name__ == "__main__":
    main()
