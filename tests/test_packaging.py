"""What the desktop bundle and the menu entry are made of, checked without building the
bundle: the icon (its PNG sizes match its SVG, and the SVG renders the same outside Qt),
the menu entry, and what Help › About and ``--version`` say."""

from __future__ import annotations

import datetime
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PySide6 import QtGui

from explorer import __version__, about
from explorer.paths import ENV_OVERRIDE, resource_path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "packaging"))
import make_icons  # noqa: E402


def pixels(image: QtGui.QImage) -> np.ndarray:
    image = image.convertToFormat(QtGui.QImage.Format.Format_RGBA8888)
    return np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.width(), 4).astype(int)


@pytest.mark.parametrize("size", make_icons.SIZES)
def test_each_committed_icon_png_is_the_svg_at_its_size(qapp, size):
    committed = QtGui.QImage(str(make_icons.png_path(size)))
    assert (committed.width(), committed.height()) == (size, size), "run packaging/make_icons.py"
    difference = abs(pixels(committed) - pixels(make_icons.render(size)))
    assert difference.max() <= 2, "the PNGs are out of date: run packaging/make_icons.py"
    corner, middle = pixels(committed)[0, 0], pixels(committed)[size // 2, size // 2]
    assert corner[3] == 0 and middle[3] == 255  # rounded corners see-through, the face opaque


def test_the_svg_icon_renders_the_same_outside_qt(qapp):
    resvg = pytest.importorskip("resvg_py")
    png = bytes(resvg.svg_to_bytes(svg_path=str(make_icons.SVG), width=64, height=64))
    theirs = QtGui.QImage.fromData(png)
    assert (theirs.width(), theirs.height()) == (64, 64)
    difference = abs(pixels(theirs) - pixels(make_icons.render(64))).max(axis=2)
    assert (difference > 40).mean() < 0.02  # antialiasing differs at edges, nothing else


def test_the_app_icon_loads(qapp):
    icon = QtGui.QIcon(str(resource_path("icons", "roofline-explorer.svg")))
    assert not icon.isNull() and not icon.pixmap(32, 32).isNull()


def test_the_menu_entry_names_the_command_and_icon():
    lines = (ROOT / "packaging" / "roofline-explorer.desktop").read_text().splitlines()
    assert lines[0] == "[Desktop Entry]"
    entry = dict(line.split("=", 1) for line in lines[1:] if "=" in line)
    assert entry["Type"] == "Application" and entry["Name"] == "Roofline Explorer"
    assert entry["Exec"] == "roofline-explorer" and entry["Terminal"] == "false"
    assert entry["Icon"] == Path(make_icons.NAME).stem  # the name install.sh gives the PNGs
    assert entry["Categories"].endswith(";")


def test_version_text_names_version_catalogue_and_python():
    text = about.version_text()
    assert text.startswith(f"roofline-explorer {__version__} (catalogue of {about.catalogue_date()}; ")
    assert "Python" in text and "bundle" not in text  # not frozen here


def test_in_a_bundle_the_version_says_how_it_was_built(tmp_path, monkeypatch):
    resources = tmp_path / "resources"
    shutil.copytree(resource_path(), resources)
    info = {"built": "2026-12-01 06:36 UTC", "commit": "6f25b20fc7fc", "pyinstaller": "6.22.3",
            "python": "3.11.7", "platform": "Linux x86_64"}
    (resources / about.BUILD_INFO).write_text(json.dumps(info))
    monkeypatch.setenv(ENV_OVERRIDE, str(resources))
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    assert about.build_info() == info
    assert about.version_text().endswith("desktop bundle built 2026-12-01 06:36 UTC from commit 6f25b20fc7fc "
                                         "with PyInstaller 6.22.3, Python 3.11.7 on Linux x86_64)")


def test_the_catalogue_date_is_not_older_than_the_catalogue():
    """The date must move when a figure in resources/hardware changes."""
    git = shutil.which("git")
    done = subprocess.run([git, "log", "-1", "--format=%cs", "--", "resources/hardware"], cwd=ROOT,
                          capture_output=True, text=True) if git else None
    if not done or done.returncode or not done.stdout.strip():
        pytest.skip("no git history here to date the catalogue by")
    last_change = datetime.date.fromisoformat(done.stdout.strip())
    assert datetime.date.fromisoformat(about.catalogue_date()) >= last_change, (
        "resources/hardware changed after resources/about.json's catalogue_date: update it")


def test_version_option_prints_one_line_on_stdout():
    done = subprocess.run([sys.executable, str(ROOT / "main.py"), "--version"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0
    assert done.stdout == about.version_text() + "\n"
