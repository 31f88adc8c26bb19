"""A real X server for the tests that need one: Xvfb and libXtst, installed from Debian's
packages by the test's set-up where they are missing and this is a Debian machine run as
root (as CI is), else the test is skipped naming what is missing."""

from __future__ import annotations

import ctypes.util
import os
import shutil
import subprocess
from pathlib import Path

PACKAGES = ("xvfb", "libxtst6", "libxcb-cursor0", "libxcb-icccm4", "libxcb-keysyms1")


def _missing() -> str | None:
    if shutil.which("Xvfb") is None:
        return "Xvfb is not installed (Debian: apt install xvfb)"
    if ctypes.util.find_library("Xtst") is None:
        return "libXtst is not installed (Debian: apt install libxtst6)"
    unresolved = _xcb_plugin_unresolved()
    if unresolved:
        return f"Qt's xcb platform plugin needs {', '.join(unresolved)} (Debian: {' '.join(PACKAGES[2:])})"
    return None


def _xcb_plugin_unresolved() -> list[str]:
    """The libraries Qt's xcb platform plugin links to that this machine lacks (as ldd
    says; Qt itself names only libxcb-cursor whatever is missing)."""
    from PySide6 import QtCore

    plugins = Path(QtCore.QLibraryInfo.path(QtCore.QLibraryInfo.LibraryPath.PluginsPath))
    plugin = plugins / "platforms" / "libqxcb.so"
    if not plugin.exists() or shutil.which("ldd") is None:
        return []
    out = subprocess.run(["ldd", str(plugin)], capture_output=True, text=True, timeout=30).stdout
    return sorted({line.split()[0] for line in out.splitlines() if "not found" in line})


def x11_missing() -> str | None:
    """Why no real X server can run here (None: one can), after installing it where it
    may be installed."""
    why = _missing()
    if why is None or os.environ.get("ROOFLINE_NO_APT") == "1":
        return why
    apt = shutil.which("apt-get")
    if apt is None or os.geteuid() != 0:
        return f"{why}; not installed by the test (needs apt-get run as root)"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = [apt, "install", "-y", "-q", *PACKAGES]
    try:
        if subprocess.run(install, capture_output=True, timeout=300, env=env).returncode != 0:
            # a fresh machine may not have the package lists yet
            subprocess.run([apt, "update", "-q"], capture_output=True, timeout=300, env=env, check=True)
            subprocess.run(install, capture_output=True, timeout=300, env=env, check=True)
    except (subprocess.SubprocessError, OSError) as error:
        return f"{why}; apt-get install {' '.join(PACKAGES)} failed: {error}"
    return _missing()
