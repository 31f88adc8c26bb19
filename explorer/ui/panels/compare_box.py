"""The Workload panel's *Compare with* box: "none", the presets, and the models listed from
files (the Hugging Face cache's "hf-" ids and the GGUF files' "gguf-" ids), which come from
File › Models on this machine's background read (``cached_models_menu``): the box asks for
that read when it opens (``sig_opening``) and takes its models when it is done
(``show_listed``). A session comparing with a listed model shows it chosen before any read,
under the name the compared step already has."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6 import QtCore, QtWidgets

if TYPE_CHECKING:
    from explorer.state import AppState
    from explorer.ui.cached_models_menu import Listing

TIP = ("Draw another model's whole step beside this one: the same workload on the same device (a "
       "hexagon on the chart), e.g. a mixture of experts beside the dense model it decodes like; the "
       "models of this machine's Hugging Face cache and GGUF files join the list once read")


class CompareBox(QtWidgets.QComboBox):
    sig_opening = QtCore.Signal()  # the list is about to show: time to read the files' models

    def __init__(self, state: AppState, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.setToolTip(TIP)
        self.addItem("none", "")
        for ident, spec in state.models.items():
            self.addItem(spec.name, ident)
        self.currentIndexChanged.connect(lambda _i: state.set_compare(self.currentData()))

    def showPopup(self) -> None:  # (Qt's name)
        self.sig_opening.emit()
        super().showPopup()

    def show_listed(self, listing: Listing) -> None:
        """Add the listed models a read found (those that can be read), the choice kept."""
        blocked = self.blockSignals(True)
        for entry in [*listing.models, *listing.ggufs]:
            if entry.spec is None or entry.id is None:
                continue
            text = f"{entry.repository} (GGUF)" if entry.id.startswith("gguf-") else entry.repository
            index = self.findData(entry.id)
            if index < 0:
                self.addItem(text, entry.id)
            else:
                self.setItemText(index, text)
        self.blockSignals(blocked)

    def show_compare(self, ident: str) -> None:
        """Choose ``ident`` (signals blocked by the caller); a listed id not in the box yet is
        added under the compared step's name."""
        index = self.findData(ident)
        if index < 0 and ident:
            compared = self.state.compared()
            self.addItem(compared.name if compared is not None and compared.name else ident, ident)
            index = self.count() - 1
        self.setCurrentIndex(max(0, index))
