"""What an undo or redo says in the status bar: what it undid or redid, in place of the
message of the step itself ("scene step 3/4" stayed there after an undo back to step 2)."""

from __future__ import annotations

from PySide6 import QtGui, QtWidgets


def say_what_undo_does(bar: QtWidgets.QStatusBar, undo: QtGui.QAction, redo: QtGui.QAction, history) -> None:
    """After ``undo`` (or ``redo``) runs, ``bar`` says "Undone: <step>" ("Redone: <step>");
    ``history``: the document's (its ``undo_text`` and ``redo_text`` name the steps)."""
    def said(what: str, step: str) -> None:
        bar.showMessage(f"{what}: {step}" if step else what, 6000)

    # (connected after the actions' own slots: the step undone is the one to redo now)
    undo.triggered.connect(lambda: said("Undone", history.redo_text))
    redo.triggered.connect(lambda: said("Redone", history.undo_text))
