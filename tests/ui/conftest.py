"""Fixtures for the window and its parts: a fresh state, a window with private settings."""

import argparse

import pytest
from PySide6 import QtCore

from explorer.commands import main as cli
from explorer.core.model.session import Session
from explorer.state import AppState


def window_args(**overrides) -> argparse.Namespace:
    defaults = vars(cli.parse_args([]))
    return argparse.Namespace(**{**defaults, **overrides})


@pytest.fixture
def state(catalog, models):
    return AppState(catalog, models, Session())


@pytest.fixture
def settings(tmp_path):
    return QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)


@pytest.fixture
def window(qtbot, settings, tmp_path, monkeypatch):
    """The window with its own data folder (recent files, autosave) and settings."""
    from explorer.ui.application import build_window

    monkeypatch.setenv("ROOFLINE_EXPLORER_DATA", str(tmp_path / "data"))
    w = build_window(window_args(size=(1366, 768)), settings)
    qtbot.addWidget(w)
    with qtbot.waitExposed(w):
        w.show()
    yield w
    w.runs.shutdown()
