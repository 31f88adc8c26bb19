"""A non-modal bar above the chart naming the user's files that could not be loaded, with
what to do about each: open the file, open its folder, or move it aside (renamed with
``.broken`` so it is no longer read, and nothing is lost)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from explorer.core.files.userfiles import Skipped, notice

MAX_ROWS = 4


def move_aside(path: Path) -> Path:
    """Rename ``path`` to ``<name>.broken-<time>`` beside it (``-2``, ``-3``… when that name
    is taken: an earlier copy is never replaced); returns the new path."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.broken-{stamp}")
    number = 1
    while target.exists() or target.is_symlink():
        number += 1
        target = path.with_name(f"{path.name}.broken-{stamp}-{number}")
    path.rename(target)
    return target


class NoticeBar(QtWidgets.QFrame):
    sig_message = QtCore.Signal(str)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("notice-bar")
        self.setFrameShape(QtWidgets.QFrame.Shape.StyledPanel)
        self.setStyleSheet("#notice-bar { background: #FFF4D6; border: 1px solid #E69F00; }"
                           "#notice-bar QLabel { color: #222222; }")
        self.skipped: list[Skipped] = []
        self._seen: set[tuple[str, Path]] = set()  # every file shown once (a dismissed one stays away)
        self._presenting = False
        self._layout = QtWidgets.QVBoxLayout(self)
        self._layout.setContentsMargins(8, 4, 8, 4)
        self.hide()

    @property
    def text(self) -> str:
        return notice(self.skipped)

    def add(self, skipped) -> None:
        """Show these files too (the bar appears; it never blocks the window). A file already
        shown, dismissed or moved aside is not shown again: asking again costs nothing."""
        new = [s for s in skipped if (s.what, s.path) not in self._seen]
        if not new:
            return
        self._seen.update((s.what, s.path) for s in new)
        self.skipped += new
        self._rebuild()

    def _rebuild(self) -> None:
        while self._layout.count():
            item = self._layout.takeAt(0)
            if item is None:
                break
            if (widget := item.widget()) is not None:
                widget.deleteLater()
            elif (inner := item.layout()) is not None:
                _clear(inner)
        if not self.skipped:
            self.hide()
            return
        kinds: dict[str, list[Skipped]] = {}
        for skipped in self.skipped[:MAX_ROWS]:
            kinds.setdefault(skipped.what, []).append(skipped)
        for items in kinds.values():
            # "1 of your devices could not be loaded:", then one row per file.
            self._layout.addWidget(QtWidgets.QLabel(f"<b>{notice(items).split(':', 1)[0]}:</b>"))
            for skipped in items:
                self._layout.addLayout(self._row(skipped))
        if len(self.skipped) > MAX_ROWS:
            self._layout.addWidget(QtWidgets.QLabel(f"… and {len(self.skipped) - MAX_ROWS} more"))
        hint = QtWidgets.QLabel("Everything else works. Fix the file and restart, or move it aside.")
        close = QtWidgets.QPushButton("Dismiss")
        close.setToolTip("Hide this notice (the files stay as they are)")
        close.clicked.connect(self.dismiss)
        row = QtWidgets.QHBoxLayout()
        row.addWidget(hint, 1)
        row.addWidget(close)
        self._layout.addLayout(row)
        self.setVisible(not self._presenting)

    def _row(self, skipped: Skipped) -> QtWidgets.QHBoxLayout:
        row = QtWidgets.QHBoxLayout()
        label = QtWidgets.QLabel(skipped.describe())
        label.setWordWrap(True)
        label.setToolTip(str(skipped.path))
        label.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        row.addWidget(label, 1)
        for text, tip, slot in (
                ("Open file", "Open the file in your text editor", lambda: _open(skipped.path)),
                ("Open folder", "Show the folder that holds it", lambda: _open(skipped.path.parent)),
                ("Move aside", "Rename it to …broken-<time> so it is no longer loaded",
                 lambda: self._move_aside(skipped))):
            button = QtWidgets.QPushButton(text)
            button.setToolTip(tip)
            button.clicked.connect(slot)
            row.addWidget(button)
        return row

    def _move_aside(self, skipped: Skipped) -> None:
        try:
            target = move_aside(skipped.path)
        except OSError as exc:
            self.sig_message.emit(f"Could not move {skipped.path.name}: {exc.strerror or exc}")
            return
        self.skipped.remove(skipped)
        self.sig_message.emit(f"Moved {skipped.path.name} aside to {target.name}")
        self._rebuild()

    def set_presenting(self, presenting: bool) -> None:
        """Never on a projector: hidden while presenting, back afterwards."""
        self._presenting = presenting
        self.setVisible(bool(self.skipped) and not presenting)

    def dismiss(self) -> None:
        self.skipped = []
        self._rebuild()


def _open(path: Path) -> None:
    QtGui.QDesktopServices.openUrl(QtCore.QUrl.fromLocalFile(str(path)))


def _clear(layout: QtWidgets.QLayout) -> None:
    while layout.count():
        item = layout.takeAt(0)
        if item is None:
            break
        if (widget := item.widget()) is not None:
            widget.deleteLater()
