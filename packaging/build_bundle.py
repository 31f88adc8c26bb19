"""Build the desktop bundle: a PyInstaller one-folder app (packaging/roofline-explorer.spec),
then an archive to hand out, and a report of its size and what dominates it.

    python packaging/build_bundle.py        (`make bundle` runs it in the project's venv)

Writes dist/roofline-explorer/ (the app: run dist/roofline-explorer/roofline-explorer) and
dist/roofline-explorer-<version>-<os>-<arch>.tar.gz (.zip on Windows) holding that folder,
the menu entry, the icons and install/uninstall scripts (Linux). An AppImage needs the
AppImage runtime, which no package registry carries; the tarball is the Linux download.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DIST = ROOT / "dist"
APP = DIST / "roofline-explorer"
WORK = ROOT / "build" / "bundle"
SIZE_GOAL_MB = 200
# Left out of the bundle (packaging/roofline-explorer.spec); the build fails if one is found.
FORBIDDEN = ("cupy", "cupyx", "cupy_backends", "torch", "nvidia")


def version() -> str:
    sys.path.insert(0, str(ROOT))
    from explorer import __version__

    return __version__


def commit() -> str:
    try:
        done = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    if done.returncode != 0:
        return "unknown"
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                           capture_output=True, text=True, timeout=10).stdout.strip()
    return done.stdout.strip() + ("+changes" if dirty else "")


def write_build_info() -> Path:
    import PyInstaller

    info = {
        "version": version(),
        "built": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit(),
        "pyinstaller": PyInstaller.__version__,
        "python": platform.python_version(),
        "platform": f"{platform.system()} {platform.machine()}",
    }
    WORK.mkdir(parents=True, exist_ok=True)
    path = WORK / "build-info.json"
    path.write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return path


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def largest(path: Path, count: int = 8) -> list[tuple[int, str]]:
    """The biggest files and top-level packages of the bundle's internals."""
    internal = path / "_internal" if (path / "_internal").is_dir() else path
    items = [(folder_size(p) if p.is_dir() else p.stat().st_size, p.name) for p in internal.iterdir()
             if not p.is_symlink()]  # a link to a library in PySide6/ is counted there
    return sorted(items, reverse=True)[:count]


def forbidden(path: Path) -> list[str]:
    return sorted({p.name for p in path.rglob("*") if p.name.split(".")[0].lower() in FORBIDDEN})


def archive() -> Path:
    """dist/roofline-explorer-<version>-<os>-<arch>.tar.gz (zip on Windows)."""
    system = {"linux": "linux", "darwin": "macos", "win32": "windows"}.get(sys.platform, sys.platform)
    stem = DIST / f"roofline-explorer-{version()}-{system}-{platform.machine().lower()}"
    if sys.platform == "win32":
        return Path(shutil.make_archive(str(stem), "zip", DIST, APP.name))
    out = stem.with_name(stem.name + ".tar.gz")
    extras = {"roofline-explorer.desktop": ROOT / "packaging" / "roofline-explorer.desktop",
              "icons": ROOT / "packaging" / "icons",
              "install.sh": ROOT / "packaging" / "install.sh",
              "uninstall.sh": ROOT / "packaging" / "uninstall.sh"}
    top = stem.name
    with tarfile.open(out, "w:gz") as tar:
        tar.add(APP, arcname=f"{top}/roofline-explorer")
        for name, source in extras.items():
            tar.add(source, arcname=f"{top}/{name}")
    return out


def main() -> int:
    os.environ["ROOFLINE_BUILD_INFO"] = str(write_build_info())
    spec = ROOT / "packaging" / "roofline-explorer.spec"
    command = [sys.executable, "-m", "PyInstaller", "--noconfirm", "--clean", "--log-level", "WARN",
               "--distpath", str(DIST), "--workpath", str(WORK / "pyinstaller"), str(spec)]
    print("$", " ".join(command), flush=True)
    if subprocess.run(command, cwd=ROOT).returncode != 0:
        print("the PyInstaller build failed (see above)", file=sys.stderr)
        return 1
    bad = forbidden(APP)
    if bad:
        print(f"the bundle holds what it must leave out: {', '.join(bad)}", file=sys.stderr)
        return 1
    size = folder_size(APP)
    print(f"\n{APP.relative_to(ROOT)}: {size / 1e6:.0f} MB unpacked (goal <= {SIZE_GOAL_MB} MB); "
          "largest parts:")
    for part_size, name in largest(APP):
        print(f"  {part_size / 1e6:7.1f} MB  {name}")
    packed = archive()
    print(f"{packed.relative_to(ROOT)}: {packed.stat().st_size / 1e6:.0f} MB")
    return 0 if size <= SIZE_GOAL_MB * 1e6 else 1


if __name__ == "__main__":
    sys.exit(main())
