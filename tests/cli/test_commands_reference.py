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


def usage_lines() -> list[tuple[str, str]]:
    """(command, line) for each `roofline-explorer COMMAND …` line of the page's shell
    blocks, continuation lines joined."""
    text = PAGE.read_text(encoding="utf-8")
    out = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        for line in re.sub(r"\\\n\s*", " ", block).splitlines():
            words = line.split("  #")[0].split()
            if len(words) > 1 and words[0] == "roofline-explorer":
                out.append((words[1], " ".join(words)))
    return out


def test_the_page_has_usage_lines():
    assert len({command for command, _ in usage_lines()}) >= 10


@pytest.mark.parametrize(("command", "line"), usage_lines())
def test_every_option_a_usage_line_shows_is_one_of_its_command(command, line):
    """The other way round: a usage line shows no option its command's parser lacks."""
    parsers = {path: sub for path, sub in COMMANDS if path[0] == command}
    assert parsers, f"docs/commands.md shows `{command}`, which is no command"
    known = {flag for sub in parsers.values() for action in sub._actions for flag in action.option_strings}
    shown = set(re.findall(r"(?<![\w-])--[a-z][\w-]*", line))
    assert not shown - known, f"`{command}` has no {sorted(shown - known)}"
