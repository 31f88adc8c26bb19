"""After ``bench`` in benchmarks/gpu_checks.sh: a bench killed hard leaves its journal (a
hidden ``.run-*.journal.jsonl``) in the results folder, one file more than the plan returns.
Its points become the results file the later steps judge (where the bench wrote none), the
journal goes, and a journal that cannot be read is moved out to the temporary folder.

    python benchmarks/settle_journal.py FOLDER RESULTS.json
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from explorer.kernels.journal import SUFFIX, recover_all


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("results", type=Path, help="where the bench's results go")
    args = parser.parse_args(argv)
    for path, results in recover_all(args.folder):
        if args.results.exists():  # (the bench wrote its own: the journal's points are in it)
            path.unlink()
            continue
        path.replace(args.results)
        print(f"the bench was stopped: its journal's {len(results.points)} points are in {args.results}")
    for left in sorted(args.folder.glob(f".run-*{SUFFIX}")):
        moved = Path(tempfile.gettempdir()) / left.name
        shutil.move(left, moved)
        print(f"a journal that could not be recovered was moved out of the results: {moved}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
