"""The window's command-line options, parsed without the headless commands.

Opening the window is the common case, and building the full parser imports every
command's module (the kernel lab's NumPy backends, the explanations): about a third of a
second before the first paint. ``parse`` reads the window's options alone when no command
is named; ``explorer.commands.main`` adds the same options to the full parser.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from explorer import defaults

COMMANDS = ("hardware", "analyze", "params", "explain", "scenes", "lab", "bench", "export", "scaling",
            "validate", "calibrate", "profile", "layouts", "models", "serve")
DESCRIPTION = "Roofline Explorer: why deep learning runs on GPUs. Without a command, opens the window."


MAX_SIDE = 8192
MAX_PIXELS = 7680 * 4320  # 8K UHD: a screenshot's image alone is 130 MB at this size


def size(text: str) -> tuple[int, int]:
    """``--size``: WIDTHxHEIGHT, within what a window can be and a screenshot can hold."""
    try:
        width, height = (int(part) for part in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT such as 1920x1080, got {text!r}") from None
    if width < 200 or height < 150:
        raise argparse.ArgumentTypeError(f"{text} is too small: at least 200x150")
    if width > MAX_SIDE or height > MAX_SIDE or width * height > MAX_PIXELS:
        raise argparse.ArgumentTypeError(
            f"{text} is too large: at most {MAX_SIDE} pixels a side and {MAX_PIXELS / 1e6:.1f} million "
            f"pixels in all (8K, 7680x4320)")
    return width, height


class _Version(argparse.Action):
    """``--version``: the version, the catalogue's date and the build, read when asked."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help="show the version, the hardware catalogue's date and the build, and exit"):
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from explorer.about import version_text

        print(version_text())  # on stdout, as argparse's own version action does
        parser.exit()


MAX_WINDOW_DEVICES = 4  # devices overlaid on one chart (a session's limit)


def devices(text: str) -> tuple[str, ...]:
    """``--hardware``: one device id or several, comma-separated, the first primary."""
    ids = tuple(part.strip() for part in text.split(",") if part.strip())
    if not ids:
        raise argparse.ArgumentTypeError("expected device ids such as h100-sxm or h100-sxm,mi300x")
    if len(ids) > MAX_WINDOW_DEVICES:
        raise argparse.ArgumentTypeError(f"at most {MAX_WINDOW_DEVICES} devices share a chart, "
                                         f"got {len(ids)}")
    return ids


def add_window_arguments(parser: argparse.ArgumentParser) -> None:
    """The window's options: what it shows (the same choices as ``analyze``: devices, model,
    every workload parameter), how (theme, presentation, a scene's step) and a screenshot."""
    from explorer.commands.common import add_workload_arguments

    parser.add_argument("--version", action=_Version)
    parser.add_argument("--screenshot", metavar="PATH",
                        help="render the window offscreen to a PNG file and exit")
    parser.add_argument("--size", type=size, default=None, metavar="WxH",
                        help="window size, e.g. 1366x768 (default: fit the screen)")
    parser.add_argument("--hardware", type=devices, default=(defaults.DEVICE,), metavar="ID[,ID…]",
                        help=f"devices shown in the window, comma-separated, the first primary "
                             f"(default {defaults.DEVICE})")
    model = parser.add_mutually_exclusive_group()
    model.add_argument("--model", default=defaults.MODEL, metavar="ID",
                       help=f"model shown in the window (default {defaults.MODEL})")
    model.add_argument("--model-config", metavar="PATH",
                       help="a Hugging Face config.json: its model shown in the window (read offline)")
    parser.add_argument("--session", metavar="FILE", help="open a saved session in the window")
    add_workload_arguments(parser)
    parser.add_argument("--theme", choices=tuple(defaults.THEMES), default=None,
                        help="the window's colours (default: as last chosen)")
    parser.add_argument("--presentation", action="store_true",
                        help="open in presentation mode: full screen, large text (Esc leaves)")
    parser.add_argument("--scene", metavar="ID", help="open on a guided scene (see: scenes list)")
    parser.add_argument("--step", type=int, default=None, metavar="N",
                        help="the scene's step, from 1 (default 1)")


def names_a_command(argv: Sequence[str]) -> bool:
    """Whether ``argv`` runs a headless command or asks for help (the full parser's job)."""
    return any(arg in COMMANDS or arg in ("-h", "--help") for arg in argv)


def parse(argv: Sequence[str]) -> argparse.Namespace:
    """The window's options (``command`` is None), for an ``argv`` naming no command."""
    parser = argparse.ArgumentParser(prog="roofline-explorer", description=DESCRIPTION, allow_abbrev=False)
    add_window_arguments(parser)
    args = parser.parse_args(argv)
    args.command = None
    return args
