"""Every picture the README and the docs show is one `make screenshots` draws again from the
code (so a change of the drawing is one command away from the page), and every file it draws
is shown."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def shown_pictures() -> set[str]:
    """Each picture a page shows, as a path from the repository root (docs/ link with ../)."""
    shown = set()
    for page in PAGES:
        for link in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", page.read_text(encoding="utf-8")):
            shown.add((page.parent / link).resolve().relative_to(ROOT).as_posix())
    return shown


def test_the_pages_show_exactly_the_pictures_make_screenshots_draws():
    shown = shown_pictures()
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\nscreenshots:", 1)[1].split("\n\n", 1)[0]
    drawn = set(re.findall(r"(?:--screenshot|--out) (\S+)", recipe))
    assert shown == drawn
    assert all((ROOT / path).is_file() for path in shown)
    on_disk = {p.relative_to(ROOT).as_posix() for p in (ROOT / "packaging" / "screenshots").iterdir()}
    assert on_disk == drawn  # no picture left behind that nothing draws


def test_the_readme_shows_the_window():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert re.search(r"!\[[^\]]*\]\(packaging/screenshots/window-[^)]+\.png\)", readme)


def test_every_benchmark_the_docs_quote_is_run_by_make_bench():
    """A figure in docs/benchmarks.md comes from `make bench` (issue 34's first goal):
    every script that page names is in the recipe, and the recipe runs nothing it does not."""
    page = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    quoted = set(re.findall(r"benchmarks/(\w+\.py)", page))
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\nbench:", 1)[1].split("\n\n", 1)[0]
    run = set(re.findall(r"benchmarks/(\w+\.py)", recipe))
    assert quoted == run
