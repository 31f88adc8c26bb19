"""``roofline-explorer models``: every model the app can analyse here: the presets, the
config.json files shipped with it, and the models already in this machine's Hugging Face
cache (``core.model.hf_cache``; broken entries listed with their reason)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TextIO

from explorer.commands.texttable import format_table


def add_parser(sub) -> None:
    mo = sub.add_parser("models", help="the models this machine can analyse (presets, shipped configs, "
                                       "the Hugging Face cache)",
                        description="List the preset models, the config.json files shipped with the app "
                                    "and those in the local Hugging Face cache ($HF_HUB_CACHE, "
                                    "$HF_HOME/hub or ~/.cache/huggingface/hub), read offline.")
    mo.add_argument("--json", action="store_true", help="print JSON")


def _entry(kind: str, spec, where: str, problem: str = "") -> dict:
    if spec is None:
        return {"kind": kind, "id": None, "name": where, "where": where, "parameters": None,
                "active_parameters": None, "problem": problem}
    total = spec.parameter_count()
    active = spec.parameter_count(active=True)
    return {"kind": kind, "id": spec.id, "name": spec.name, "where": where, "parameters": total,
            "active_parameters": active if active != total else None, "problem": ""}


def entries() -> list[dict]:
    from explorer.core.model.hf_cache import cached_models
    from explorer.core.model.hf_config import read_config_file
    from explorer.core.model.presets import load_models
    from explorer.paths import resource_path

    out = [_entry("preset", spec, "preset") for spec in load_models().values()]
    for path in sorted(Path(resource_path("models", "configs")).glob("*.json")):
        out.append(_entry("shipped", read_config_file(path), str(path)))
    for cached in cached_models():
        out.append(_entry("cache", cached.spec, cached.repository if cached.spec else str(cached.path),
                          cached.problem))
    return out


def _count(n: int | None) -> str:
    if not n:
        return ""
    return f"{n / 1e9:,.2f} B" if n >= 1e9 else f"{n / 1e6:,.1f} M"


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    listed = entries()
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
