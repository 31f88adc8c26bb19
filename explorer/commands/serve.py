"""``roofline-explorer serve``: the operating points of serving a model on a device (or a
tensor/pipeline-parallel group), from batch 1 to the KV-cache wall, and the one with the
most tokens/s a device that meets the latency targets (``core.analysis.serving``)."""

from __future__ import annotations

import argparse
import json
import math
from typing import TextIO

from explorer.commands.common import (
    add_model_arguments,
    add_workload_arguments,
    count_type,
    model_of,
    open_catalog,
    workload_params,
)
from explorer.commands.texttable import format_table
from explorer.core.hardware.cores import restrict_cores
from explorer.core.model.parameters import MAX_TOKENS

# a request's sizes and the batch are the plan's; the training-only rows do not apply
LEFT_OUT = ("phase", "batch", "seq", "context", "prefix", "sp", "recompute", "zero", "grad_dtype",
            "micro_batch", "vpp")


def _duration(text: str) -> float:
    """An argparse type: a time with its unit ("500ms", "0.05 s")."""
    from explorer.core.units import TIME, parse_quantity

    try:
        value = parse_quantity(text, TIME)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive time, got {text!r}")
    return value


def _number(low: float, high: float, what: str, closed: bool = True):
    """An argparse type: a number from ``low`` to ``high`` (``closed``: ``high`` included)."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (low <= value <= high if closed else low <= value < high):
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
        return value

    return parse


_price = _number(0, 1e6, "from 0 to 1,000,000 dollars an hour")
_share = _number(0, 1, "a share from 0 to below 1", closed=False)


def add_parser(sub) -> None:
    se = sub.add_parser("serve", help="requests a device serves at what latency and price",
                        description="The operating points of serving requests of --prompt + --output "
                                    "tokens: each batch (concurrent requests) from 1 to the KV-cache wall "
                                    "with its time per output token, time to first token, tokens/s a "
                                    "device and a user, $ per million tokens, joules per token at TDP and "
                                    "the power model's estimate; and "
                                    "the point with the most tokens/s a device that meets the targets.")
    se.add_argument("--hardware", required=True, metavar="ID", help="device id (see: hardware list)")
    add_model_arguments(se, required=True, help="model id (see: analyze --help)")
    se.add_argument("--prompt", type=count_type(1 << 22), default=1024, metavar="N",
                    help="prompt tokens of a request (default 1024)")
    se.add_argument("--output", type=count_type(1 << 22), default=1024, metavar="N",
                    help="tokens a request generates (default 1024)")
    se.add_argument("--ttft-target", type=_duration, metavar="TIME", help="time to first token, e.g. 500ms")
    se.add_argument("--tpot-target", type=_duration, metavar="TIME", help="time per output token, e.g. 50ms")
    se.add_argument("--price-per-device-hour", type=_price, metavar="USD",
                    help="what a device costs an hour, for $ per million tokens")
    se.add_argument("--kv-block", type=count_type(1 << 16), default=16, metavar="TOKENS",
                    help="tokens in a page of the KV cache (default 16, vLLM's)")
    se.add_argument("--prefill-chunk", type=count_type(MAX_TOKENS), metavar="TOKENS",
                    help="continuous batching with chunked prefill: prompt tokens a decode step also "
                         "prefills, from one prompt at a time (vLLM's max_num_batched_tokens less the "
                         "decodes); default: prefills run on their own")
    se.add_argument("--arrival-rate", type=_number(1e-9, 1e9, "a positive number of requests a second"),
                    metavar="REQ/S", help="the load: requests arriving a second (at random); the batches "
                                          "that keep up, each with its wait for a free slot (M/M/c), and the "
                                          "one with the shortest time in the system")
    se.add_argument("--kv-offload", type=_number(0, 1 << 20, "from 0 to 1,048,576 GiB"), default=0.0,
                    metavar="GIB", help="KV offload: host memory a device may fill with KV caches beyond its "
                                        "own (GiB), read over its host link every step (default 0: none)")
    se.add_argument("--prefix-hit", type=_share, default=0.0, metavar="SHARE",
                    help="prefix caching: the share of each prompt found in the cache (a shared system "
                         "prompt), whole pages; the prefill computes the rest (default 0)")
    se.add_argument("--draft", metavar="ID",
                    help="speculative decoding: the draft model's id (any id `models` lists: a preset "
                         "or hf-…)")
    se.add_argument("--draft-tokens", type=count_type(64), default=4, metavar="N",
                    help="tokens the draft proposes a step (γ, default 4)")
    se.add_argument("--acceptance", type=_share, metavar="SHARE",
                    help="the chance each drafted token is accepted (α, from 0 to below 1; needed with "
                         "--draft)")
    add_workload_arguments(se, leave_out=LEFT_OUT)
    se.add_argument("--devices", type=count_type(1 << 16), metavar="N",
                    help="search every split of N devices (tensor × pipeline × data × expert parallel) "
                         "and rank them by tokens/s a device at the point that meets the targets")
    se.add_argument("--json", action="store_true", help="print JSON")
    se.add_argument("--out", metavar="FILE.{svg,json}",
                    help="also draw the plan: tokens/s a device against tokens/s a user, one point a batch "
                         "(SVG, or the picture as data in JSON)")
    se.add_argument("--theme", choices=("light", "dark", "contrast"), default="light",
                    help="the picture's theme (default light)")


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from explorer.core.analysis.serving import plan
    from explorer.core.model.presets import load_models

    models = load_models()
    model = model_of(args, models)
    params = workload_params(args, model, err)
    hardware = restrict_cores(open_catalog(err)[args.hardware], params.threads)  # a CPU: its threads' cores
    if args.devices is not None:
        return _search(args, model, models, hardware, params, out, err)
    result = plan(model, params, hardware, args.prompt, args.output,
                  args.ttft_target, args.tpot_target, args.price_per_device_hour, args.kv_block,
                  _speculation(args, models), args.prefix_hit, args.prefill_chunk, args.kv_offload * 2**30,
                  args.arrival_rate)
    if args.out:
        _draw(result, model, hardware, args)
    if args.json:
        json.dump(_as_json(result, model, hardware), out, indent=1)
        out.write("\n")
        return 0
    _print(result, model, hardware, out)
    return 0


def _search(args: argparse.Namespace, model, models, hardware, params, out: TextIO, err: TextIO) -> int:
    """``--devices N``: every split planned, best first."""
    from explorer.core.analysis.serving_layouts import search
    from explorer.core.model.workload import WorkloadError
    from explorer.core.units import format_number

    split = [flag for flag in ("tp", "pp", "dp", "ep") if getattr(args, flag, 1) not in (None, 1)]
    if split or args.arrival_rate is not None:
        raise WorkloadError(f"--devices searches the splits itself: leave out --{split[0]}" if split
                            else "--arrival-rate plans one layout's load: give its --tp/--pp, not --devices")
    ranked = search(model, params, hardware, args.devices, args.prompt,
                    args.output, ttft_target_s=args.ttft_target, tpot_target_s=args.tpot_target,
                    price_per_device_hour=args.price_per_device_hour, block=args.kv_block,
                    speculation=_speculation(args, models), prefix_hit=args.prefix_hit,
                    prefill_chunk=args.prefill_chunk, kv_offload_bytes=args.kv_offload * 2**30)
    served = [s for s in ranked if s.plan is not None and s.plan.points]
    if args.out and not served:
        raise WorkloadError(f"nothing to draw in {args.out}: no split of {args.devices} devices can serve")
    if args.out:  # the best layout, and up to three more as curves beside it
        _draw(served[0].plan, model, hardware, args, served[0].name,
              tuple((s.name, s.plan) for s in served[1:4]))
    if args.json:
        json.dump({"model": model.id, "hardware": hardware.id, "devices": args.devices,
                   "layouts": [{"name": s.name, **dict(zip(("tp", "pp", "dp", "ep"), s.split, strict=True)),
                                "error": s.error or None,
                                "plan": None if s.plan is None else _as_json(s.plan, model, hardware)}
                               for s in ranked]}, out, indent=1)
        out.write("\n")
        return 0
    rows = [_layout_row(s) for s in ranked]
    print(format_table(("layout", "KV wall", "batch", "tokens/s a device", "tokens/s a user", "TPOT", "TTFT",
                        "$/1M tokens", "why no larger batch / why not"), rows, right=(1, 2, 3, 4, 5, 6, 7)),
          file=out)
    best = ranked[0] if ranked and ranked[0].rate > 0 else None
    devices = f"{args.devices} device{'s' if args.devices > 1 else ''}"
    if best is not None:
        assert best.plan is not None and best.plan.chosen is not None  # its rate is above 0
        verdict = (f"Best: {best.name}, {format_number(best.rate)} tokens/s a device at batch "
                   f"{best.plan.chosen.batch:,}.")
    elif all(s.plan is None for s in ranked):
        verdict = f"No split of {devices} can serve {model.name}: see why in the last column."
    else:
        verdict = f"No split of {devices} serves {model.name} within the targets."
    if any(s.lower_bound and s.plan is not None for s in ranked):
        verdict += (" Splits with a pipeline (PP) are costed one batch at a time: their tokens/s are "
                    "lower bounds.")
    print("\n" + verdict, file=out)
    return 0


def _layout_row(s) -> tuple[str, ...]:
    """A split's row: its chosen point, or why it has none."""
    from explorer.core.units import format_number

    c = s.plan.chosen if s.plan is not None else None
    if c is None:
        wall = "–" if s.plan is None else f"{s.plan.kv_wall_sequences:,}"
        return (s.name, wall, "–", "–", "–", "–", "–", "–", s.error or "no batch meets the targets")
    cost = "–" if c.cost_per_million_tokens is None else f"${c.cost_per_million_tokens:.3f}"
    return (s.name, f"{s.plan.kv_wall_sequences:,}", f"{c.batch:,}",
            format_number(c.tokens_per_s_per_device), format_number(c.tokens_per_s_per_user),
            f"{c.tpot_s * 1e3:.2f} ms", f"{c.ttft_s * 1e3:.1f} ms", cost, c.limited_by)


def _draw(result, model, hardware, args: argparse.Namespace, name: str = "", others: tuple = ()) -> None:
    """Write the plan's picture to ``args.out`` (SVG, or its data as JSON): with a layout
    search, the best layout (``name``) and ``others`` as curves beside it."""
    from pathlib import Path

    from explorer.chart.data import chart_data
    from explorer.chart.elements import Page
    from explorer.chart.serving_chart import serving_chart
    from explorer.chart.svg import chart_svg
    from explorer.core.files.atomic import write_text_atomic
    from explorer.core.model.workload import WorkloadError

    suffix = Path(args.out).suffix.lower()
    if suffix not in (".svg", ".json"):
        raise WorkloadError(f"--out draws .svg or .json, not {suffix or 'a file without a suffix'!r}")
    if not result.points:
        raise WorkloadError(f"nothing to draw in {args.out}: {result.notes[-1]}")
    title = f"Serving {model.name} on {result.devices} × {hardware.name}"
    chart = serving_chart(result, Page.slide(1600, 900), args.theme, title, args.tpot_target, others=others,
                          name=name)
    write_text_atomic(args.out, chart_svg(chart, False, title) if suffix == ".svg"
                      else json.dumps(chart_data(chart), indent=1) + "\n")


def _speculation(args: argparse.Namespace, models):
    from explorer.core.analysis.speculation import Speculation
    from explorer.core.model.workload import WorkloadError

    if args.draft is None:
        if args.acceptance is not None:
            raise WorkloadError("--acceptance is the draft's: name the draft model with --draft")
        return None
    if args.acceptance is None:
        raise WorkloadError("--draft needs --acceptance: the chance each drafted token is accepted "
                            "(e.g. 0.7)")
    from explorer.core.model.hf_config import chosen_model

    return Speculation(chosen_model(models, args.draft), args.draft_tokens, args.acceptance)


def _as_json(result, model, hardware) -> dict:
    from explorer.core.analysis.energy_validation import estimate_source

    def point(p) -> dict:
        return {"batch": p.batch, "tokens_per_s_per_device": p.tokens_per_s_per_device,
                "tokens_per_s_per_user": p.tokens_per_s_per_user, "ttft_s": p.ttft_s, "tpot_s": p.tpot_s,
                "tpot_low_s": None if p.tpot_band_s is None else p.tpot_band_s[0],
                "tpot_high_s": None if p.tpot_band_s is None else p.tpot_band_s[1],
                "kv_wall_sequences": result.kv_wall_sequences,
                "cost_per_million_tokens": p.cost_per_million_tokens, "joules_per_token": p.joules_per_token,
                "joules_per_token_estimate": p.joules_per_token_estimate, "limited_by": p.limited_by}

    estimated = any(p.joules_per_token_estimate is not None for p in result.points)

    return {"model": model.id, "hardware": hardware.id, "devices": result.devices,
            "kv_wall_sequences": result.kv_wall_sequences, "offloaded_sequences": result.offloaded_sequences,
            "times": result.time_source, "efficiency": result.efficiency,
            "joules_per_token_source": "at TDP (TDP ÷ tokens/s), no bound" if hardware.specs.tdp_w else None,
            "joules_per_token_estimate_source": estimate_source() if estimated else None,
            "notes": list(result.notes), "chosen": None if result.chosen is None else point(result.chosen),
            "points": [point(p) for p in result.points]}


def _print(result, model, hardware, out: TextIO) -> None:
    from explorer.core.units import format_number
    from explorer.core.words.serving_plan import plan_sentences

    rows = [(f"{p.batch:,}", f"{p.tpot_s * 1e3:.2f} ms", f"{p.ttft_s * 1e3:.1f} ms",
             format_number(p.tokens_per_s_per_device), format_number(p.tokens_per_s_per_user),
             "–" if p.cost_per_million_tokens is None else f"${p.cost_per_million_tokens:.3f}",
             "–" if p.joules_per_token is None else f"{p.joules_per_token:.3g} J",
             "–" if p.joules_per_token_estimate is None else f"{p.joules_per_token_estimate:.3g} J")
            for p in result.points]
    print(format_table(("batch", "TPOT", "TTFT", "tokens/s a device", "tokens/s a user", "$/1M tokens",
                        "J/token at TDP", "J/token (estimate)"), rows, right=tuple(range(8))), file=out)
    sentences = plan_sentences(result, model.name, hardware)
    print("\n" + sentences[0], file=out)
    for sentence in sentences[1:]:
        print(sentence, file=out)
