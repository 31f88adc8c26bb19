"""Start-up counted in instructions executed: the three windows of
``app_responsiveness.py``'s start-up (ours, a bare pyqtgraph PlotWidget window, a bare
PySide6 window), each in a fresh interpreter to its first painted frame, offscreen, under
valgrind's callgrind (every thread counted). Where wall time moves by a quarter between
runs on this VM, a count moves by a few per cent: it tells a change in the work done from
the machine's mood, though not time spent waiting (disk, an X server). The goals are the
wall-time ones (≤ 1.0× the pyqtgraph window, ≤ 3× the bare one): this is their work alone.
Needs valgrind (Debian: valgrind); says so and stops without it.

    python benchmarks/startup_instructions.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

from app_responsiveness import BARE, BARE_PYQTGRAPH, OURS
from common import child_env, compile_app, watched

WINDOWS = {"ours": OURS, "pyqtgraph": BARE_PYQTGRAPH, "bare": BARE}


def instructions(code: str, env: dict) -> int:
    """Instructions a fresh interpreter running ``code`` executes, all threads."""
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
                           "-c", code], capture_output=True, text=True, env=env, timeout=600)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or not found:
        raise SystemExit(f"valgrind could not count the window's start:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("start-up in instructions: not run: valgrind is not installed (Debian: apt install valgrind)")
        return 0
    compile_app()
    env = child_env(QT_QPA_PLATFORM="offscreen",
                    ROOFLINE_EXPLORER_DATA=tempfile.mkdtemp(prefix="roofline-bench-"))
    with watched():
        instructions(OURS, env)  # the first start fills the data folder's parse cache
        counts: dict[str, list[int]] = {name: [] for name in WINDOWS}
        for _ in range(args.rounds):
            for name, code in WINDOWS.items():
                counts[name].append(instructions(code, env))
        medians = {name: statistics.median(values) for name, values in counts.items()}
        print(f"start-up to the first painted window in instructions executed (callgrind), "
              f"{args.rounds} rounds:")
        for name, values in counts.items():
            print(f"  {name:10s} median {medians[name] / 1e9:.3f} G (min {min(values) / 1e9:.3f}, "
                  f"max {max(values) / 1e9:.3f})")
        for name, goal in (("pyqtgraph", "1.0"), ("bare", "3")):
            ratios = [o / r for o, r in zip(counts["ours"], counts[name], strict=True)]
            print(f"  ours ÷ {name:10s} {medians['ours'] / medians[name]:.3f} (rounds {min(ratios):.3f}–"
                  f"{max(ratios):.3f}; the wall-time goal is <= {goal})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
