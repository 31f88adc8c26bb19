"""docs/commands.md cannot go stale: every command of `roofline-explorer` (the parser
`explorer.commands.main.build_parser` builds, subcommands included) and every option of each is named
there, its usage lines show no option a command lacks, and its table of every command's
options is the one this module prints from the parser (`python -m tests.cli.test_commands_reference
--write` writes it again)."""

import argparse
import re
from pathlib import Path

import pytest

from explorer.commands import main as cli
from explorer.core.model.parameters import PARAMETERS

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


START, END = "<!-- options: start -->\n", "\n<!-- options: end -->"
WORKLOAD_FLAGS = {p.flag for p in PARAMETERS} | {f"--no-{p.flag[2:]}" for p in PARAMETERS}


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _value(action: argparse.Action) -> str:
    if action.nargs == 0:
        return ""
    shown = action.metavar or ("|".join(map(str, action.choices)) if action.choices else action.dest.upper())
    if isinstance(shown, tuple):
        shown = " ".join(shown)
    shown = str(shown).replace("|", "\\|")  # a table cell ends at a bare |, even in code
    return f"`{shown}{' …' if action.nargs in ('*', '+') else ''}`"


def _help(action: argparse.Action) -> str:
    text = action.help or ""
    if "%" in text:
        text = text % {**vars(action), "prog": ""}
    return _cell(text)


def reference() -> str:
    """Each command's options as the parser declares them (the workload options, which the
    parameter table describes, named in one line)."""
    parts = []
    for path, parser in COMMANDS:
        actions = [a for a in parser._actions
                   if not isinstance(a, argparse._HelpAction | argparse._SubParsersAction)]
        if not actions:
            continue
        workload = [a for a in actions if set(a.option_strings) & WORKLOAD_FLAGS]
        own = [a for a in actions if a not in workload]
        parts.append(f"### `roofline-explorer {' '.join(path)}`\n")
        if own:
            rows = ["| option | value | meaning |", "|---|---|---|"]
            for a in own:
                name = ", ".join(f"`{f}`" for f in a.option_strings)
                value = _value(a)
                if not name:  # a positional argument: its name is its value
                    name, value = value, ""
                rows.append(f"| {name} | {value} | {_help(a)} |")
            parts.append("\n".join(rows) + "\n")
        if workload:
            flags = ", ".join(f"`{f}`" for a in workload for f in a.option_strings)
            parts.append(f"Workload options (see [Workload parameters](#workload-parameters)): {flags}.\n")
    return "\n".join(parts).rstrip("\n")


def test_the_options_table_is_the_parser_s():
    text = PAGE.read_text(encoding="utf-8")
    assert START in text and END in text, "docs/commands.md has no options table"
    block = text.split(START, 1)[1].split(END, 1)[0]
    assert block == reference(), "stale: run python -m tests.cli.test_commands_reference --write"


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["--write"]:
        text = PAGE.read_text(encoding="utf-8")
        head, tail = text.split(START, 1)[0], text.split(END, 1)[1]
        PAGE.write_text(head + START + reference() + END + tail, encoding="utf-8")
    else:
        print(reference())
