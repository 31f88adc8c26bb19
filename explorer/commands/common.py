"""Argument types shared by the command-line modules."""

from __future__ import annotations

import argparse
from dataclasses import replace


def count_type(maximum: int, minimum: int = 1):
    """An argparse type: a whole number from ``minimum`` to ``maximum``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        if value > maximum:
            raise argparse.ArgumentTypeError(f"must be at most {maximum:,}, got {value:,}")
        return value

    return parse


def amount_type(low: float, high: float, what: str, example: str):
    """An argparse type: a number from ``low`` to ``high`` (``5.76e23``), named ``what``."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what} such as {example}, got {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected {what} between {low:g} and {high:g}, got {text}")
        return value

    return parse


def share_from(minimum: float):
    """An argparse type: a share from ``minimum`` to 1 (``0.9`` or ``90%``)."""

    def parse(text: str) -> float:
        try:
            value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a share such as 0.9 or 90%, got {text!r}") from None
        if not minimum <= value <= 1:
            raise argparse.ArgumentTypeError(f"must be between {minimum:g} and 1 ({minimum:.0%} and 100%), "
                                             f"got {text}")
        return value

    return parse




def add_workload_arguments(parser: argparse.ArgumentParser, leave_out: tuple[str, ...] = ()) -> None:
    """The options that describe one step, one per row of the parameter table (but those
    named in ``leave_out``): shared by ``analyze``, ``explain``, ``layouts`` and the window."""
    from explorer.core.model.applicability import ALWAYS
    from explorer.core.model.parameters import PARAMETERS, Kind

    for p in PARAMETERS:
        if p.name in leave_out:
            continue
        default = "" if p.default is None or p.kind is Kind.FLAG else f" (default {p.default})"
        applies = "" if p.applies == ALWAYS else f"; applies to {p.applies.describe()}"
        p = replace(p, help=(p.help + applies).replace("%", "%%"))  # argparse formats help with %
        if p.kind is Kind.FLAG:
            parser.add_argument(p.flag, action=argparse.BooleanOptionalAction, default=p.default,
                                help=p.help + (" (default: on)" if p.default else ""))
        elif p.kind is Kind.CHOICE:
            parser.add_argument(p.flag, choices=p.choices, default=p.default, help=p.help + default)
        elif p.kind is Kind.COUNT:
            parser.add_argument(p.flag, type=count_type(int(p.maximum), int(p.minimum)), default=p.default,
                                metavar="N", help=p.help + default)
        else:
            parser.add_argument(p.flag, type=share_from(p.minimum), default=p.default, metavar="SHARE",
                                help=p.help + default)


MODEL_CONFIG_HELP = ("a Hugging Face config.json, or a GGUF file (its weights at their stored types), "
                     "instead of --model (read offline: the file only)")


def add_model_arguments(parser: argparse.ArgumentParser, required: bool, help: str) -> None:
    """``--model ID`` or ``--model-config PATH`` (one of them when ``required``)."""
    group = parser.add_mutually_exclusive_group(required=required)
    group.add_argument("--model", metavar="ID", help=help)
    group.add_argument("--model-config", metavar="PATH", help=MODEL_CONFIG_HELP)


def model_of(args: argparse.Namespace, models, default: str | None = None):
    """The model ``--model`` names in ``models`` (``default`` without it), or the one
    ``--model-config`` describes (a DataFileError naming the file and field when it cannot
    be read)."""
    from explorer.core.model.hf_config import chosen_model

    return chosen_model(models, args.model or default, getattr(args, "model_config", None))


def workload_params(args: argparse.Namespace, model=None, err=None):
    """The step the options describe; for a model read from a config.json (``--model-config``
    or an "hf-" id) and neither ``--dtype`` nor
    ``--weight-dtype``, the weights in the precision the file stores them in
    (``hf_config.stored_precision``). With ``--efficiency calibrated``, the calibration files
    that could not be read are named on ``err``."""
    from explorer.core.hardware.efficiency import Source, calibrated
    from explorer.core.model.hf_config import stored_precision
    from explorer.core.model.parameters import BY_NAME
    from explorer.core.model.workload import WorkloadParams

    params = WorkloadParams.from_options(args)
    if err is not None and params.efficiency == Source.CALIBRATED:
        warn_skipped(calibrated()[1], err)
    if getattr(model, "config", "") and params.dtype == BY_NAME["dtype"].default:  # read from a config.json
        return stored_precision(params, model)
    return params


def warn_skipped(skipped, err) -> None:
    """Say once, on stderr, which of the user's files were skipped and why."""
    from explorer.core.files.userfiles import notice

    if skipped:
        for line in notice(skipped).splitlines():
            print(f"roofline-explorer: warning: {line}", file=err)


def open_catalog(err):
    """The catalogue every command uses (bundled and the user's own devices); a broken
    user file is reported on ``err`` and skipped, and fails only a command that needs it."""
    from explorer.core.hardware.catalog import open_catalogue

    catalog = open_catalogue()
    warn_skipped(catalog.skipped, err)
    return catalog
