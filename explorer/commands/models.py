"""``roofline-explorer models``: every model the app can analyse here: the presets, the
config.json files shipped with it, the models already in this machine's Hugging Face
cache (``core.model.hf_cache``; broken entries listed with their reason) and the GGUF files
of LM Studio, Ollama and the folders the user names (``core.model.gguf_models``), each
with its weights' bytes as the file stores them."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TextIO

from explorer.commands.texttable import format_table

FOLDERS_VARIABLE = "ROOFLINE_EXPLORER_GGUF_DIRS"  # gguf_models.FOLDERS_VARIABLE (not imported at start-up)


def add_parser(sub) -> None:
    mo = sub.add_parser("models", help="the models this machine can analyse (presets, shipped configs, "
                                       "the Hugging Face cache, GGUF files)",
                        description="List the preset models, the config.json files shipped with the app, "
                                    "those in the local Hugging Face cache ($HF_HUB_CACHE, "
                                    "$HF_HOME/hub, $XDG_CACHE_HOME/huggingface/hub or "
                                    "~/.cache/huggingface/hub) and the GGUF files of LM Studio "
                                    "(~/.cache/lm-studio/models, ~/.lmstudio/models), Ollama "
                                    "($OLLAMA_MODELS or ~/.ollama/models) and the folders "
                                    f"${FOLDERS_VARIABLE} names, read offline, each with the id "
                                    "--model takes.")
    mo.add_argument("--json", action="store_true", help="print JSON")
    mo.add_argument("--gguf-dir", metavar="DIR", action="append", default=[],
                    help="list the GGUF files under DIR too (repeatable); --model finds them when "
                         f"${FOLDERS_VARIABLE} names DIR")


def _entry(kind: str, spec, where: str, problem: str = "", weight_bytes: int = 0) -> dict:
    if spec is None:
        return {"kind": kind, "id": None, "name": where, "where": where, "parameters": None,
                "active_parameters": None, "weight_bytes": None, "problem": problem}
    total = spec.parameter_count()
    active = spec.parameter_count(active=True)
    return {"kind": kind, "id": spec.id, "name": spec.name, "where": where, "parameters": total,
            "active_parameters": active if active != total else None,
            "weight_bytes": weight_bytes or None, "problem": ""}


def entries(err: TextIO | None = None, gguf_dirs: tuple[Path, ...] = ()) -> list[dict]:
    """Every model listed, under the id ``--model`` takes; ``where``: "preset", the
    config.json's path or the GGUF file's (``weight_bytes``: its tensors', the file's own;
    ``name`` for a GGUF file: Ollama's "model:tag", else its path in the folder). A cache
    too big to read whole is said on ``err``; ``gguf_dirs``: folders of GGUF files besides."""
    from explorer.core.model.hf_cache import scan
    from explorer.core.model.local_models import gguf_models, local_models
    from explorer.core.model.presets import load_models

    presets = load_models()
    cache = scan()
    out = [_entry("preset", spec, "preset") for spec in presets.values()]
    for listed in local_models(list(presets), cache):
        out.append(_entry(listed.kind, listed.spec, str(listed.path), listed.problem))
    for listed in gguf_models(gguf_dirs):
        entry = _entry(listed.kind, listed.spec, str(listed.path), listed.problem, listed.weight_bytes)
        out.append({**entry, "name": listed.repository, "store": listed.store})
    if err is not None and cache.cut_notice():
        print(f"roofline-explorer: note: {cache.cut_notice()}", file=err)
    return out


def _say_unnamed(folders: tuple[Path, ...], err: TextIO) -> None:
    """A --gguf-dir folder that $ROOFLINE_EXPLORER_GGUF_DIRS does not name: its ids are
    listed, but --model does not look there."""
    from explorer.core.model.gguf_models import named_folders

    named = {p.resolve() for p in named_folders()}
    for folder in folders:
        if folder.resolve() not in named:
            print(f"roofline-explorer: note: --model finds the GGUF files under {folder} when "
                  f"${FOLDERS_VARIABLE} names that folder", file=err)


def _count(n: int | None) -> str:
    if not n:
        return ""
    return f"{n / 1e9:,.2f} B" if n >= 1e9 else f"{n / 1e6:,.1f} M"


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from explorer.core.units import format_bytes

    folders = tuple(Path(d).expanduser() for d in args.gguf_dir)
    listed = entries(err, folders)
    _say_unnamed(folders, err)
    if args.json:
        json.dump(listed, out, indent=1)
        out.write("\n")
        return 0
    rows = [(e["kind"], e["id"] or "-", e["name"][:48], _count(e["parameters"]),
             _count(e["active_parameters"]), format_bytes(e["weight_bytes"]) if e["weight_bytes"] else "")
            for e in listed if not e["problem"]]
    print(format_table(["kind", "id", "name", "parameters", "active", "weights"], rows), file=out)
    for e in listed:
        if e["problem"]:
            print(f"skipped: {e['problem']}", file=err)
    return 0
