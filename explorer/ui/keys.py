"""Keyboard shortcuts built without duplicates on every platform.

Qt's standard keys differ by platform: on X11 ``StandardKey.Redo`` is Ctrl+Shift+Z, on
Windows Ctrl+Y and Ctrl+Shift+Z, on macOS Cmd+Shift+Z. An action given the same key twice
(Ctrl+Shift+Z by hand and again through ``StandardKey.Redo`` on X11) makes Qt log
"Ambiguous shortcut overload" and ignore the key, so every list is built here, each key
once, in the order given.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

from PySide6 import QtGui

Key = QtGui.QKeySequence | QtGui.QKeySequence.StandardKey | str


def _sequences(key: Key) -> list[QtGui.QKeySequence]:
    if isinstance(key, QtGui.QKeySequence.StandardKey):
        return list(QtGui.QKeySequence.keyBindings(key))
    return [QtGui.QKeySequence(key)]


def unique_keys(keys: Iterable[Key]) -> list[QtGui.QKeySequence]:
    """Every key of ``keys`` once (a standard key stands for this platform's bindings of
    it), in order, empty sequences left out."""
    seen: set[str] = set()
    out: list[QtGui.QKeySequence] = []
    for key in keys:
        for sequence in _sequences(key):
            text = sequence.toString(QtGui.QKeySequence.SequenceFormat.PortableText)
            if text and text not in seen:
                seen.add(text)
                out.append(sequence)
    return out


def redo_keys(standard: Iterable[Key] | None = None,
              platform: str = sys.platform) -> list[QtGui.QKeySequence]:
    """Redo: the platform's standard keys (``standard``, this platform's ``StandardKey.Redo``
    bindings when None), then Ctrl+Shift+Z and (but on macOS, where Cmd+Y is no redo key)
    Ctrl+Y, each once: the keys people bring from other programs work everywhere."""
    extra: list[Key] = ["Ctrl+Shift+Z"] if platform == "darwin" else ["Ctrl+Shift+Z", "Ctrl+Y"]
    base: list[Key] = [QtGui.QKeySequence.StandardKey.Redo] if standard is None else list(standard)
    return unique_keys([*base, *extra])
