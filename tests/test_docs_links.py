"""Every relative link of README.md and docs/*.md leads to a file of the repository, and a
link to a heading of a page leads to a heading that page has (GitHub's anchors)."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchors(page: Path) -> set[str]:
    text = page.read_text(encoding="utf-8")
    out = set()
    for heading in re.findall(r"^#+ (.+)$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        out.add(slug)
    return out


def relative_links():
    for page in PAGES:
        for link in LINK.findall(page.read_text(encoding="utf-8")):
            if not re.match(r"[a-z]+:", link):
                yield page.relative_to(ROOT).as_posix(), link


def test_the_readme_links_every_docs_page():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for page in sorted((ROOT / "docs").glob("*.md")):
        assert f"](docs/{page.name})" in readme, f"README.md does not link docs/{page.name}"


@pytest.mark.parametrize(("page", "link"), list(relative_links()))
def test_a_relative_link_resolves(page, link):
    path, _, anchor = link.partition("#")
    target = (ROOT / page).parent / path if path else ROOT / page
    assert target.exists(), f"{page}: {link} leads nowhere"
    if anchor:
        assert anchor in anchors(target), f"{page}: {link}: no such heading"
