"""``explain``, ``scenes`` and ``lab``: the app's words, headless, with the claims behind them.

- ``explain`` prints the Explain panel's paragraphs for one state and, under each, the
  claims it makes (what was recomputed, and whether it holds);
- ``scenes list | show ID [--step N] | check [FILE…]`` prints a guided scene's captions and
  their checked claims; ``check`` validates scene files (the shipped ones, or a lecturer's)
  and exits 2 naming the file, scene, step and claim that fails;
- ``lab --from CPU --to GPU`` prints the design lab's stages: each stage's device (where its
  roofs come from, what is derived), the step time and the stage's text.

No Qt: these run wherever ``analyze`` runs.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path
from typing import TextIO

from explorer import defaults
from explorer.commands.common import (
    add_model_arguments,
    add_workload_arguments,
    count_type,
    model_of,
    open_catalog,
    warn_skipped,
    workload_params,
)
from explorer.core.hardware.cores import restrict_cores
from explorer.core.units import format_bytes, format_si, format_time, rate_unit
from explorer.core.words.sentences import Explanation

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 2, 2


class UsageError(Exception):
    """Options that do not describe something to show (exit 2)."""


def add_parsers(sub) -> None:
    ex = sub.add_parser("explain", help="the Explain panel's text for a state, with its claims",
                        description="Print what the Explain panel says about a workload on one or "
                                    "more devices (the first is the primary one), with the numbers "
                                    "behind every sentence and whether each claim holds.")
    ex.add_argument("--hardware", required=True, metavar="ID[,ID…]",
                    help="devices, comma-separated; the first is primary (a CPU and a GPU are compared)")
    add_model_arguments(ex, required=True, help="model id (see: analyze --help)")
    add_workload_arguments(ex)
    ex.add_argument("--op", metavar="NAME", help="explain this op too (e.g. down_proj)")
    ex.add_argument("--json", action="store_true", help="print JSON")

    sc = sub.add_parser("scenes", help="list, show or check guided scenes")
    sc_sub = sc.add_subparsers(dest="scenes_command", metavar="ACTION", required=True)
    listing = sc_sub.add_parser("list", help="one line per scene")
    listing.add_argument("--json", action="store_true")
    show = sc_sub.add_parser("show", help="a scene's captions, states and checked claims")
    show.add_argument("id", metavar="ID")
    show.add_argument("--step", type=count_type(1000), metavar="N", help="only step N (from 1)")
    show.add_argument("--json", action="store_true")
    check = sc_sub.add_parser("check", help="validate scene files and check every claim",
                              description="Load scene files (default: the shipped ones), fill in "
                                          "every caption and check each claim against the "
                                          "analysis. Exits 2 naming the file, scene, step and "
                                          "claim that fails. Without FILE: the shipped scenes "
                                          "and yours (the data folder's scenes/).")
    check.add_argument("files", nargs="*", metavar="FILE")

    lab = sub.add_parser("lab", help="the design lab's stages, from a CPU to a GPU",
                         description="Print the stages of the design lab (From CPU to GPU): each "
                                     "stage's device, the decode step's time and the stage's text.")
    lab.add_argument("--from", dest="cpu", default=defaults.LAB_CPU, metavar="CPU_ID")
    lab.add_argument("--to", dest="gpu", default=defaults.LAB_GPU, metavar="GPU_ID",
                     help="a GPU with a measured memory latency (Little's law needs it)")
    add_model_arguments(lab, required=False, help=f"model id (default {defaults.MODEL})")
    lab.add_argument("--context", type=count_type(1 << 22), default=1024)
    lab.add_argument("--batch", type=count_type(1 << 20), default=64, help="the batching stage's batch")
    lab.add_argument("--in-flight", default="16 KiB", metavar="SIZE",
                     help="bytes in flight at the latency-hiding stage (default 16 KiB)")
    lab.add_argument("--stage", type=int, metavar="N", help="only stage N (from 0)")
    lab.add_argument("--json", action="store_true")


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        if args.command == "explain":
            return _explain(args, out, err)
        if args.command == "scenes":
            return _scenes(args, out, err)
        return _lab(args, out, err)
    except UsageError as exc:
        print(f"roofline-explorer: error: {exc}", file=err)
        return EXIT_USAGE


# -- printing ---------------------------------------------------------------------------------

def _claim_lines(e: Explanation) -> list[str]:
    """One line per claim (what it says, its numbers, whether it holds), then any other
    problem of the text (a claimed phrase missing, a direction word no claim backs)."""
    lines, failed = [], set()
    for claim in e.claims + e.declared:
        problem = claim.check()
        if problem:
            failed.add(f"{claim.kind}: {problem}")
        shown = f" \u201c{claim.phrase}\u201d" if claim.phrase else ""
        numbers = ", ".join(f"{k}={_short(v)}" for k, v in claim.numbers().items() if v is not None)
        verdict = "ok" if problem is None else f"FAILS: {problem}"
        lines.append(f"    - {claim.kind}{shown}: {numbers} [{verdict}]")
    return lines + [f"    ! {p}" for p in e.problems() if p not in failed]


def _short(value) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def _print_explanations(explanations: list[Explanation], out: TextIO) -> None:
    for e in explanations:
        print(e.title, file=out)
        print(f"  {e.text}", file=out)
        print("\n".join(_claim_lines(e)), file=out)
        print(file=out)


def _explanation_dict(e: Explanation) -> dict:
    return {**e.to_dict(), "problems": e.problems()}


# -- explain ----------------------------------------------------------------------------------

def _explain(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from explorer.core.model.presets import load_models
    from explorer.core.words.explain import explain_state

    catalog = open_catalog(err)
    ids = [i.strip() for i in args.hardware.split(",") if i.strip()]
    if not ids or len(ids) > 4 or len(set(ids)) != len(ids):
        raise UsageError("--hardware takes one to four different device ids, comma-separated")
    model = model_of(args, load_models())
    params = workload_params(args, model, err)
    devices = [restrict_cores(catalog[i], params.threads) for i in ids]  # a CPU: the cores its threads use
    explanations = explain_state(model, params, devices, args.op)
    if args.op and not explanations[0].title.endswith(args.op):
        from explorer.core.analysis.analysis import analyze

        a = analyze(model, params, devices[0])
        names = [o.name for o, flops in zip(a.ops, a.flops, strict=True) if flops > 0]
        raise UsageError(f"{model.name} has no op {args.op!r} that computes (ops: {', '.join(names)})")
    if args.json:
        plain = {**vars(params), "phase": params.phase.value}
        json.dump({"hardware": ids, "model": model.id, "params": plain,
                   "explanations": [_explanation_dict(e) for e in explanations]}, out, indent=1)
        out.write("\n")
    else:
        from explorer.core.analysis.report_words import step_words

        print(f"{model.name} on {', '.join(d.name for d in devices)}: {step_words(model, params)}, "
              f"{params.dtype}\n", file=out)
        _print_explanations(explanations, out)
    return EXIT_OK if not any(e.problems() for e in explanations) else EXIT_FAILED


# -- scenes -----------------------------------------------------------------------------------

def _scene_context(err: TextIO):
    from explorer.core.model.presets import load_models
    from explorer.core.words.why import load_topics

    catalog, models = open_catalog(err), load_models()
    return catalog, models, {t.id for t in load_topics(catalog, models=models)}


def _state_dict(scene, index: int) -> dict:
    session = scene.session_at(index)
    return {"hardware": list(session.hardware), "workload": session.workload_dict(),
            "what_if": {k: v.to_dict() for k, v in session.what_ifs},
            "selected_op": session.selected_op, "topic": scene.topic_at(index),
            "view": scene.view_at(index).value}


def _scenes(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from explorer.core.words.scenes import open_scenes

    catalog, models, topics = _scene_context(err)
    if args.scenes_command == "check":
        return _check_scenes(args.files, catalog, models, topics, out, err)
    scenes = open_scenes(catalog, models)
    warn_skipped(scenes.skipped, err)
    if args.scenes_command == "list":
        rows = [{"id": s.id, "title": s.title, "steps": len(s.steps), "summary": s.summary}
                for s in scenes.values()]
        if args.json:
            json.dump(rows, out, indent=1)
            out.write("\n")
        else:
            for r in rows:
                print(f"{r['id']:<24} {r['steps']} steps  {r['title']}", file=out)
        return EXIT_OK
    scene = scenes[args.id]
    if args.step and args.step > len(scene.steps):
        raise UsageError(f"scene {scene.id!r} has steps 1 to {len(scene.steps)}, not {args.step}")
    steps = [args.step - 1] if args.step else range(len(scene.steps))
    explained = [(i, scene.explain_step(i, catalog, models)) for i in steps]
    if args.json:
        json.dump({"id": scene.id, "title": scene.title, "summary": scene.summary,
                   "steps": [{"step": i + 1, "state": _state_dict(scene, i), **_explanation_dict(e)}
                             for i, e in explained]}, out, indent=1)
        out.write("\n")
    else:
        print(f"{scene.title} [{scene.id}]\n{scene.summary}\n", file=out)
        for i, e in explained:
            s = _state_dict(scene, i)
            print(f"Step {i + 1}/{len(scene.steps)}: {', '.join(s['hardware'])}; "
                  f"{', '.join(f'{k} {v}' for k, v in s['workload'].items())}"
                  + (f"; what-if {s['what_if']}" if s["what_if"] else ""), file=out)
            print(f"  {e.text}", file=out)
            print("\n".join(_claim_lines(e)), file=out)
            print(file=out)
    return EXIT_OK if not any(e.problems() for _, e in explained) else EXIT_FAILED


def _check_scenes(files, catalog, models, topics, out: TextIO, err: TextIO) -> int:
    from explorer.core.files.datafile import DataFileError
    from explorer.core.files.userfiles import yaml_files
    from explorer.core.words.scenes import load_scene_file
    from explorer.paths import resource_path, user_file

    paths = [Path(f) for f in files] or [*sorted(resource_path("scenes").glob("*.yaml")),
                                          *yaml_files(user_file("scenes"))]
    failures = checked = 0
    for path in paths:
        try:
            scenes = load_scene_file(path, catalog, models, topics)
        except (DataFileError, FileNotFoundError, OSError) as exc:
            print(f"{path}: {exc}", file=err)
            failures += 1
            continue
        for scene in scenes:
            for index in range(len(scene.steps)):
                checked += 1
                for problem in scene.explain_step(index, catalog, models).problems():
                    failures += 1
                    print(f"{path}: scene {scene.id!r}, step {index + 1}: {problem}", file=err)
    verdict = "all claims hold" if not failures else f"{failures} problem(s)"
    print(f"checked {checked} step(s) in {len(paths)} file(s): {verdict}", file=out)
    return EXIT_OK if not failures else EXIT_FAILED


# -- lab --------------------------------------------------------------------------------------

def _device_dict(lab) -> dict:
    hw = lab.shown()
    return {
        "parts": lab.parts(),
        "roofs": [{"label": p.label, "flops_per_s": p.flops_per_s, "derived": p.provenance.derived,
                   "source": p.provenance.url} for p in hw.peaks],
        "memory": {"level": hw.main_memory.name, "bandwidth_bytes_per_s": hw.bandwidth_bytes_per_s,
                   "capacity_bytes": hw.memory_capacity_bytes,
                   "derived": hw.main_memory.provenance.derived,
                   "formula": hw.main_memory.provenance.formula},
        "derived": list(hw.derived_fields),
    }


def _lab(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from explorer.core.hardware.littles_law import NoLatencyError
    from explorer.core.model.presets import load_models
    from explorer.core.units import BYTES, UnitError, parse_quantity
    from explorer.core.words.design_lab import STAGES, Lab

    catalog, models = open_catalog(err), load_models()
    try:
        in_flight = parse_quantity(args.in_flight, BYTES)
        model = model_of(args, models, defaults.MODEL)
        if model.item_unit != "tokens":
            raise UsageError(f"the lab decodes text: {model.name} is not a language model")
        lab = Lab(catalog[args.cpu], catalog[args.gpu], model.id, model, context=args.context,
                  in_flight_bytes=in_flight, batch=args.batch)
    except (UnitError, NoLatencyError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    if args.stage is not None and not 0 <= args.stage < len(STAGES):
        raise UsageError(f"stages run from 0 to {len(STAGES) - 1}, not {args.stage}")
    stages = [args.stage] if args.stage is not None else range(len(STAGES))
    rows = []
    for index in stages:
        at = replace(lab, stage=index)
        e = at.explanation()
        rows.append({"stage": index, "title": STAGES[index].title, "device": _device_dict(at),
                     "time_s": at.analysis().totals.time_s, **_explanation_dict(e)})
    if args.json:
        json.dump({"from": args.cpu, "to": args.gpu, "model": model.id, "stages": rows}, out, indent=1)
        out.write("\n")
    else:
        for row, index in zip(rows, stages, strict=True):
            d = row["device"]
            roofs = ", ".join(f"{r['label']} {format_si(r['flops_per_s'], rate_unit(r['label'].split()[0]))}"
                              + (" (derived)" if r["derived"] else "") for r in d["roofs"])
            memory = d["memory"]
            print(f"Stage {index}: {row['title']}", file=out)
            print(f"  device: compute from {d['parts']['compute']}, memory from {d['parts']['memory']}"
                  + (f", what-if {d['parts']['what_if']}" if d["parts"]["what_if"] else ""), file=out)
            print(f"  roofs: {roofs}", file=out)
            print(f"  memory: {memory['level']} {format_si(memory['bandwidth_bytes_per_s'], 'B/s')}"
                  + (f" (derived: {memory['formula']})" if memory["derived"] else "")
                  + f", {format_bytes(memory['capacity_bytes'])}", file=out)
            print(f"  derived: {', '.join(d['derived']) or 'nothing'}", file=out)
            print(f"  step: {format_time(row['time_s'])}", file=out)
            print(f"  {row['text']}", file=out)
            e = replace(lab, stage=index).explanation()
            print("\n".join(_claim_lines(e)), file=out)
            print(file=out)
    failed = any(row["problems"] for row in rows)
    return EXIT_OK if not failed else EXIT_FAILED
