"""Render the app's icon (resources/icons/roofline-explorer.svg) to the PNG sizes desktop
menus use, into packaging/icons/hicolor/NxN/apps/ (the freedesktop icon theme layout).

    QT_QPA_PLATFORM=offscreen python packaging/make_icons.py

tests/test_packaging.py checks that the committed PNGs match the SVG."""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6 import QtCore, QtGui, QtSvg

ROOT = Path(__file__).resolve().parents[1]
SVG = ROOT / "resources" / "icons" / "roofline-explorer.svg"
OUT = ROOT / "packaging" / "icons" / "hicolor"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
NAME = "roofline-explorer.png"


def render(size: int) -> QtGui.QImage:
    """The icon at ``size`` × ``size`` pixels, on a transparent background."""
    renderer = QtSvg.QSvgRenderer(str(SVG))
    image = QtGui.QImage(size, size, QtGui.QImage.Format.Format_ARGB32)
    image.fill(QtCore.Qt.GlobalColor.transparent)
    painter = QtGui.QPainter(image)
    painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    return image


def png_path(size: int) -> Path:
    return OUT / f"{size}x{size}" / "apps" / NAME


def main() -> int:
    _app = QtGui.QGuiApplication.instance() or QtGui.QGuiApplication(sys.argv[:1])
    for size in SIZES:
        path = png_path(size)
        path.parent.mkdir(parents=True, exist_ok=True)
        if not render(size).save(str(path)):
            print(f"could not write {path}", file=sys.stderr)
            return 1
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
