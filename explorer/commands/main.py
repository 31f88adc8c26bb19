"""Command line: headless subcommands, and the options of the window.

Nothing here imports Qt: ``hardware``, ``analyze`` and ``bench`` run on machines
without a display or without PySide6 installed (a GPU box, for instance); ``export``
imports it only when it runs, offscreen.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import TextIO

from explorer import defaults
from explorer.commands import (
    bench,
    calibrate,
    explain,
    export,
    hardware,
    layouts,
    models,
    profile,
    scaling,
    serve,
    validate,
)
from explorer.commands.common import (
    add_model_arguments,
    add_workload_arguments,
    amount_type,
    count_type,
    model_of,
    open_catalog,
    share_from,
    workload_params,
)
from explorer.commands.texttable import format_table
from explorer.commands.window_options import DESCRIPTION, add_window_arguments
from explorer.core.analysis import attention_kernel, energy_report, report, report_words
from explorer.core.analysis.analysis import Analysis, analyze
from explorer.core.analysis.expected import expected_for
from explorer.core.files.datafile import DataFileError
from explorer.core.files.registry import UnknownIdError
from explorer.core.model import sharding
from explorer.core.model.applicability import Phase
from explorer.core.model.presets import load_models
from explorer.core.model.quantization import applied
from explorer.core.model.workload import WorkloadError, WorkloadParams
from explorer.core.units import format_bytes, format_count, format_number, format_si, format_time, rate_unit

DEFAULT_HARDWARE, DEFAULT_MODEL = defaults.DEVICE, defaults.MODEL

EXIT_OK, EXIT_DATA, EXIT_USAGE = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    # No abbreviations at the top: the window's options would make a subcommand's short
    # forms ambiguous (export --w, bench --d).
    parser = argparse.ArgumentParser(prog="roofline-explorer", description=DESCRIPTION, allow_abbrev=False)
    add_window_arguments(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    hardware.add_parser(sub)

    an = sub.add_parser("analyze", help="predict one step of a model on a device",
                        description="Predict FLOPs, bytes, time and bound of every op of one "
                                    "inference or training step (roofline model), on one device or "
                                    "spread over several (--tp, --pp, --dp, --ep: the ops of one device, "
                                    "communication ops included).")
    an.add_argument("--hardware", required=True, metavar="ID", help="device id (see: hardware list)")
    add_model_arguments(an, required=True,
                        help="model id: gpt2, gpt-3-175b, llama-2-7b, llama-2-13b, llama-2-70b, llama-3-8b, "
                             "llama-3-70b, llama-3.1-405b, mistral-7b, mixtral-8x7b, qwen2.5-7b, gemma-2-9b, "
                             "deepseek-v3, resnet-50, vit-b-16")
    add_workload_arguments(an)
    an.add_argument("--tokens", type=amount_type(1, 1e16, "a token count", "1.4e12"), metavar="D",
                    help="training: tokens to train on (e.g. 1.4e12): the run's time, device-hours, energy")
    an.add_argument("--mfu", type=share_from(0.01), default=None, metavar="SHARE",
                    help="training: model-FLOPs utilisation for the run's time (default 0.4, stated)")
    an.add_argument("--profile", metavar="FILE",
                    help="a profile of the same workload (an Nsight Compute CSV, a PyTorch profiler trace "
                         "or a rocprof-compute workload): its kernels' time per "
                         "class of op beside the bound and the expected time")
    an.add_argument("--profile-steps", type=count_type(1 << 20), metavar="N",
                    help="the steps the profile covers (its time is divided by N; default: the steps "
                         "a PyTorch trace marks, else 1)")
    an.add_argument("--all-ops", action="store_true",
                    help="list every op of every layer (default: one layer's ops with their count)")
    an.add_argument("--json", action="store_true", help="print JSON (every op of every layer)")
    params = sub.add_parser("params", help="the workload parameters: kinds, defaults, limits, flags",
                            description="Every workload parameter: its session key, command-line flag, "
                                        "kind, default, limits, unit, when it applies and what it means.")
    params.add_argument("--json", action="store_true", help="print JSON")
    params.add_argument("--markdown", action="store_true",
                        help="print the Markdown table docs/commands.md holds")
    explain.add_parsers(sub)
    bench.add_parser(sub)
    export.add_parser(sub)
    scaling.add_parser(sub)
    validate.add_parser(sub)
    calibrate.add_parser(sub)
    profile.add_parser(sub)
    layouts.add_parser(sub)
    models.add_parser(sub)
    serve.add_parser(sub)
    return parser


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    return build_parser().parse_args(argv)


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run a parsed subcommand; returns the exit status."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        if args.command == "hardware":
            return hardware.command(args, out, err)
        if args.command == "analyze":
            return _analyze(args, out, err)
        if args.command == "params":
            return _params(args, out)
        if args.command in ("explain", "scenes", "lab"):
            return explain.command(args, out, err)
        if args.command == "bench":
            return bench.command(args, out, err)
        if args.command == "export":
            return export.command(args, out, err)
        if args.command == "scaling":
            return scaling.command(args, out, err)
        if args.command == "validate":
            return validate.command(args, out, err)
        if args.command == "calibrate":
            return calibrate.command(args, out, err)
        if args.command == "profile":
            return profile.command(args, out, err)
        if args.command == "layouts":
            return layouts.command(args, out, err)
        if args.command == "models":
            return models.command(args, out, err)
        if args.command == "serve":
            return serve.command(args, out, err)
    except UnknownIdError as exc:
        print(f"roofline-explorer: error: {exc}", file=err)
        return EXIT_USAGE
    except WorkloadError as exc:
        print(f"roofline-explorer: error: {exc}", file=err)
        return EXIT_USAGE
    except (DataFileError, FileNotFoundError) as exc:
        print(f"roofline-explorer: error: {exc}", file=err)
        return EXIT_DATA
    except BrokenPipeError:
        raise  # a closed stdout: ``run_to_stdout`` ends quietly
    except OSError as exc:  # a file a command writes (--out): its name and the system's reason
        print(f"roofline-explorer: error: {exc}", file=err)
        return EXIT_DATA
    raise ValueError(f"unknown command {args.command!r}")


def run_to_stdout(args: argparse.Namespace) -> int:
    """``run`` for a terminal: a closed pipe (``| head``) ends the output quietly."""
    try:
        return run(args)
    except BrokenPipeError:
        # Python would complain again when flushing stdout at exit: point it at devnull.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


# -- params -----------------------------------------------------------------------------------

def _params(args: argparse.Namespace, out: TextIO) -> int:
    from explorer.core.model.parameters import PARAMETERS, reference_table

    if args.json:
        json.dump([p.to_dict() for p in PARAMETERS], out, indent=1)
        out.write("\n")
    elif args.markdown:
        print(reference_table(), file=out)
    else:
        rows = [(p.name, p.flag, p.kind.value, p.shown_default, p.limits, p.unit or "-", p.applies)
                for p in PARAMETERS]
        print(format_table(("session key", "flag", "kind", "default", "limits", "unit", "applies to"),
                           rows), file=out)
    return EXIT_OK


# -- analyze ----------------------------------------------------------------------------------

def _analyze(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from explorer.core.model import training

    if (args.tokens is not None or args.mfu is not None) and args.phase != Phase.TRAIN:
        print("roofline-explorer: error: --tokens and --mfu describe a training run: add --phase train",
              file=err)
        return EXIT_USAGE
    hardware = open_catalog(err)[args.hardware]
    model = model_of(args, load_models())
    result = analyze(model, workload_params(args, model, err), hardware)
    mfu = training.DEFAULT_MFU if args.mfu is None else args.mfu
    run = training.run(result, args.tokens, mfu) if args.tokens is not None else None
    measured = profile.compared(args.profile, result, args.profile_steps) if args.profile else None
    if args.json:
        doc = report.analysis_dict(result, run)
        if measured is not None:
            doc["profile"] = profile.comparison_dict(measured[0], measured[1], hardware)
        json.dump(doc, out, indent=1)
        out.write("\n")
    else:
        _print_analysis(result, out, every_layer=args.all_ops)
        if run is not None:
            print("\n".join(report_words.run_lines(run)), file=out)
        if measured is not None:
            print("\n".join(profile.comparison_lines(measured[0], measured[1], hardware)), file=out)
    return EXIT_OK


def _print_analysis(a: Analysis, out: TextIO, every_layer: bool) -> None:
    print("\n".join(_header_lines(a)), file=out)
    print(format_table(["op", "role", "count", "FLOPs", "bytes", "FLOP/B", "time", "bound"],
                       _op_table_rows(a, every_layer), right=(2, 3, 4, 5, 6)), file=out)
    print("\n".join(_summary_lines(a)), file=out)


def _header_lines(a: Analysis) -> list[str]:
    """The model, device, workload, split and the roofs the ops run under."""
    p, c = a.params, a.roofs
    stored = applied(a.model, p)  # a quantized checkpoint's weights as its file stores them
    weights = f", weights {p.weight_dtype}" if p.weight_dtype else \
        (f", weights {stored.method} as the checkpoint stores them" if stored and not stored.unread else
         f", weights {getattr(a.model, 'file_dtype', '') or p.dtype} ({stored.method} not read)" if stored
         else "")
    precision = p.dtype + weights + (f", KV cache {p.kv_dtype}" if p.kv_dtype else "")
    return [
        f"{a.model.name} on {a.hardware.name}",
        f"{report_words.parameter_words(a.model)}",
        f"{report_words.step_words(a.model, p)}; {precision}; {p.attention} attention"
        f"{attention_kernel.words(p, a.model, a.ops)}",
        *report_words.split_lines(a),
        f"roofs: {format_si(c.matrix.flops_per_s, rate_unit(c.matrix.precision))} "
        f"({c.matrix.label}) for matrix ops, "
        f"{format_si(c.vector.flops_per_s, 'FLOP/s')} ({c.vector.label}) for the rest, "
        f"{format_si(c.bandwidth_bytes_per_s, 'B/s')} main memory; "
        f"ridge {c.matrix.flops_per_s / c.bandwidth_bytes_per_s:.0f} FLOP/byte",
        "",
    ]


def _op_table_rows(a: Analysis, every_layer: bool) -> list[list[str]]:
    """One row per op (its count of layers beside it), or per op per layer."""
    if every_layer:
        r = a.rows
        return [[r.names[i], r.roles[i], "", format_count(r.flops[i]), format_si(r.bytes[i], "B"),
                 format_number(r.intensity[i]), format_time(r.time_s[i]), r.bounds[i]]
                for i in range(len(r))]
    bounds = a.bounds
    return [[o.name, o.role, f"×{o.count}" if o.layers else "", format_count(a.flops[i]),
             format_si(a.bytes[i], "B"), format_number(a.flops[i] / a.bytes[i]), format_time(a.time_s[i]),
             bounds[i]]
            for i, o in enumerate(a.ops)]


def _micro_words(p: WorkloadParams) -> str:
    """"; 8 micro-batches of 1 sequence": a training step's gradient accumulation ("" without)."""
    m = p.accumulation_steps
    return f"; {m} micro-batches of {p.micro_sequences:,} sequence{'s' if p.micro_sequences > 1 else ''}" \
        if m > 1 else ""


def _expected_lines(a: Analysis) -> list[str]:
    """The expected time beside the bound, and where it goes."""
    e = expected_for(a)
    if e is None:
        return [f"(times: {report_words.expected_words(a, e)})"]
    parts = ", ".join(f"{name} {format_time(seconds)}" for name, seconds in e.parts.items() if seconds > 0)
    lines = [f"{report_words.expected_words(a, e)} ({e.efficiency.name}: {parts})"]
    if a.params.phase == Phase.TRAIN:
        lines.append(f"the expected time implies {report.expected_mfu(a, e):.0%} model-FLOPs utilisation")
    return lines


def _energy_lines(a: Analysis) -> list[str]:
    """The step's energy: an estimate (the power model over its time) and a lower bound (its
    operations at the floor operation energies); and at a calibration's fitted constants
    where the expected time's profile keeps them."""
    e = expected_for(a)
    fitted = energy_report.fitted_energy(a, e)
    lines, unit = energy_report.energy_lines(a, e), a.totals.item_unit[:-1]
    if fitted is not None:
        lines.append(f"energy at this machine's fitted constants {format_si(fitted.joules, 'J')} a step, "
                     f"{format_si(fitted.joules_per_item, 'J')} a {unit}, {format_si(fitted.power_w, 'W')} "
                     f"on average ({fitted.source})")
    note = energy_report.fitted_energy_note(a, e)
    if note is not None:
        lines.append(f"energy at this machine's fitted constants: not given ({note})")
    return lines


def _summary_lines(a: Analysis) -> list[str]:
    """The step's totals: work, time, memory use and whether it fits, and the notes."""
    p, t = a.params, a.totals
    fit = "fits" if t.fits_in_memory else "DOES NOT FIT"
    summary = [
        "",
        f"per step{' and device' if t.devices > 1 else ''}: {format_count(t.flops)}FLOP, "
        f"{format_si(t.bytes, 'B')} moved to and from memory, "
        f"intensity {format_number(t.intensity)} FLOP/byte"
        + (f"; {format_si(t.link_bytes, 'B')} sent over links" if t.link_bytes else ""),
        f"bound per step at datasheet peaks {format_time(t.time_s)} "
        f"(compute alone {format_time(t.compute_time_s)}, memory alone "
        f"{format_time(t.memory_time_s)}"
        + (f", communication {format_time(t.link_time_s)}" if t.link_bytes else "")
        + f"), {t.bound}-bound; {t.tokens_per_s:,.0f} {t.item_unit}/s"
        + (f" over {t.devices:,} devices" if t.devices > 1 else ""),
        *_expected_lines(a),
        *_energy_lines(a),
        f"memory{' per device' if t.devices > 1 else ''}: weights {format_bytes(t.weight_bytes, 4)}"
        + (f" + gradients and optimizer state {format_bytes(t.state_bytes, 4)} "
           f"({sharding.gradient_words(p)}{_micro_words(p)})" if t.state_bytes else "")
        + (f" + KV cache {format_bytes(t.kv_cache_bytes, 4)} "
           f"({format_bytes(t.kv_bytes_per_token)} per token)" if t.kv_bytes_per_token else "")
        + f" + activations {format_bytes(t.activation_bytes, 4)}"
        + f" = {format_bytes(t.memory_required_bytes, 4)} of the "
          f"{format_bytes(t.memory_budget_bytes, 4)} budget ({p.budget_share:.0%} of "
          f"{format_bytes(t.memory_usable_bytes, 4)} usable, {format_bytes(t.memory_capacity_bytes, 4)} "
          f"nominal): {fit}",
    ]
    return summary + [f"note: {n}" for n in a.notes]
