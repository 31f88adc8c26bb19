"""Every picture the README shows is one `make screenshots` draws again from the code (so a
change of the drawing is one command away from the README), and every file it draws is
shown."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_readme_shows_exactly_the_pictures_make_screenshots_draws():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = set(re.findall(r"!\[[^\]]*\]\(([^)]+)\)", readme))
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\nscreenshots:", 1)[1].split("\n\n", 1)[0]
    drawn = set(re.findall(r"(?:--screenshot|--out) (\S+)", recipe))
    assert shown == drawn
    assert all((ROOT / path).is_file() for path in shown)
    on_disk = {p.relative_to(ROOT).as_posix() for p in (ROOT / "packaging" / "screenshots").iterdir()}
    assert on_disk == drawn  # no picture left behind that nothing draws


def test_every_benchmark_the_readme_quotes_is_run_by_make_bench():
    """A figure in the README's Benchmarks comes from `make bench` (issue 34's first goal):
    every script that section names is in the recipe, and the recipe runs nothing it does not."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Benchmarks", 1)[1].split("\n## ", 1)[0]
    quoted = set(re.findall(r"benchmarks/(\w+\.py)", section))
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\nbench:", 1)[1].split("\n\n", 1)[0]
    run = set(re.findall(r"benchmarks/(\w+\.py)", recipe))
    assert quoted == run
