"""What this copy of the app is, for Help › About and ``--version``: its version, the date
of the hardware catalogue its numbers come from, and, in a desktop bundle, how the
bundle was built (``build-info.json``, written by ``packaging/build_bundle.py``).

Standard library only: ``--version`` must not wait for NumPy or Qt."""

from __future__ import annotations

import json
import platform
import sys

from explorer import __version__
from explorer.paths import resource_path

BUILD_INFO = "build-info.json"  # in a bundle's resources/


def _json(name: str) -> dict | None:
    try:
        value = json.loads(resource_path(name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def catalogue_date() -> str | None:
    """The last day a figure in the hardware catalogue was added or corrected."""
    about = _json("about.json") or {}
    date = about.get("catalogue_date")
    return date if isinstance(date, str) else None


def build_info() -> dict | None:
    """How the desktop bundle this copy runs from was built; None outside a bundle."""
    return _json(BUILD_INFO) if getattr(sys, "frozen", False) else None


def version_text() -> str:
    """One line: "roofline-explorer 0.1.0 (catalogue of 2026-11-30; …)"."""
    parts = [f"catalogue of {catalogue_date() or 'unknown date'}"]
    info = build_info()
    if info:
        parts.append(f"desktop bundle built {info.get('built', '?')} from commit {info.get('commit', '?')} "
                     f"with PyInstaller {info.get('pyinstaller', '?')}, Python {info.get('python', '?')} "
                     f"on {info.get('platform', '?')}")
    else:
        parts.append(f"Python {platform.python_version()} on {platform.system()} {platform.machine()}")
    return f"roofline-explorer {__version__} ({'; '.join(parts)})"
