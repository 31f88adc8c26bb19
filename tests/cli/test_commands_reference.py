"""docs/commands.md cannot go stale: every command of `roofline-explorer` (the parser
`explorer.cli.build_parser` builds, subcommands included) and every option of each is named
there."""

import argparse
import re
from pathlib import Path

import pytest

from explorer import cli

PAGE = Path(__file__).resolve().parents[2] / "docs" / "commands.md"


def commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(path of subcommand names, its parser) for every command and subcommand."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*path, name), sub
                yield from commands(sub, (*path, name))


def options(parser: argparse.ArgumentParser) -> list[tuple[str, ...]]:
    """Each option as its long spellings (aliases such as `--flops`/`--budget` together; a
    `--no-X` that argparse adds beside `--X` goes with it)."""
    out = []
    for action in parser._actions:
        flags = tuple(f for f in action.option_strings if f.startswith("--") and f != "--help")
        if isinstance(action, argparse.BooleanOptionalAction):
            flags = tuple(f for f in flags if not f.startswith("--no-"))
        if flags:
            out.append(flags)
    return out


COMMANDS = list(commands(cli.build_parser()))


def test_the_parser_has_its_commands():
    names = {path[0] for path, _ in COMMANDS}
    assert {"analyze", "bench", "export", "serve", "hardware"} <= names


@pytest.mark.parametrize("path", [" ".join(path) for path, _ in COMMANDS])
def test_every_command_is_named_in_docs_commands_md(path):
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    words = path.split()
    if len(words) == 1:
        assert f"roofline-explorer {path}" in text or f"`{path}" in text, \
            f"docs/commands.md does not name `{path}`"
    else:  # a subcommand, e.g. `hardware show` or `scenes list | show ID`
        assert re.search(rf"\b{re.escape(words[0])}\b[^`\n]*\b{re.escape(words[-1])}\b", text), \
            f"docs/commands.md does not name `{path}`"


@pytest.mark.parametrize("path", [" ".join(path) for path, _ in COMMANDS])
def test_every_option_of_every_command_is_named_in_docs_commands_md(path):
    parser = dict((" ".join(p), sub) for p, sub in COMMANDS)[path]
    text = PAGE.read_text(encoding="utf-8")
    missing = sorted("/".join(flags) for flags in options(parser)
                     if not any(re.search(rf"{re.escape(flag)}(?![\w-])", text) for flag in flags))
    assert not missing, f"docs/commands.md does not mention {missing} of `{path}`"
