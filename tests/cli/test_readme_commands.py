"""Every literal command the README quotes runs from a checkout (a command with a
placeholder, FILE or ID or a choice in brackets, is a form, not an example: skipped)."""

import io
import re
from pathlib import Path

import pytest

from explorer.commands import main as cli

ROOT = Path(__file__).resolve().parents[2]
PLACEHOLDER = re.compile(r"\b(FILE|ID|PATH|DIR|N|TEXT|PX|DPI|NAME|KEY|SECONDS)\b|[|\[\]{}…]")


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    out = []
    for block in re.findall(r"```[a-z]*\n(.*?)```", text, re.S):
        for line in re.sub(r"\\\n\s*", " ", block).splitlines():
            line = line.split("  #")[0].strip().replace(" [...]", "")
            if line.startswith("roofline-explorer ") and not PLACEHOLDER.search(line):
                out.append(line)
    return out


def test_the_readme_quotes_literal_commands():
    assert readme_commands()  # a form-only README would make the test below vacuous


@pytest.mark.parametrize("command", readme_commands())
def test_a_literal_readme_command_runs(command, monkeypatch):
    monkeypatch.chdir(ROOT)  # paths in the README are relative to a checkout
    out, err = io.StringIO(), io.StringIO()
    assert cli.run(cli.parse_args(command.split()[1:]), out, err) == 0, err.getvalue()
