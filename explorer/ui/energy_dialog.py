"""The Energy roofline window: the workload shown, in energy instead of time
(``chart.energy_chart``: FLOP/J against intensity, at 45 nm circuit energies and at the
constants fitted to any measurement file shown that recorded power), drawn by the app's
painter so it looks and exports as ``export --view energy`` does, with its sentences
(``core.words.energy_words``) under it. It follows the workload, the devices and the
measurement files as they change."""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from explorer.chart.elements import Page
from explorer.chart.energy_chart import energy_chart, energy_view
from explorer.chart.snapshot import Snapshot
from explorer.core.analysis.energy_roofline import EnergyView
from explorer.core.model.workload import WorkloadError
from explorer.core.words.energy_words import energy_sentences
from explorer.state import AppState
from explorer.ui.chart.picture import Picture, picture_buttons, save_picture


class EnergyPicture(Picture):
    """The view's picture."""

    def __init__(self, theme: str, parent=None) -> None:
        super().__init__(theme, parent)
        self.view: EnergyView | None = None

    def shown(self) -> bool:
        return self.view is not None

    def chart(self, page: Page):
        assert self.view is not None  # (drawn when shown)
        return energy_chart(self.view, page, self.theme)


class EnergyDialog(QtWidgets.QDialog):
    def __init__(self, state: AppState, theme: str = "light", parent=None) -> None:
        super().__init__(parent)
        self.state = state
        self.setWindowTitle("Energy roofline")
        self.resize(1000, 720)  # within a 1024×768 projector's screen, its title bar included
        self.picture = EnergyPicture(theme)
        self.summary = QtWidgets.QLabel(wordWrap=True)
        self.summary.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary.setToolTip("Every number here is the picture's own: circuit energies from Horowitz "
                                "(ISSCC 2014), a measured run's from its kernels' power and time")
        buttons, self.export_button = picture_buttons(self)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addWidget(self.picture, 1)
        layout.addWidget(self.summary)
        layout.addWidget(buttons)
        for signal in (state.sig_workload_changed, state.sig_hardware_changed, state.sig_results_changed):
            signal.connect(self.refresh)
        self.refresh()

    def set_theme(self, name: str) -> None:
        self.picture.theme = name
        self.picture.update()

    def refresh(self, *_args) -> None:
        """Work the picture out again for the state shown (a workload the app cannot
        analyse leaves the last picture, and says why)."""
        try:
            view = energy_view(Snapshot.of(self.state))
        except WorkloadError as error:
            self.summary.setText(f"The energy picture cannot be drawn for this workload: {error}")
            return
        self.picture.view = view
        self.summary.setText(" ".join(energy_sentences(view)))
        self.picture.update()

    def export(self, path: str | None = None) -> bool:
        """Save the picture laid out for a slide (``path``: asked for when None)."""
        title = self.picture.view.title if self.picture.view else "the energy roofline"
        return save_picture(self, self.picture, title, "energy-roofline.png", path)
