"""AppState: the document (``explorer.document``) with Qt signals and undo actions.

Views read from AppState and write through its methods (all the document's); they listen
to its ``sig_*_changed`` signals, which the document's notifications emit. The undo and
redo actions of the window follow the document's history (``undo_stack``).
"""

from __future__ import annotations

from PySide6 import QtCore, QtGui

from explorer.core.hardware.catalog import Catalog
from explorer.core.model.presets import ModelCatalog
from explorer.core.model.session import Session
from explorer.document import Document, OpRef, RoofRef, Selection, Topic

__all__ = ["AppState", "OpRef", "RoofRef", "Selection"]


class UndoHistory(QtCore.QObject):
    """The document's history as the window sees it: undo and redo, their actions, and the
    clean mark (the part of ``QUndoStack``'s interface the app uses)."""

    cleanChanged = QtCore.Signal(bool)
    changed = QtCore.Signal()

    def __init__(self, document: Document, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self._document = document
        self._clean = document.is_clean
        document.subscribe(Topic.HISTORY, self._on_history)

    def undo(self) -> None:
        self._document.undo()

    def redo(self) -> None:
        self._document.redo()

    def count(self) -> int:
        """Steps in the history, undone ones included."""
        return len(self._document.history.steps)

    def isClean(self) -> bool:
        return self._document.is_clean

    def setClean(self) -> None:
        self._document.set_clean()

    def createUndoAction(self, parent: QtCore.QObject, prefix: str = "&Undo") -> QtGui.QAction:
        return self._action(parent, prefix, self.undo, lambda: (self._document.can_undo,
                                                                self._document.history.undo_text))

    def createRedoAction(self, parent: QtCore.QObject, prefix: str = "&Redo") -> QtGui.QAction:
        return self._action(parent, prefix, self.redo, lambda: (self._document.can_redo,
                                                                self._document.history.redo_text))

    def _action(self, parent, prefix: str, slot, state) -> QtGui.QAction:
        action = QtGui.QAction(prefix, parent)
        action.triggered.connect(slot)

        def update() -> None:
            enabled, text = state()
            action.setEnabled(enabled)
            action.setText(f"{prefix} {text}" if text else prefix)

        self.changed.connect(update)
        update()
        return action

    def _on_history(self) -> None:
        self.changed.emit()
        clean = self._document.is_clean
        if clean != self._clean:
            self._clean = clean
            self.cleanChanged.emit(clean)


class AppState(QtCore.QObject, Document):
    sig_hardware_changed = QtCore.Signal()  # devices shown, their order, or what-ifs
    sig_workload_changed = QtCore.Signal()  # model or parameters
    sig_precisions_changed = QtCore.Signal()
    sig_results_changed = QtCore.Signal()  # measurement files shown
    sig_selection_changed = QtCore.Signal(object)  # the new Selection: OpRef, RoofRef or None
    sig_live_changed = QtCore.Signal()  # points of the kernel run in progress
    sig_session_changed = QtCore.Signal()  # anything above (for saving and autosave)
    sig_message = QtCore.Signal(str)  # what the last action did, for the status bar
    sig_catalog_changed = QtCore.Signal()  # devices were added (a custom device saved)

    def __init__(self, catalog: Catalog, models: ModelCatalog, session: Session | None = None,
                 parent: QtCore.QObject | None = None) -> None:
        # PySide6 passes the keywords QObject does not take on to Document.__init__.
        super().__init__(parent=parent, catalog=catalog, models=models,  # type: ignore[call-arg]
                         session=session)  # (QObject's stubs cannot say it hands the rest on)
        for topic, signal in ((Topic.HARDWARE, self.sig_hardware_changed),
                              (Topic.WORKLOAD, self.sig_workload_changed),
                              (Topic.PRECISIONS, self.sig_precisions_changed),
                              (Topic.RESULTS, self.sig_results_changed),
                              (Topic.SELECTION, self.sig_selection_changed),
                              (Topic.LIVE, self.sig_live_changed),
                              (Topic.SESSION, self.sig_session_changed), (Topic.MESSAGE, self.sig_message),
                              (Topic.CATALOG, self.sig_catalog_changed)):
            self.subscribe(topic, signal.emit)
        self.undo_stack = UndoHistory(self, self)
