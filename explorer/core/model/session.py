"""What the user is looking at, as one immutable value: a ``Session``.

Devices shown (up to four), what-if changes to their roofs, the workload, the
precisions whose roofs are drawn, loaded measurement files, a real run's profile (its
kernels, kept in the file: it reopens anywhere), and the selected op. The app
keeps a Session and replaces it on every change (undo restores an earlier one), and saves
it as YAML, validated on load like every other data file.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Container
from dataclasses import dataclass, field, replace
from enum import Enum
from functools import lru_cache
from pathlib import Path
from typing import Any, TypedDict

from explorer import defaults
from explorer.core.files.atomic import target_of, write_text_atomic
from explorer.core.files.datafile import Fields, dump_yaml, load_yaml, sealed
from explorer.core.files.registry import UnknownIdError
from explorer.core.hardware.cores import restrict_cores
from explorer.core.hardware.hardware import Hardware
from explorer.core.model.custom import CustomSpec, Layer
from explorer.core.model.gguf_models import KEY as GGUF_KEY
from explorer.core.model.hf_config import CONFIG_MODEL, spec_from_config_text
from explorer.core.model.models import ModelSpec, TransformerSpec
from explorer.core.model.parameters import PARAMETERS, saved
from explorer.core.model.profile import Profile, profile_to_dict, read_saved_profile
from explorer.core.model.what_if import WHAT_IF_RANGE, WhatIf, read_what_ifs  # noqa: F401  (re-exported)
from explorer.core.model.workload import WorkloadParams
from explorer.core.model.workload_file import (  # noqa: F401  (load_workload, Workload: re-exported)
    CUSTOM,
    SCHEMA,
    Workload,
    gone,
    listed_model,
    load_workload,
    read_schema,
    read_workload,
)
from explorer.core.units import PRECISIONS

MAX_DEVICES = 4
MAX_RESULTS_FILES = 32  # measurement files shown at once


@dataclass(frozen=True)
class Session:
    """What the window shows: devices, model, workload, what-ifs, measurements and profile
    (a session file holds one)."""

    hardware: tuple[str, ...] = (defaults.DEVICE,)
    model: str = defaults.MODEL
    params: WorkloadParams = field(default_factory=WorkloadParams)
    what_ifs: tuple[tuple[str, WhatIf], ...] = ()
    precisions: tuple[str, ...] = ()  # roofs drawn; empty: the workload's precision and fp32
    results: tuple[str, ...] = ()  # measurement files shown on the chart
    measured_roofs: bool = False  # draw roofs from the best measured rates
    selected_op: str | None = None
    custom_layers: tuple[Layer, ...] = ()  # the stack used when model is "custom"
    model_config: str = ""  # a Hugging Face config.json (canonical JSON) when model is "config"
    profile: Profile | None = None  # a real run's kernels beside the prediction (as ``kept``)
    compare: str = ""  # a model (an id `models` lists) whose whole step is drawn beside this one ("": none)
    guesses: tuple[tuple[str, tuple[float, ...]], ...] = ()  # a scene question's ("SCENE/STEP") guesses

    def __post_init__(self) -> None:
        if not self.hardware:
            raise ValueError("a session shows at least one device")
        if len(self.hardware) > MAX_DEVICES:
            raise ValueError(f"at most {MAX_DEVICES} devices can be overlaid, got {len(self.hardware)}")
        if len(self.results) > MAX_RESULTS_FILES:
            raise ValueError(f"at most {MAX_RESULTS_FILES} results files can be shown, "
                             f"got {len(self.results)}")
        if len(set(self.hardware)) != len(self.hardware):
            raise ValueError("a device is listed twice")
        if self.model == CONFIG_MODEL and not self.model_config:
            raise ValueError("the model read from a config.json needs the file's content")

    @property
    def model_spec(self):
        """The custom stack or the model read from a config.json, when the session uses one
        (else None: a preset)."""
        if self.model == CONFIG_MODEL:
            return config_spec(self.model_config)
        return CustomSpec(self.custom_layers) if self.model == CUSTOM else None

    @property
    def primary(self) -> str:
        """The device the workload's numbers (table, totals) are computed for."""
        return self.hardware[0]

    def what_if(self, ident: str) -> WhatIf:
        return dict(self.what_ifs).get(ident, WhatIf())

    def as_used(self, ident: str, hw: Hardware) -> Hardware:
        """``hw`` (the catalogue's ``ident``) as this session's workload uses it: a CPU on the
        cores of its ``threads``, then the device's what-ifs (a dragged roof is the value
        dragged to)."""
        return self.what_if(ident).apply(restrict_cores(hw, self.params.threads))

    def guesses_for(self, key: str) -> tuple[float, ...]:
        """The guesses collected for a scene's question (``questions.guess_key``)."""
        return dict(self.guesses).get(key, ())

    def with_guesses(self, key: str, values: tuple[float, ...]) -> Session:
        """The session with ``values`` as the guesses for ``key`` (none: the key is dropped)."""
        kept = tuple((k, v) for k, v in self.guesses if k != key)
        return replace(self, guesses=kept + (((key, tuple(values)),) if values else ()))

    def with_what_if(self, ident: str, what_if: WhatIf) -> Session:
        others = tuple((k, v) for k, v in self.what_ifs if k != ident)
        return replace(self, what_ifs=others + (((ident, what_if),) if what_if.active else ()))

    # -- files ---------------------------------------------------------------------------------
    def workload_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"model": self.model}
        for parameter in PARAMETERS:  # the table's order; defaults left out
            value = getattr(self.params, parameter.name)
            if value is not None and saved(parameter, value):
                out[parameter.name] = value.value if isinstance(value, Enum) else value  # YAML: plain
        if self.custom_layers:
            out["layers"] = CustomSpec(self.custom_layers).to_list()
        if self.model == CONFIG_MODEL:  # the file's content: the session opens anywhere
            out["model_config"] = json.loads(self.model_config)
        return out

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "schema": SCHEMA,
            "hardware": list(self.hardware),
            "workload": self.workload_dict(),
        }
        if self.what_ifs:
            out["what_if"] = {k: v.to_dict() for k, v in self.what_ifs}
        if self.precisions:
            out["precisions"] = list(self.precisions)
        if self.results:
            out["results"] = list(self.results)  # (``save`` writes those beside it relative)
        if self.measured_roofs:
            out["measured_roofs"] = True
        if self.selected_op:
            out["selected_op"] = self.selected_op
        if self.profile is not None:
            out["profile"] = profile_to_dict(self.profile)
        if self.compare:
            out["compare"] = self.compare
        if self.guesses:
            out["guesses"] = {key: list(values) for key, values in self.guesses}
        return out

    def save(self, path: str | Path) -> None:
        """Write atomically: a crash mid-write leaves the previous file intact. Results
        files in the session's folder (or below it) are written relative to it, so the
        folder can move as a whole."""
        data = self.to_dict()
        if self.results:  # relative to where the file lands (through the user's own link)
            folder = target_of(path).parent
            data["results"] = [_relative_to(entry, folder) for entry in self.results]
        write_text_atomic(path, sealed("session", dump_yaml(data, sort_keys=False)))


def _relative_to(entry: str, folder: Path) -> str:
    """``entry`` relative to ``folder`` when it lies in it, else as it is."""
    folder = Path(os.path.abspath(folder))
    target = Path(os.path.abspath(entry))
    return target.relative_to(folder).as_posix() if target.is_relative_to(folder) else entry


def resolved_results(entries: tuple[str, ...], folder: Path) -> tuple[str, ...]:
    """A session's ``results:`` entries as paths: relative ones are read from the session
    file's folder, not from wherever the app was started."""
    folder = Path(os.path.abspath(folder))
    return tuple(entry if Path(entry).is_absolute() else os.path.normpath(folder / entry)
                 for entry in entries)


class ModelChoice(TypedDict, total=False):
    """The keywords of ``Session`` that name a model (``model_choice``)."""

    model: str
    model_config: str


def model_choice(spec: ModelSpec | CustomSpec) -> ModelChoice:
    """The session fields that name the model ``spec``: its id, or, for a model read from a
    config.json, the file's content (a session carries it, not a path)."""
    config = getattr(spec, "config", "")
    return {"model": CONFIG_MODEL, "model_config": config} if config else {"model": spec.id}


@lru_cache(maxsize=8)
def config_spec(text: str) -> TransformerSpec:
    """The model of a session's ``model_config``: a config.json's content, or a GGUF file's
    reference (``gguf_models``: the file read again)."""
    origin = "the session's model config"
    if f'"{GGUF_KEY}"' in text:
        from explorer.core.model.gguf_models import is_reference, spec_from_reference

        config = json.loads(text)
        if is_reference(config):
            return spec_from_reference(config, origin)
    return spec_from_config_text(text, origin)


def read_ids(fields: Fields, name: str, known: Container[str] | None,
             required: bool = True) -> tuple[str, ...]:
    value = fields.raw(name, required=required)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise fields.error(name, "expected a list of ids")
    if known is not None:
        for ident in value:
            if ident not in known:
                broken = next((s for s in getattr(known, "skipped", ()) if ident in s.ids), None)
                raise fields.error(name, f"unknown id {ident!r}" if broken is None else
                                   f"your {broken.what} {ident!r} could not be loaded ({broken.describe()})")
    return tuple(value)


def save_workload(path: str | Path, session: Session) -> None:
    """Save only the workload (model and parameters) of ``session``."""
    write_text_atomic(path, sealed("workload", dump_yaml(
        {"schema": SCHEMA, "workload": session.workload_dict()}, sort_keys=False)))


def load_session(path: str | Path, hardware_ids: Container[str] | None = None,
                 model_ids: Container[str] | None = None,
                 text: str | None = None, notes: list[str] | None = None) -> Session:
    """Read and validate a session file. ``hardware_ids`` and ``model_ids`` (when given)
    are the ids that exist, so a session naming a deleted device fails with its name. A
    model named by an "hf-" id is read as its config.json (``read_workload``); with
    ``notes``, one whose file is gone leaves a note, the rest of the session kept."""
    data = load_yaml(path, text)
    top = Fields(data, path, None)
    version = read_schema(top)
    session = read_session(top, hardware_ids, model_ids, version, notes)
    top.finish()
    if session.results:  # beside the file itself, when it was opened through a link
        folder = Path(os.path.realpath(path)).parent
        session = replace(session, results=resolved_results(session.results, folder))
    return session


def _read_compare(top: Fields, model_ids: Container[str] | None, notes: list[str] | None) -> str:
    """The compared model's id: a preset's, or one ``models`` lists ("hf-", its config.json
    found now); one whose file is gone is dropped with a note (with ``notes``)."""
    compare = top.text("compare", required=False) or ""
    try:
        listed = listed_model(compare, model_ids)
    except UnknownIdError:
        if notes is None:
            raise top.error("compare", gone(compare)) from None
        notes.append(gone(compare, "nothing is compared: choose another model to compare with"))
        return ""
    if compare and listed is None and model_ids is not None and compare not in model_ids:
        raise top.error("compare", f"unknown model {compare!r}: an id `models` lists (see: roofline-explorer "
                                   f"models)")
    return compare


MAX_GUESSES = 30  # per question (``questions.MAX_GUESSES``)
MAX_QUESTIONS = 1000  # questions with guesses in one session


def _read_guesses(top: Fields) -> tuple[tuple[str, tuple[float, ...]], ...]:
    """``guesses: {SCENE/STEP: [number, …]}`` (absent in files written before questions)."""
    raw = top.raw("guesses", required=False)
    if raw is None:
        return ()
    if not isinstance(raw, dict) or len(raw) > MAX_QUESTIONS:
        raise top.error("guesses", f"expected a mapping of at most {MAX_QUESTIONS} SCENE/STEP keys to lists "
                                   "of numbers")
    out = []
    for key, values in raw.items():
        if not isinstance(key, str) or len(key) > MAX_OP_NAME or not isinstance(values, list) \
                or len(values) > MAX_GUESSES or not all(isinstance(v, int | float) and not isinstance(v, bool)
                                                        and math.isfinite(v) and v > 0 for v in values):
            raise top.error("guesses", f"{key!r}: expected at most {MAX_GUESSES} numbers above zero")
        out.append((key, tuple(float(v) for v in values)))
    return tuple(out)


MAX_OP_NAME = 200  # an op's name; a longer "selected_op" is a damaged file, not a choice


def read_session(top: Fields, hardware_ids: Container[str] | None = None,
                 model_ids: Container[str] | None = None, version: int = SCHEMA,
                 notes: list[str] | None = None) -> Session:
    """A session from the fields of a mapping (a session file's, or a scene's start); with
    ``notes``, a listed model ("hf-" id) whose config.json is gone is noted there, not an
    error (``read_workload``; a compared one is dropped)."""
    hardware = read_ids(top, "hardware", hardware_ids)
    model, params, layers, config = read_workload(top, model_ids, version, notes)
    what_ifs = read_what_ifs(top, hardware_ids)
    precisions = read_ids(top, "precisions", set(PRECISIONS), required=False)
    results = read_ids(top, "results", None, required=False)
    measured_roofs = top.flag("measured_roofs")
    selected = top.text("selected_op", required=False)
    profile = read_saved_profile(top.child(top.raw("profile"), "profile")) if top.has("profile") else None
    compare = _read_compare(top, model_ids, notes)
    guesses = _read_guesses(top)
    if selected is not None and len(selected) > MAX_OP_NAME:
        raise top.error("selected_op", f"expected an op's name (at most {MAX_OP_NAME} characters), "
                                       f"got {len(selected):,} characters")
    try:
        return Session(hardware=hardware, model=model, params=params, what_ifs=what_ifs,
                       precisions=precisions, results=results, measured_roofs=measured_roofs,
                       selected_op=selected, custom_layers=layers, model_config=config, profile=profile,
                       compare=compare, guesses=guesses)
    except ValueError as exc:
        raise top.error("results" if len(results) > MAX_RESULTS_FILES else "hardware", str(exc)) from None
