"""The quantization a checkpoint keeps in a file beside its ``config.json``: NVIDIA ModelOpt's
export writes ``hf_quant_config.json`` (the nvidia/*-FP8 and *-FP4 repositories), and a
config.json without its own ``quantization_config`` is read with that file's."""

from __future__ import annotations

import json
from pathlib import Path

from explorer.core.files.datafile import DataFileError, read_text

MODELOPT_FILE = "hf_quant_config.json"


def with_quant_file(text: str, path: Path) -> str:
    """A config.json's text with the quantization NVIDIA ModelOpt's export writes beside it
    (``hf_quant_config.json``: ``producer``, and ``quantization`` with ``quant_algo``,
    ``group_size``, ``exclude_modules``; the nvidia/*-FP8 and *-FP4 repositories) as its
    ``quantization_config`` (``quant_method`` "modelopt", read by ``quantization_formats``),
    where the config has none of its own; the text as it is otherwise."""
    beside = path.parent / MODELOPT_FILE
    if path.name.lower() != "config.json" or not beside.is_file():
        return text
    try:
        config = json.loads(text)
    except ValueError:
        return text  # (spec_from_config_text names the fault)
    if not isinstance(config, dict) or config.get("quantization_config") is not None:
        return text
    try:
        quant = json.loads(read_text(beside))
    except ValueError as exc:
        raise DataFileError(str(beside), f"is not valid JSON: {exc}") from None
    if not isinstance(quant, dict):
        raise DataFileError(str(beside), "must hold a JSON object (ModelOpt's quantization)")
    return json.dumps({**config, "quantization_config": {"quant_method": "modelopt", **quant}})
