"""``roofline-explorer models``: every model the app can analyse here: the presets, the
config.json files shipped with it, and the models already in this machine's Hugging Face
cache (``core.model.hf_cache``; broken entries listed with their reason)."""

from __future__ import annotations

import argparse
import json
from typing import TextIO

from explorer.commands.texttable import format_table


def add_parser(sub) -> None:
    mo = sub.add_parser("models", help="the models this machine can analyse (presets, shipped configs, "
                                       "the Hugging Face cache)",
                        description="List the preset models, the config.json files shipped with the app "
                                    "and those in the local Hugging Face cache ($HF_HUB_CACHE, "
                                    "$HF_HOME/hub, $XDG_CACHE_HOME/huggingface/hub or "
                                    "~/.cache/huggingface/hub), read offline, each with the id "
                                    "--model takes.")
    mo.add_argument("--json", action="store_true", help="print JSON")


def _entry(kind: str, spec, where: str, problem: str = "") -> dict:
    if spec is None:
        return {"kind": kind, "id": None, "name": where, "where": where, "parameters": None,
                "active_parameters": None, "problem": problem}
    total = spec.parameter_count()
    active = spec.parameter_count(active=True)
    return {"kind": kind, "id": spec.id, "name": spec.name, "where": where, "parameters": total,
            "active_parameters": active if active != total else None, "problem": ""}


def entries(err: TextIO | None = None) -> list[dict]:
    """Every model listed, under the id ``--model`` takes; ``where``: "preset", or the
    config.json's path. A cache too big to read whole is said on ``err``."""
    from explorer.core.model.hf_cache import scan
    from explorer.core.model.local_models import local_models
    from explorer.core.model.presets import load_models

    presets = load_models()
    cache = scan()
    out = [_entry("preset", spec, "preset") for spec in presets.values()]
    for listed in local_models(list(presets), cache):
        out.append(_entry(listed.kind, listed.spec, str(listed.path), listed.problem))
    if err is not None and cache.cut_notice():
        print(f"roofline-explorer: note: {cache.cut_notice()}", file=err)
    return out


def _count(n: int | None) -> str:
    if not n:
        return ""
    return f"{n / 1e9:,.2f} B" if n >= 1e9 else f"{n / 1e6:,.1f} M"


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    listed = entries(err)
    if args.json:
        json.dump(listed, out, indent=1)
        out.write("\n")
        return 0
    rows = [(e["kind"], e["id"] or "-", e["name"][:48], _count(e["parameters"]),
             _count(e["active_parameters"])) for e in listed if not e["problem"]]
    print(format_table(["kind", "id", "name", "parameters", "active"], rows), file=out)
    for e in listed:
        if e["problem"]:
            print(f"skipped: {e['problem']}", file=err)
    return 0
