"""Where the app's data files live, however it was installed.

One resolver for three layouts:
- a source checkout or editable install: ``<repo>/resources`` beside the package;
- an installed wheel (``pip install .``): the wheel carries ``resources/`` as
  ``explorer/resources`` (pyproject.toml, hatch ``force-include``);
- a desktop bundle (PyInstaller): ``resources/`` under the bundle's data folder.

This module imports nothing but the standard library so the CLI stays light.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent
ENV_OVERRIDE = "ROOFLINE_EXPLORER_RESOURCES"


def _candidates() -> list[Path]:
    out: list[Path] = []
    override = os.environ.get(ENV_OVERRIDE)
    if override:
        out.append(Path(override))
    bundle = getattr(sys, "_MEIPASS", None)
    if getattr(sys, "frozen", False) and bundle:
        out.append(Path(bundle) / "resources")
    out.append(_PACKAGE_DIR / "resources")  # installed wheel
    out.append(_PACKAGE_DIR.parent / "resources")  # source checkout / editable install
    return out


def resources_dir() -> Path:
    """The folder holding hardware/, models/ and the other data folders."""
    candidates = _candidates()
    for candidate in candidates:
        if (candidate / "hardware").is_dir():
            return candidate
    tried = ", ".join(str(c) for c in candidates)
    raise FileNotFoundError(
        f"the app's data folder was not found (looked in {tried}); reinstall the package, "
        f"or point {ENV_OVERRIDE} at a copy of the repository's resources/ folder"
    )


def resource_path(*parts: str) -> Path:
    """Path of a bundled data file or folder, e.g. ``resource_path("hardware")``."""
    return resources_dir().joinpath(*parts)


DATA_OVERRIDE = "ROOFLINE_EXPLORER_DATA"


def user_data_dir(create: bool = True) -> Path:
    """The user's own data: custom devices, run results, autosaved sessions. Created on use."""
    override = os.environ.get(DATA_OVERRIDE)
    if override:
        base = Path(override)
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support" / "roofline-explorer"
    elif sys.platform.startswith("win"):
        base = Path(os.environ.get("APPDATA", Path.home())) / "roofline-explorer"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME", Path.home() / ".local" / "share")) / "roofline-explorer"
    if create:
        base.mkdir(parents=True, exist_ok=True)
    return base


def user_file(*parts: str) -> Path:
    """A folder or file in the user's data folder, for reading: nothing is created (a data
    folder that cannot be created or written must not stop the app from reading)."""
    return user_data_dir(create=False).joinpath(*parts)


def user_path(*parts: str) -> Path:
    """A folder or file in the user's data folder (folders are created)."""
    path = user_data_dir().joinpath(*parts)
    (path if not path.suffix else path.parent).mkdir(parents=True, exist_ok=True)
    return path
