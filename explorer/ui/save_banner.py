"""A bar above the chart, shown for as long as autosave cannot write (a full disk, a
read-only or missing data folder): it says so and why, and offers to save the session to
a file or to autosave into another folder. It never blocks the window."""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets


class SaveBanner(QtWidgets.QFrame):
    sig_save_as = QtCore.Signal()
    sig_other_folder = QtCore.Signal(str)  # the folder the user chose

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("save-banner")
        self.setStyleSheet("#save-banner { background: #FDE3D6; border: 1px solid #D55E00; }"
                           "#save-banner QLabel { color: #222222; }")
        self.label = QtWidgets.QLabel(wordWrap=True)
        save = QtWidgets.QPushButton("Save session as…")
        save.setToolTip("Keep this session in a file of your choice (File › Save session as…)")
        folder = QtWidgets.QPushButton("Autosave elsewhere…")
        folder.setToolTip("Choose a folder where crash recovery can write")
        dismiss = QtWidgets.QPushButton("Dismiss")
        dismiss.setToolTip("Hide this notice; it comes back if autosave fails again")
        row = QtWidgets.QHBoxLayout(self)
        row.setContentsMargins(8, 4, 8, 4)
        row.addWidget(self.label, 1)
        for button in (save, folder, dismiss):
            row.addWidget(button)
        save.clicked.connect(self.sig_save_as)
        folder.clicked.connect(self._choose_folder)
        dismiss.clicked.connect(self.hide)
        self.problem = ""
        self.hide()

    def show_problem(self, reason: str) -> None:
        """Autosave failed because of ``reason``: say so until it works again."""
        if reason != self.problem or not self.isVisible():
            self.problem = reason
            self.label.setText(f"<b>Your changes are not being autosaved</b> ({reason}). If the app "
                               "stopped now, the work since your last save would be lost.")
            self.show()

    def solved(self) -> None:
        self.problem = ""
        self.hide()

    def _choose_folder(self) -> None:
        folder = QtWidgets.QFileDialog.getExistingDirectory(self, "Autosave into this folder")
        if folder:
            self.sig_other_folder.emit(folder)
