"""The document: what the user is looking at, the only way to change it, and its history.

Qt-free, so the window, the exporter and tests use the same object: the ``Session``
shown (an immutable value, replaced on every change), the catalogue and models it refers
to, loaded measurement files, the points of a run in progress, and the selection. Every
change is one step in the history (a list of session snapshots: undo puts the previous
session back); a gesture (a whole drag) is one step however many updates it makes, and
can be cancelled. Listeners subscribe to topics with plain callbacks; ``explorer.state``
turns them into Qt signals.

Topics (and what a callback receives): ``hardware`` (devices shown, their order or
what-ifs), ``workload`` (model or parameters), ``precisions``, ``results`` (measurement
files shown), ``selection`` (the new ``Selection``), ``live`` (points of a run), ``catalog``
(devices added), ``session`` (anything above that is saved), ``message`` (a sentence on what
the last action did), ``history`` (undo/redo availability or the clean mark changed).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from explorer.core.files.datafile import DataFileError
from explorer.core.files.userfiles import Skipped
from explorer.core.hardware.catalog import Catalog
from explorer.core.model.applicability import Phase
from explorer.core.model.custom import Layer
from explorer.core.model.hf_config import CONFIG_MODEL, stored_precision
from explorer.core.model.models import ModelSpec, TransformerSpec
from explorer.core.model.parameters import BY_NAME, held_outside
from explorer.core.model.presets import ModelCatalog
from explorer.core.model.profile import Profile
from explorer.core.model.session import CUSTOM, MAX_DEVICES, Session, WhatIf, config_spec, load_session
from explorer.core.model.workload import WorkloadError, WorkloadParams
from explorer.document.derived import Derived, cached_analysis
from explorer.document.history import History, Step
from explorer.document.measurements import Measurements
from explorer.document.selection import OpRef, RoofRef, Selection
from explorer.document.topics import TOPICS, Notifier, Topic
from explorer.kernels.results import Point, Results

__all__ = ["TOPICS", "Document", "OpRef", "RoofRef", "Selection", "Topic"]


class Document(Notifier, Measurements, Derived):
    def __init__(self, catalog: Catalog, models: ModelCatalog, session: Session | None = None) -> None:
        self.catalog = catalog
        self.models = models
        self._session = session or Session()
        self._roof: RoofRef | None = None  # a selected roof (an op's selection is in the session)
        self._memo_of = None  # (session, catalogue) the memo below belongs to
        self._memo_values = {}
        self._listed = {}
        self._gesture: tuple[Session, str] | None = None
        self._results = {}
        self._live = []
        self.history = History()
        self._listeners = defaultdict(list)

    # -- reading ---------------------------------------------------------------------------------
    @property
    def session(self) -> Session:
        return self._session

    @property
    def params(self) -> WorkloadParams:
        return self._session.params

    @property
    def model(self) -> ModelSpec:
        return self._session.model_spec or self.models[self._session.model]

    @property
    def profiles(self) -> tuple[Profile, ...]:
        """The profile of a real run shown beside the prediction (the session keeps it)."""
        return (self._session.profile,) if self._session.profile is not None else ()

    def results(self) -> list[tuple[str, Results]]:
        return [(path, self._results[path]) for path in self._session.results if path in self._results]

    @property
    def live_points(self) -> list[Point]:
        return self._live

    @property
    def selection(self) -> Selection:
        if self._roof is not None:
            return self._roof
        return OpRef(self._session.selected_op) if self._session.selected_op else None

    @property
    def in_gesture(self) -> bool:
        return self._gesture is not None

    # -- history ---------------------------------------------------------------------------------
    @property
    def can_undo(self) -> bool:
        return self.history.index > 0 and self._gesture is None

    @property
    def can_redo(self) -> bool:
        return self.history.index < len(self.history.steps) and self._gesture is None

    @property
    def is_clean(self) -> bool:
        return self.history.index == self.history.clean

    def undo(self) -> None:
        if self.can_undo:
            self.history.index -= 1
            self._apply(self.history.steps[self.history.index].before)
            self._emit(Topic.HISTORY)

    def redo(self) -> None:
        if self.can_redo:
            self.history.index += 1
            self._apply(self.history.steps[self.history.index - 1].after)
            self._emit(Topic.HISTORY)

    def set_clean(self) -> None:
        """The session as it is now is saved (a later change makes it dirty)."""
        self.history.clean = self.history.index
        self._emit(Topic.HISTORY)

    # -- changing --------------------------------------------------------------------------------
    def _refused(self, after: Session) -> str:
        """Why ``after`` cannot be costed on one of its devices (a split a model or a device
        cannot take), or "" when it can."""
        before = self._session
        if (after.model, after.params, after.hardware, after.model_config, after.custom_layers) == (
                before.model, before.params, before.hardware, before.model_config, before.custom_layers):
            return ""
        if (after.params.split.devices == 1 and after.params.phase != Phase.TRAIN
                and after.params.attention_kernel == BY_NAME["attention_kernel"].default):
            return ""  # (one device's inference step is refused only for a kernel the device lacks)
        model = after.model_spec or self.models[after.model]
        for ident in after.hardware:
            try:
                cached_analysis(model, after.params, after.as_used(ident, self.catalog[ident]))
            except WorkloadError as error:
                return str(error)
        return ""

    def _change(self, after: Session, text: str) -> None:
        if after == self._session:
            return
        refused = self._refused(after)
        if refused:  # nothing changes: the panels show the session as it was, the reason is said
            self._emit(Topic.MESSAGE, f"{text}: not done: {refused}")
            for topic in (Topic.WORKLOAD, Topic.HARDWARE):
                self._emit(topic)
            return
        if self._gesture is not None:
            self._apply(after)  # one history step at the end of the gesture
        else:
            self.history.push(Step(self._session, after, text))
            self._apply(after)
            self._emit(Topic.HISTORY)
        self._emit(Topic.MESSAGE, text)

    def _apply(self, after: Session, catalog_changed: bool = False, results_changed: bool = False) -> None:
        """Install ``after`` and notify each topic whose part changed, once."""
        before, self._session = self._session, after
        if catalog_changed:
            self._emit(Topic.CATALOG)
        if catalog_changed or before.hardware != after.hardware or before.what_ifs != after.what_ifs:
            if self._roof is not None and self._roof.device not in after.hardware:
                self._roof = None
            self._emit(Topic.HARDWARE)
        if before.model != after.model or before.params != after.params or before.compare != after.compare:
            self._emit(Topic.WORKLOAD)
        if before.precisions != after.precisions:
            self._emit(Topic.PRECISIONS)
        if (results_changed or before.results != after.results or before.profile != after.profile
                or before.measured_roofs != after.measured_roofs):
            self._emit(Topic.RESULTS)
        if before.selected_op != after.selected_op:
            if after.selected_op:
                self._roof = None
            self._emit(Topic.SELECTION, self.selection)
        self._emit(Topic.SESSION)

    def set_catalog(self, catalog: Catalog) -> None:
        """Replace the device catalogue (after a custom device is saved); shown devices
        must still exist."""
        for ident in self._session.hardware:
            catalog[ident]
        self.catalog = catalog
        self._emit(Topic.CATALOG)
        self._emit(Topic.HARDWARE)

    def set_devices(self, idents: Iterable[str]) -> None:
        idents = tuple(dict.fromkeys(idents))
        for ident in idents:
            self.catalog[ident]  # raises UnknownIdError for a bad id
        if not idents:
            self._emit(Topic.MESSAGE, "at least one device stays on the chart")
            return
        if len(idents) > MAX_DEVICES:
            self._emit(Topic.MESSAGE, f"at most {MAX_DEVICES} devices can be overlaid: untick one first")
            return
        names = ", ".join(self.catalog[i].label for i in idents)  # as the chart names them
        self._change(replace(self._session, hardware=idents), f"Show {names}")

    def toggle_device(self, ident: str, shown: bool) -> None:
        current = list(self._session.hardware)
        if shown and ident not in current:
            self.set_devices([*current, ident])
        elif not shown and ident in current:
            self.set_devices([i for i in current if i != ident])

    def set_primary(self, ident: str) -> None:
        rest = [i for i in self._session.hardware if i != ident]
        self.set_devices([ident, *rest][:MAX_DEVICES])

    def set_model(self, ident: str) -> None:
        """Use the model ``ident`` names: a preset, the custom stack, the open config.json, or
        one ``models`` lists under an "hf-" id (its config.json opened, ``open_model_config``)."""
        if ident not in (CUSTOM, CONFIG_MODEL) and ident not in self.models:
            spec = self.model_named(ident)  # raises UnknownIdError
            if isinstance(spec, TransformerSpec) and spec.config:
                self.open_model_config(spec)
                return
        if ident == CUSTOM:
            if not self._session.custom_layers:
                self._emit(Topic.MESSAGE, "The custom stack is empty: build it in the layer editor")
                return
            name = "the custom stack"
        elif ident == CONFIG_MODEL:
            if not self._session.model_config:
                self._emit(Topic.MESSAGE, "No model config is open: File › Open model config…")
                return
            name = config_spec(self._session.model_config).name
        else:
            name = self.models[ident].name  # raises UnknownIdError
        params = self._session.params
        if ident == CONFIG_MODEL:  # back to the file: its weights as it stores them, where none chosen
            params = stored_precision(params, config_spec(self._session.model_config))
        elif self._session.model == CONFIG_MODEL and self._session.model_config and \
                params.weight_dtype == config_spec(self._session.model_config).file_dtype:
            params = replace(params, weight_dtype=None)  # the file's precision leaves with the file
        self._change(replace(self._session, model=ident, params=params, selected_op=None), f"Model {name}")

    def set_compare(self, ident: str) -> None:
        """Draw ``ident``'s whole step beside the workload's ("": none); an undoable step."""
        name = self.model_named(ident).name if ident else ""  # raises UnknownIdError
        self._change(replace(self._session, compare=ident),
                     f"Compare with {name}" if name else "No comparison")

    def set_custom_layers(self, layers: tuple[Layer, ...]) -> None:
        """Replace the custom stack and use it (one step); raises WorkloadError if empty."""
        if not layers:
            raise WorkloadError("the custom stack has no layers: add one")
        self._change(replace(self._session, model=CUSTOM, custom_layers=tuple(layers), selected_op=None),
                     "Edit the custom stack")

    def set_params(self, **changes: Any) -> None:
        """Change workload parameters; raises WorkloadError (naming the parameter) if invalid.
        A change of phase puts the rows the new phase holds at their defaults back to them
        (``parameters.held_outside``: leaving training its sharding and recomputation, leaving
        a prefill its cached prefix, entering training the weights' and cache's own
        precisions), in the same step."""
        described = ", ".join(f"{k} {v}" for k, v in changes.items())
        if "phase" in changes:
            changes = {**{p.name: p.default for p in held_outside(changes["phase"])}, **changes}
        params = replace(self._session.params, **changes)
        self._change(replace(self._session, params=params), f"Set {described}")

    def set_workload(self, model: str, params: WorkloadParams, text: str,
                     layers: tuple[Layer, ...] = (), config: str = "") -> None:
        """Model, parameters (and custom layers or a config.json's content) at once (a loaded
        workload file): one step."""
        if model not in (CUSTOM, CONFIG_MODEL):
            self.models[model]
        layers = layers or self._session.custom_layers
        config = config or self._session.model_config
        self._change(replace(self._session, model=model, params=params, selected_op=None,
                             custom_layers=layers, model_config=config), text)

    def open_model_config(self, spec: TransformerSpec) -> None:
        """Use the model a config.json describes (``hf_config``'s spec), keeping the step's
        parameters but for the weights, in the precision the file stores them in where none
        was chosen (``stored_precision``): one step."""
        params = stored_precision(self._session.params, spec)
        gguf = spec.quantization is not None and spec.quantization.method == "gguf"
        held = "GGUF file" if gguf else "config.json"
        self._change(replace(self._session, model=CONFIG_MODEL, model_config=spec.config, params=params,
                             selected_op=None), f"Model {spec.name} (from its {held})")

    def set_what_if(self, ident: str, what_if: WhatIf, text: str = "") -> None:
        self._change(self._session.with_what_if(ident, what_if),
                     text or f"What-if on {self.catalog[ident].name}")

    def reset_what_ifs(self, ident: str | None = None) -> None:
        after = (replace(self._session, what_ifs=()) if ident is None
                 else self._session.with_what_if(ident, WhatIf()))
        self._change(after, "Reset what-ifs")

    def set_precisions(self, precisions: tuple[str, ...]) -> None:
        self._change(replace(self._session, precisions=tuple(precisions)), "Roofs shown")

    def select(self, selection: Selection) -> None:
        """Select an op or a roof (or nothing). Selecting is not an edit: no history step."""
        if selection == self.selection:
            return
        if isinstance(selection, RoofRef):
            self._roof = selection
            if self._session.selected_op is None:
                self._emit(Topic.SELECTION, selection)
            else:
                self._apply(replace(self._session, selected_op=None))
            return
        self._roof = None
        name = selection.name if isinstance(selection, OpRef) else None
        if name != self._session.selected_op:
            self._apply(replace(self._session, selected_op=name))
        else:
            self._emit(Topic.SELECTION, self.selection)

    def select_op(self, name: str | None) -> None:
        """Select the op called ``name`` (None: nothing)."""
        self.select(OpRef(name) if name else None)

    def open_session(self, path: str | Path) -> list[Skipped]:
        """Show the session saved in ``path``, with a fresh history. A broken session file
        raises DataFileError and changes nothing; its broken measurement files are
        skipped and returned."""
        notes: list[str] = []  # a listed model whose config.json is gone: said, the rest kept
        session, skipped = self.with_results(load_session(path, self.catalog, self.models, notes=notes))
        refused = self._refused(session)
        if refused:
            raise DataFileError(path, refused, field="workload")
        self.replace_session(session, f"Opened {Path(path).name}")
        for note in notes:
            self._emit(Topic.MESSAGE, f"{Path(path).name}: {note}")
        return skipped

    def reset(self, catalog: Catalog, session: Session, text: str,
              results: dict[str, Results] | None = None) -> None:
        """Another catalogue and session at once, with a fresh history (the design lab,
        whose device changes with each stage). ``results``: files already loaded, by path."""
        self.catalog = catalog
        results_changed = results is not None and dict(results) != self._results
        if results is not None and results_changed:
            self._results = dict(results)
        self._replace(session, text, catalog_changed=True, results_changed=results_changed)

    def show_session(self, session: Session, text: str) -> None:
        """A whole other session as one step (a scene's step): the history stays."""
        self.cancel_gesture()
        self._change(session, text)

    def replace_session(self, session: Session, text: str) -> None:
        """A whole new session (File › New or Open): a fresh history."""
        self._replace(session, text)

    def _replace(self, session: Session, text: str, **changed: bool) -> None:
        self.cancel_gesture()
        self.history.clear()
        self._apply(session, **changed)
        self._emit(Topic.HISTORY)
        self._emit(Topic.MESSAGE, text)

    # -- gestures --------------------------------------------------------------------------------
    def begin_gesture(self, text: str) -> None:
        """Start a gesture: changes apply live and become one history step at the end."""
        if self._gesture is None:
            self._gesture = (self._session, text)
            self._emit(Topic.HISTORY)  # no undo in the middle of a drag

    def end_gesture(self) -> None:
        if self._gesture is None:
            return
        before, text = self._gesture
        self._gesture = None
        if self._session != before:
            self.history.push(Step(before, self._session, text))
            self._emit(Topic.MESSAGE, text)
        self._emit(Topic.HISTORY)

    def cancel_gesture(self) -> None:
        if self._gesture is None:
            return
        before, text = self._gesture
        self._gesture = None
        self._apply(before)
        self._emit(Topic.HISTORY)
        self._emit(Topic.MESSAGE, f"{text}: cancelled")
