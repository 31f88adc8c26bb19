"""Argument types shared by the command-line modules."""

from __future__ import annotations

import argparse


def count_type(maximum: int):
    """An argparse type: a whole number from 1 to ``maximum``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
        if value < 1:
            raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
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


share_type = share_from(0.05)  # the memory share a serving engine may fill


def add_workload_arguments(parser: argparse.ArgumentParser) -> None:
    """The options that describe one step: shared by ``analyze`` and ``explain``."""
    from explorer.core.model.workload import (
        ATTENTIONS,
        DEFAULT_MEMORY_FRACTION,
        MAX_BATCH,
        MAX_TOKENS,
        PHASES,
        ROUTINGS,
        SCALE_DTYPES,
        WEIGHT_FORMATS,
        WORKLOAD_DTYPES,
    )

    parser.add_argument("--batch", type=count_type(MAX_BATCH), default=1,
                        help="sequences (or images) per step")
    parser.add_argument("--seq", type=count_type(MAX_TOKENS), default=512,
                        help="tokens per sequence (prefill: the prompt; train: the sequence)")
    parser.add_argument("--context", type=count_type(MAX_TOKENS), default=1024,
                        help="cached tokens each new token attends over (decode)")
    parser.add_argument("--phase", choices=PHASES, default="decode",
                        help="prefill (a prompt), decode (one token per sequence) or train (forward, "
                             "backward and the optimizer over --seq tokens per sequence)")
    parser.add_argument("--dtype", choices=WORKLOAD_DTYPES, default="bf16",
                        help="precision of activations and arithmetic")
    parser.add_argument("--weight-dtype", choices=WORKLOAD_DTYPES + WEIGHT_FORMATS, default=None,
                        help="precision of stored weights (default: --dtype); int4, fp4, nvfp4 and mxfp4 "
                             "are dequantised to --dtype to compute, their group scales read with them")
    parser.add_argument("--weight-group", type=count_type(1 << 16), default=128, metavar="N",
                        help="int4 / fp4 weights: values sharing one scale (default 128)")
    parser.add_argument("--weight-scale", choices=SCALE_DTYPES, default="fp16",
                        help="int4 / fp4 weights: the scales' precision (default fp16)")
    parser.add_argument("--kv-dtype", choices=WORKLOAD_DTYPES, default=None,
                        help="precision of the KV cache (default: --dtype)")
    parser.add_argument("--attention", choices=ATTENTIONS, default="fused",
                        help="naive writes the score matrix to memory; fused keeps it on chip")
    parser.add_argument("--memory-fraction", type=share_type, default=DEFAULT_MEMORY_FRACTION,
                        metavar="SHARE", help="share of the device's usable memory a serving engine "
                                              f"may fill (default {DEFAULT_MEMORY_FRACTION}, vLLM's)")
    parser.add_argument("--causal", action="store_true",
                        help="prefill computes only the score pairs a causal mask keeps (about half)")
    from explorer.core.model import parallel

    for degree in parallel.DEGREES:
        parser.add_argument(f"--{degree.name}", type=count_type(degree.maximum), default=1, metavar="N",
                            help=f"{degree.long}: {degree.help} (default 1)")
    parser.add_argument("--recompute", action="store_true",
                        help="training: recompute activations in the backward pass (keeps only layer inputs)")
    parser.add_argument("--routing", choices=ROUTINGS, default="uniform",
                        help="mixture of experts: the weights a step reads are those of the experts its "
                             "tokens touch if they pick uniformly (expected count), or all experts")


MODEL_CONFIG_HELP = "a Hugging Face config.json instead of --model (read offline: the file only)"


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


def workload_params(args: argparse.Namespace):
    from explorer.core.model.workload import WorkloadParams

    return WorkloadParams(phase=args.phase, batch=args.batch, seq=args.seq, context=args.context,
                          dtype=args.dtype, weight_dtype=args.weight_dtype, kv_dtype=args.kv_dtype,
                          attention=args.attention, memory_fraction=args.memory_fraction,
                          routing=args.routing, causal=args.causal, weight_group=args.weight_group,
                          weight_scale=args.weight_scale, tp=args.tp, pp=args.pp, dp=args.dp, ep=args.ep,
                          recompute=args.recompute)


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
