"""AppState: the current session, the only way to change it, and its undo stack.

Views read from AppState and write through its methods; they listen to its
``sig_*_changed`` signals. Every change replaces the immutable ``Session`` and is one
undo step; a gesture (a whole drag) is one step however many updates it makes, and can
be cancelled. Derived results (analyses, sweeps) are computed on demand and cached.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from PySide6 import QtCore, QtGui

from explorer.core.analysis import Analysis, BatchSweep, analyze, batch_sweep
from explorer.core.catalog import Catalog
from explorer.core.custom import Layer
from explorer.core.hardware import Hardware
from explorer.core.models import ModelCatalog, ModelSpec
from explorer.core.session import CUSTOM, MAX_DEVICES, Session, WhatIf
from explorer.core.workload import WorkloadError, WorkloadParams
from explorer.kernels.results import Point, Results, load_results


@lru_cache(maxsize=128)
def _analysis(model: ModelSpec, params: WorkloadParams, hardware: Hardware) -> Analysis:
    return analyze(model, params, hardware)


@lru_cache(maxsize=64)
def _sweep(model: ModelSpec, params: WorkloadParams, hardware: Hardware) -> BatchSweep:
    return batch_sweep(model, params, hardware)


class _Change(QtGui.QUndoCommand):
    """Undo step: swap one session for another."""

    def __init__(self, state: AppState, before: Session, after: Session, text: str) -> None:
        super().__init__(text)
        self._state, self._before, self._after = state, before, after

    def redo(self) -> None:
        self._state._apply(self._after)

    def undo(self) -> None:
        self._state._apply(self._before)


class AppState(QtCore.QObject):
    sig_hardware_changed = QtCore.Signal()  # devices shown, their order, or what-ifs
    sig_workload_changed = QtCore.Signal()  # model or parameters
    sig_precisions_changed = QtCore.Signal()
    sig_results_changed = QtCore.Signal()  # measurement files shown
    sig_selection_changed = QtCore.Signal(object)  # op name, or None
    sig_live_changed = QtCore.Signal()  # points of the kernel run in progress
    sig_session_changed = QtCore.Signal()  # anything above (for saving and autosave)
    sig_message = QtCore.Signal(str)  # what the last action did, for the status bar
    sig_catalog_changed = QtCore.Signal()  # devices were added (a custom device saved)

    def __init__(self, catalog: Catalog, models: ModelCatalog, session: Session | None = None,
                 parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self.catalog = catalog
        self.models = models
        self.undo_stack = QtGui.QUndoStack(self)
        self._session = session or Session()
        self._gesture: tuple[Session, str] | None = None
        self._results: dict[str, Results] = {}
        self._live: list[Point] = []

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

    def device(self, ident: str) -> Hardware:
        """A shown device with its what-ifs applied."""
        return self._session.what_if(ident).apply(self.catalog[ident])

    def devices(self) -> list[Hardware]:
        return [self.device(ident) for ident in self._session.hardware]

    @property
    def primary(self) -> Hardware:
        return self.device(self._session.primary)

    def analysis(self, ident: str | None = None) -> Analysis:
        """The workload costed on ``ident`` (the primary device by default)."""
        hardware = self.device(ident) if ident else self.primary
        return _analysis(self.model, self._session.params, hardware)

    def sweep(self, ident: str | None = None) -> BatchSweep:
        hardware = self.device(ident) if ident else self.primary
        return _sweep(self.model, self._session.params, hardware)

    def results(self) -> list[tuple[str, Results]]:
        return [(path, self._results[path]) for path in self._session.results if path in self._results]

    @property
    def in_gesture(self) -> bool:
        return self._gesture is not None

    def set_catalog(self, catalog: Catalog) -> None:
        """Replace the device catalogue (after a custom device is saved); shown devices
        must still exist."""
        for ident in self._session.hardware:
            catalog[ident]
        self.catalog = catalog
        self.sig_catalog_changed.emit()
        self.sig_hardware_changed.emit()

    # -- changing ------------------------------------------------------------------------------
    def _change(self, after: Session, text: str) -> None:
        if after == self._session:
            return
        if self._gesture is not None:
            self._apply(after)  # one undo step at the end of the gesture
        else:
            self.undo_stack.push(_Change(self, self._session, after, text))
        self.sig_message.emit(text)

    def _apply(self, after: Session, catalog_changed: bool = False, results_changed: bool = False) -> None:
        """Install ``after`` and emit each signal whose part changed, once."""
        before, self._session = self._session, after
        if catalog_changed:
            self.sig_catalog_changed.emit()
        if catalog_changed or before.hardware != after.hardware or before.what_ifs != after.what_ifs:
            self.sig_hardware_changed.emit()
        if before.model != after.model or before.params != after.params:
            self.sig_workload_changed.emit()
        if before.precisions != after.precisions:
            self.sig_precisions_changed.emit()
        if (results_changed or before.results != after.results
                or before.measured_roofs != after.measured_roofs):
            self.sig_results_changed.emit()
        if before.selected_op != after.selected_op:
            self.sig_selection_changed.emit(after.selected_op)
        self.sig_session_changed.emit()

    def set_devices(self, idents: tuple[str, ...] | list[str]) -> None:
        idents = tuple(dict.fromkeys(idents))
        for ident in idents:
            self.catalog[ident]  # raises UnknownIdError for a bad id
        if not idents:
            self.sig_message.emit("at least one device stays on the chart")
            return
        if len(idents) > MAX_DEVICES:
            self.sig_message.emit(f"at most {MAX_DEVICES} devices can be overlaid: "
                                  "untick one first")
            return
        names = ", ".join(idents)
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
        if ident == CUSTOM:
            if not self._session.custom_layers:
                self.sig_message.emit("The custom stack is empty: build it in the layer editor")
                return
            name = "the custom stack"
        else:
            name = self.models[ident].name  # raises UnknownIdError
        self._change(replace(self._session, model=ident, selected_op=None), f"Model {name}")

    def set_custom_layers(self, layers: tuple[Layer, ...]) -> None:
        """Replace the custom stack and use it (one undo step); raises WorkloadError if empty."""
        if not layers:
            raise WorkloadError("the custom stack has no layers: add one")
        self._change(replace(self._session, model=CUSTOM, custom_layers=tuple(layers), selected_op=None),
                     "Edit the custom stack")

    def set_params(self, **changes) -> None:
        """Change workload parameters; raises WorkloadError (naming the parameter) if invalid."""
        params = replace(self._session.params, **changes)
        described = ", ".join(f"{k} {v}" for k, v in changes.items())
        self._change(replace(self._session, params=params), f"Set {described}")

    def set_workload(self, model: str, params: WorkloadParams, text: str,
                     layers: tuple[Layer, ...] = ()) -> None:
        """Model, parameters (and custom layers) at once (a loaded workload file): one step."""
        if model != CUSTOM:
            self.models[model]
        layers = layers or self._session.custom_layers
        self._change(replace(self._session, model=model, params=params, selected_op=None,
                             custom_layers=layers), text)

    def set_what_if(self, ident: str, what_if: WhatIf, text: str = "") -> None:
        self._change(self._session.with_what_if(ident, what_if),
                     text or f"What-if on {self.catalog[ident].name}")

    def reset_what_ifs(self, ident: str | None = None) -> None:
        if ident is None:
            after = replace(self._session, what_ifs=())
        else:
            after = self._session.with_what_if(ident, WhatIf())
        self._change(after, "Reset what-ifs")

    def set_precisions(self, precisions: tuple[str, ...]) -> None:
        self._change(replace(self._session, precisions=tuple(precisions)), "Roofs shown")

    def select_op(self, name: str | None) -> None:
        """Selection is not an edit: no undo step."""
        if name != self._session.selected_op:
            self._apply(replace(self._session, selected_op=name))

    def add_results(self, path: str) -> Results:
        """Load a results file (raises DataFileError) and show it."""
        results = load_results(path)
        self._results[path] = results
        if path not in self._session.results:
            self._change(replace(self._session, results=(*self._session.results, path)),
                         f"Show measurements from {path}")
        else:
            self.sig_results_changed.emit()
        return results

    def set_live_points(self, points: list[Point]) -> None:
        """Points of a run in progress (not part of the session until saved)."""
        self._live = list(points)
        self.sig_live_changed.emit()

    @property
    def live_points(self) -> list[Point]:
        return self._live

    def set_measured_roofs(self, shown: bool) -> None:
        self._change(replace(self._session, measured_roofs=shown),
                     "Show measured roofs" if shown else "Hide measured roofs")

    def remove_results(self, path: str) -> None:
        self._change(replace(self._session, results=tuple(p for p in self._session.results if p != path)),
                     "Hide measurements")

    def reset(self, catalog: Catalog, session: Session, text: str,
              results: dict[str, Results] | None = None) -> None:
        """Another catalogue and session at once, with a fresh history (the design lab,
        whose device changes with each stage). ``results``: files already loaded, by path."""
        self.catalog = catalog
        results_changed = results is not None and dict(results) != self._results
        if results_changed:
            self._results = dict(results)
        self._replace(session, text, catalog_changed=True, results_changed=results_changed)

    def show_session(self, session: Session, text: str) -> None:
        """A whole other session as one undo step (a scene's step): the history stays."""
        self.cancel_gesture()
        self._change(session, text)

    def replace_session(self, session: Session, text: str) -> None:
        """A whole new session (File › New or Open): a fresh undo history."""
        self._replace(session, text)

    def _replace(self, session: Session, text: str, **changed) -> None:
        self.cancel_gesture()
        self.undo_stack.clear()
        self._apply(session, **changed)
        self.undo_stack.setClean()
        self.sig_message.emit(text)

    # -- gestures ------------------------------------------------------------------------------
    def begin_gesture(self, text: str) -> None:
        """Start a gesture: changes apply live and become one undo step at the end."""
        if self._gesture is None:
            self._gesture = (self._session, text)

    def end_gesture(self) -> None:
        if self._gesture is None:
            return
        before, text = self._gesture
        self._gesture = None
        if self._session != before:
            after = self._session
            self._session = before  # the command's redo applies ``after`` again
            self.undo_stack.push(_Change(self, before, after, text))
            self.sig_message.emit(text)

    def cancel_gesture(self) -> None:
        if self._gesture is None:
            return
        before, text = self._gesture
        self._gesture = None
        self._apply(before)
        self.sig_message.emit(f"{text}: cancelled")
