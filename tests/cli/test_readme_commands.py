"""Every literal command the README and the docs (docs/*.md) quote runs from a checkout (a
command with a placeholder, FILE or ID or a choice in brackets, is a form, not an example:
skipped)."""

import io
import re
from pathlib import Path

import pytest

from explorer.commands import main as cli

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PLACEHOLDER = re.compile(r"\b(FILE|ID|PATH|DIR|N|TEXT|PX|DPI|NAME|KEY|SECONDS)\b|[|\[\]{}…]")


def quoted_commands(page: Path) -> list[str]:
    text = page.read_text(encoding="utf-8")
    out = []
    for block in re.findall(r"```[a-z]*\n(.*?)```", text, re.S):
        for line in re.sub(r"\\\n\s*", " ", block).splitlines():
            line = line.split("  #")[0].strip().replace(" [...]", "")
            if line.startswith("roofline-explorer ") and not PLACEHOLDER.search(line):
                out.append(line)
    return out


def all_commands() -> list[tuple[str, str]]:
    return [(page.relative_to(ROOT).as_posix(), command)
            for page in PAGES for command in quoted_commands(page)]


def test_the_docs_quote_literal_commands():
    assert all_commands()  # form-only pages would make the test below vacuous


@pytest.mark.parametrize(("page", "command"), all_commands())
def test_a_literal_command_the_docs_quote_runs(page, command, monkeypatch):
    monkeypatch.chdir(ROOT)  # paths in the pages are relative to a checkout
    out, err = io.StringIO(), io.StringIO()
    assert cli.run(cli.parse_args(command.split()[1:]), out, err) == 0, f"{page}: {err.getvalue()}"
