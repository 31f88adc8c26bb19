"""Write the figures of a ``make bench`` run into docs/benchmarks.md: the GUI-stall table
(``gui_stalls.py --json``, offscreen and on X11) and the growth table (``growth.py --json``),
each between its markers (``<!-- gui-stalls: start -->`` … ``<!-- gui-stalls: end -->``),
so that the page's tables are the run's output and nothing typed by hand.

``make bench`` writes the JSON files under ``build/bench/``; only a run that ``watched``
called quiet should be written into the page (the ``--load`` line each run prints says so,
and ``--note`` puts it under the tables).

    python benchmarks/doc_tables.py [--folder build/bench] [--doc docs/benchmarks.md]
                                    [--note "…"]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOAL_MS = 100.0  # gui_stalls.GOAL_S, in ms
STALLS = "gui-stalls"
GROWTH = "growth"


class MarkerError(ValueError):
    """The page lacks a table's markers, or has them out of order."""


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f}"


def stalls_table(offscreen: list[dict], x11: list[dict] | None) -> str:
    """One row per operation: the median of its rounds' longest stalls on each platform
    (each round's in brackets), its total time offscreen and its largest round's peak resident
    memory above the start, and whether the goal is met on both."""
    by_name = {r["name"]: r for r in x11 or []}
    lines = ["| Operation | Longest stall offscreen, ms (rounds) | on X11 (Xvfb), ms (rounds) "
             "| Total offscreen | Peak memory offscreen | ≤ 100 ms? |",
             "|---|---|---|---|---|---|"]
    for row in offscreen:
        other = by_name.get(row["name"])
        cells = [f"{_ms(row['stall_s'])} ({', '.join(_ms(s) for s in row['rounds'])})"]
        cells.append("not run" if other is None else
                     f"{_ms(other['stall_s'])} ({', '.join(_ms(s) for s in other['rounds'])})")
        stalls = [row["stall_s"]] + ([other["stall_s"]] if other else [])
        finished = row["finished"] and (other is None or other["finished"])
        met = finished and all(s * 1000 <= GOAL_MS for s in stalls)
        total = f"{row['total_s']:.2f} s" + ("" if row["finished"] else " (stopped at its limit)")
        note = f" ({row['note']})" if row.get("note") else ""
        verdict = "yes" if met else "no"
        peak = "–" if row.get("peak_mb") is None else f"{row['peak_mb']:.0f} MB"
        lines.append(f"| {row['name']}{note} | {cells[0]} | {cells[1]} | {total} | {peak} | {verdict} |")
    return "\n".join(lines)


def exponent(points: list[dict], value: str) -> float | None:
    """growth.exponent on the JSON's points (the least-squares slope of log(value) against log(work))."""
    sys.path.insert(0, str(Path(__file__).parent))
    try:
        import growth
    finally:
        sys.path.pop(0)
    return growth.exponent([growth.Point(p["work"], p["seconds"], p["peak_mb"]) for p in points], value)


def _work(work: float) -> str:
    if work >= 1e9:
        return f"{work / 1e9:,.0f}B" if work >= 1e10 else f"{work / 1e9:,.1f}B"
    return f"{work:,.0f}" if float(work).is_integer() else f"{work:,.1f}"


def growth_table(series: list[dict]) -> str:
    """One row per series: its points (work: time, peak memory) and its growth exponents."""
    lines = ["| Series | Work: time, peak memory above the start | Exponent, time | Exponent, memory |",
             "|---|---|---|---|"]
    for s in series:
        points = "; ".join(f"{_work(p['work'])}: {p['seconds']:.3g} s, {p['peak_mb']:.0f} MB"
                           for p in s["points"])
        shown = []
        for value in ("seconds", "peak_mb"):
            k = exponent(s["points"], value)
            shown.append("–" if k is None or math.isnan(k) else f"{k:.2f}")
        note = f" ({s['note']})" if s.get("note") else ""
        lines.append(f"| {s['name']}, against {s['unit']}{note} | {points} | {shown[0]} | {shown[1]} |")
    return "\n".join(lines)


def replace_block(text: str, name: str, body: str) -> str:
    """``text`` with what lies between ``name``'s markers replaced by ``body``."""
    start, end = f"<!-- {name}: start -->", f"<!-- {name}: end -->"
    i, j = text.find(start), text.find(end)
    if i < 0 or j < 0 or j < i:
        raise MarkerError(f"the page has no '{start}' … '{end}' pair: add both where the table goes")
    return text[: i + len(start)] + "\n" + body.rstrip("\n") + "\n" + text[j:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, default=ROOT / "build" / "bench",
                        help="where make bench wrote stalls-offscreen.json, stalls-x11.json, growth.json")
    parser.add_argument("--doc", type=Path, default=ROOT / "docs" / "benchmarks.md")
    parser.add_argument("--note", default="", help="a line under the tables (the run's date, machine, load)")
    args = parser.parse_args(argv)
    text = args.doc.read_text(encoding="utf-8")
    note = f"\n\n{args.note}" if args.note else ""
    offscreen, x11, growth_file = (args.folder / n for n in ("stalls-offscreen.json", "stalls-x11.json",
                                                              "growth.json"))
    wrote = []
    if offscreen.exists():
        other = json.loads(x11.read_text()) if x11.exists() else None
        text = replace_block(text, STALLS, stalls_table(json.loads(offscreen.read_text()), other) + note)
        wrote.append(STALLS)
    if growth_file.exists():
        text = replace_block(text, GROWTH, growth_table(json.loads(growth_file.read_text())) + note)
        wrote.append(GROWTH)
    if not wrote:
        print(f"no results in {args.folder}: run make bench first", file=sys.stderr)
        return 1
    args.doc.write_text(text, encoding="utf-8")
    print(f"wrote {', '.join(wrote)} into {args.doc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
