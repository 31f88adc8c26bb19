"""Reading a workload (a model and the step's parameters) from a session or workload file,
and the file schema both share.

Schema 2 (this version) differs from schema 1 in two parameters, and a schema-1 file is
read as it was meant: ``causal`` was off unless written (it is on by default now), and
``recompute`` was true or false (now none, selective or full; true is full).
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from explorer import defaults
from explorer.core.files.datafile import DataFileError, Fields, check_schema, load_yaml
from explorer.core.files.registry import UnknownIdError
from explorer.core.model.custom import Layer, read_layers
from explorer.core.model.gguf_models import KEY as GGUF_KEY
from explorer.core.model.gguf_models import is_reference
from explorer.core.model.hf_config import CONFIG_MODEL, LISTED_PREFIXES, spec_from_config, stored_precision
from explorer.core.model.models import TransformerSpec
from explorer.core.model.parameters import BY_NAME, PARAMETERS, Kind, Parameter
from explorer.core.model.workload import WorkloadError, WorkloadParams

SCHEMA = 2
OLDEST_SCHEMA = 1  # still read (see the module's note)
CUSTOM = "custom"  # the model id of the user's own layer stack


def read_schema(top: Fields) -> int:
    """The file's schema: this one or an older one still read (else a DataFileError)."""
    version = top.integer("schema")
    if not OLDEST_SCHEMA <= version <= SCHEMA:
        check_schema(top, version, SCHEMA)  # says whether a newer or an older app wrote it
    return version


class Workload(NamedTuple):
    """A workload file's (or a session's) model and parameters."""

    model: str
    params: WorkloadParams
    layers: tuple[Layer, ...] = ()  # a custom stack's
    config: str = ""  # a config.json's content (canonical JSON)


def read_param(fields: Fields, parameter: Parameter, version: int = SCHEMA) -> Any:
    """One parameter's value from a session's workload or a scene's step (its default
    when absent), checked against its row of the parameter table."""
    name, kind = parameter.name, parameter.kind
    if version == 1 and name == "causal":
        return fields.flag(name, default=False)
    if version == 1 and name == "recompute":
        return "full" if fields.flag(name, default=False) else "none"
    if kind is Kind.CHOICE:
        return fields.text(name, required=False, choices=parameter.choices, default=parameter.default)
    if kind is Kind.FLAG:
        return fields.flag(name, default=parameter.default)
    if kind is Kind.COUNT:
        value = fields.integer(name, required=False, default=parameter.default,
                               minimum=int(parameter.minimum))
        if value > parameter.maximum:
            raise fields.error(name, f"must be at most {int(parameter.maximum):,}, got {value:,}")
        return value
    value = fields.number(name, required=False, default=parameter.default)
    if not parameter.minimum <= value <= parameter.maximum:
        raise fields.error(name, f"must be a share between {parameter.minimum:g} and "
                                 f"{parameter.maximum:g}, got {value}")
    return value


def _read_params(fields: Fields, version: int) -> WorkloadParams:
    kwargs = {parameter.name: read_param(fields, parameter, version) for parameter in PARAMETERS}
    try:
        return WorkloadParams(**kwargs)
    except WorkloadError as exc:
        raise fields.error("workload", str(exc)) from None


def listed_model(ident: str, model_ids: Container[str] | None) -> TransformerSpec | None:
    """The model a config.json listed as ``ident`` describes: an "hf-" id that is not one of
    ``model_ids`` (the presets'), found as ``--model`` finds it (``hf_config.chosen_model``:
    the shipped configs, then the Hugging Face cache); None for any other id. An
    UnknownIdError when no file is listed under it."""
    if not ident.startswith(LISTED_PREFIXES) or (model_ids is not None and ident in model_ids):
        return None
    from explorer.core.model.local_models import find_model  # (it reads the cache: only when asked)

    return find_model(ident, list(model_ids) if isinstance(model_ids, Iterable) else [])


def gone(ident: str, instead: str = "") -> str:
    """What a file naming the listed model ``ident`` says when no config.json has its id now."""
    files = ("no GGUF file found on this machine" if ident.startswith("gguf-") else
             "no config.json shipped with the app or in the Hugging Face cache")
    text = f"the model {ident!r} is no longer listed: {files} has that id (see: roofline-explorer models)"
    return text + (f"; {instead}" if instead else "; download the model again or open its config.json "
                   "(--model-config, or File › Open model config…)")


def _gguf_reference(raw: Mapping[str, object], notes: list[str] | None) -> str:
    """A GGUF file's model as a session refers to it (``gguf_models``): read from the file
    as it is now, a change since the session was saved noted."""
    from explorer.core.model.gguf_models import changed, spec_from_reference

    spec = spec_from_reference(raw, "model_config")
    moved = changed(raw)
    if moved and notes is not None:
        notes.append(moved)
    return spec.config


def read_workload(top: Fields, model_ids: Container[str] | None, version: int = SCHEMA,
                  notes: list[str] | None = None) -> Workload:
    """The ``workload`` mapping of a session's (or workload file's) fields. A model named by
    an "hf-" id (``listed_model``) is read as its config.json's content, with the file's weight
    precision where no precision is given (``stored_precision``), as ``--model`` reads it. Such an
    id no file has now: with ``notes``, the default model with a note saying so (the rest
    of the file kept), else a DataFileError naming the id."""
    workload = top.child(top.mapping("workload"), "workload")
    model = workload.text("model")
    try:
        listed = listed_model(model, model_ids)
    except UnknownIdError:
        if notes is None:
            raise workload.error("model", gone(model)) from None
        notes.append(gone(model, f"showing {defaults.MODEL} instead: download the model again or open its "
                                 f"config.json (File › Open model config…), then choose it"))
        model, listed = defaults.MODEL, None
    if listed is None and model_ids is not None and model not in model_ids and \
            model not in (CUSTOM, CONFIG_MODEL):
        raise workload.error("model", f"unknown model {model!r}")
    params = _read_params(workload, version)
    if listed is not None and params.dtype == BY_NAME["dtype"].default:  # as --model reads it
        params = stored_precision(params, listed)
    layers = read_layers(workload) if workload.has("layers") else ()
    if model == CUSTOM and not layers:
        raise workload.error("layers", "is missing (the custom model needs its layers)")
    config = ""
    if model == CONFIG_MODEL:
        raw = workload.mapping("model_config")
        try:
            config = _gguf_reference(raw, notes) if is_reference(raw) else \
                spec_from_config(raw, "model_config").config
        except DataFileError as exc:
            where = f"model_config.{exc.field}" if exc.field else "model_config"
            if notes is None or exc.field != GGUF_KEY:
                raise workload.error(where, exc.reason) from None
            notes.append(f"{exc.reason}; showing {defaults.MODEL} instead")
            model = defaults.MODEL
    workload.finish()
    if listed is not None:
        return Workload(CONFIG_MODEL, params, layers, listed.config)
    return Workload(model, params, layers, config)


def load_workload(path: str | Path, model_ids: Container[str] | None = None,
                  text: str | None = None) -> Workload:
    """Read a workload file (model, parameters, a custom stack's layers or a config.json's
    content), validated like a session; an "hf-" id is read as its config.json's content."""
    top = Fields(load_yaml(path, text), path, None)
    version = read_schema(top)
    workload = read_workload(top, model_ids, version)
    top.finish()
    return workload
