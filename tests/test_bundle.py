"""The desktop bundle (``make bundle``: dist/roofline-explorer/), run as a user without
Python would run it: from a folder outside the source tree, with no virtual environment
or project on PATH, no PYTHONPATH, the screen offscreen. Each command's output is checked,
CuPy must be out of the bundle, and the bundle must start in at most 1.5× the time of the
venv install (the two measured side by side, interleaved).

Runs only with BUNDLE=1, after ``make bundle`` (``BUNDLE=1 .ci/run`` does both); the same
file runs on Windows and macOS in .github/workflows/bundle.yml."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "dist" / "roofline-explorer"
EXE = APP / ("roofline-explorer.exe" if sys.platform == "win32" else "roofline-explorer")
START_RATIO = 1.5
ROUNDS = 5

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(os.environ.get("BUNDLE") != "1",
                       reason="the desktop bundle is tested with BUNDLE=1, after `make bundle`"),
]


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    if not EXE.is_file():
        pytest.fail(f"{EXE} is missing: run `make bundle` first")
    return tmp_path_factory.mktemp("bundle-user")


def _foreign(entry: str) -> bool:
    """A PATH entry of this project or of a Python environment."""
    path = Path(entry).resolve() if entry else ROOT
    return (path.is_relative_to(ROOT) or (path / "activate").exists()
            or Path(sys.prefix) in (path, *path.parents))


def clean_env(home: Path) -> dict[str, str]:
    """The environment a desktop user has: no virtual environment, no PYTHON* variables,
    no project on PATH; its own home and data folder; the screen offscreen."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("PYTHON", "VIRTUAL_ENV", "CONDA", "ROOFLINE_"))}
    env["PATH"] = os.pathsep.join(e for e in env.get("PATH", "").split(os.pathsep) if not _foreign(e))
    env.update(HOME=str(home), USERPROFILE=str(home), XDG_DATA_HOME=str(home / "data"),
               QT_QPA_PLATFORM="offscreen", LANG="C.UTF-8")
    return env


def run(home: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([str(EXE), *args], cwd=home, env=clean_env(home), capture_output=True, text=True,
                          encoding="utf-8", errors="replace", timeout=timeout)


def test_the_environment_holds_no_python_of_ours(home):
    env = clean_env(home)
    assert not any(key.startswith(("PYTHON", "VIRTUAL_ENV")) for key in env)
    assert str(ROOT) not in env["PATH"] and not home.is_relative_to(ROOT)


def test_version_names_the_bundle_and_the_catalogue(home):
    from explorer import __version__
    from explorer.about import catalogue_date

    done = run(home, "--version")
    assert done.returncode == 0, done.stderr
    assert f"roofline-explorer {__version__}" in done.stdout
    assert f"catalogue of {catalogue_date()}" in done.stdout
    assert "desktop bundle built" in done.stdout and "PyInstaller" in done.stdout


def test_hardware_list(home):
    done = run(home, "hardware", "list")
    assert done.returncode == 0, done.stderr
    assert "h100-sxm" in done.stdout and "NVIDIA H100 SXM5 80 GB" in done.stdout


def test_analyze_as_json(home):
    done = run(home, "analyze", "--hardware", "h100-sxm", "--model", "llama-3-8b", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["hardware"]["id"] == "h100-sxm"
    assert report["hardware"]["ridge"] == pytest.approx(989.4e12 / 3.35e12, rel=1e-3)


def test_screenshot_offscreen(home):
    out = home / "window.png"
    done = run(home, "--screenshot", str(out), "--size", "1366x768")
    assert done.returncode == 0, done.stderr
    header = out.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    assert (int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big")) == (1366, 768)


def test_export_a_scene_as_svg(home):
    out = home / "scene.svg"
    done = run(home, "export", "--scene", "cpu-vs-gpu", "--out", str(out))
    assert done.returncode == 0, done.stderr
    root = ET.parse(out).getroot()
    assert root.tag.endswith("svg")
    words = " ".join(t.text or "" for t in root.iter() if t.tag.endswith("text"))
    assert "EPYC" in words or "CPU" in words  # the scene puts a CPU against a GPU


def test_cupy_is_not_in_the_bundle(home):
    assert not [p for p in APP.rglob("*") if p.name.lower().startswith(("cupy", "cupyx", "cupy_backends"))]
    done = run(home, "bench", "--backend", "cupy", "--suite", "smoke")
    assert done.returncode != 0
    assert "CuPy is not installed" in done.stdout + done.stderr  # `import cupy` failed inside


def test_numba_is_not_in_the_bundle_and_the_kernel_lab_runs_numpy(home):
    assert not [p for p in APP.rglob("*") if p.name.lower().startswith(("numba", "llvmlite"))]
    done = run(home, "bench", "--suite", "smoke", "--json")
    assert done.returncode == 0, done.stderr
    assert "NumPy in cache-sized blocks" in done.stdout and "numba" not in done.stdout


def _start_seconds(command: list[str], env: dict[str, str], cwd: Path, out: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run([*command, "--screenshot", str(out), "--size", "800x600"], cwd=cwd, env=env,
                          capture_output=True, timeout=120)
    elapsed = time.perf_counter() - start
    assert done.returncode == 0, done.stderr
    return elapsed


def test_the_bundle_starts_about_as_fast_as_the_venv_install(home):
    """Start-up to the first painted window (a screenshot), side by side and interleaved."""
    venv_env = {**clean_env(home), "PATH": os.environ.get("PATH", "")}
    # The bundle's modules are compiled; the venv's are too once run (unless bytecode
    # writing is off, as it may be here): compile them first, or the venv pays for it.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "explorer")], check=True,
                   env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"})
    bundle, venv = [], []
    for i in range(ROUNDS + 1):  # the first round warms the disk cache for both
        b = _start_seconds([str(EXE)], clean_env(home), home, home / f"b{i}.png")
        v = _start_seconds([sys.executable, "-m", "explorer"], venv_env, ROOT, home / f"v{i}.png")
        if i:
            bundle.append(b)
            venv.append(v)
    ratio = statistics.median(bundle) / statistics.median(venv)
    print(f"start-up to a painted window: bundle {statistics.median(bundle):.2f} s "
          f"({min(bundle):.2f}–{max(bundle):.2f}), venv {statistics.median(venv):.2f} s "
          f"({min(venv):.2f}–{max(venv):.2f}), ratio {ratio:.2f} (median of {ROUNDS} interleaved rounds)")
    assert ratio <= START_RATIO, (f"bundle {statistics.median(bundle):.2f} s vs venv "
                                  f"{statistics.median(venv):.2f} s (median of {ROUNDS})")


@pytest.mark.skipif(not sys.platform.startswith("linux"),
                    reason="install.sh is the Linux tarball's installer")
def test_the_tarball_installs_into_menus_and_uninstalls(home):
    import tarfile

    from explorer import __version__

    [tarball] = (ROOT / "dist").glob(f"roofline-explorer-{__version__}-linux-*.tar.gz")
    unpacked = home / "download"
    with tarfile.open(tarball) as tar:
        tar.extractall(unpacked, filter="tar")
    [top] = unpacked.iterdir()
    prefix = home / "prefix"
    env = {**clean_env(home), "PREFIX": str(prefix)}
    subprocess.run(["sh", str(top / "install.sh")], env=env, check=True, capture_output=True, timeout=120)
    entry = (prefix / "share" / "applications" / "roofline-explorer.desktop").read_text()
    assert f"Exec={prefix}/bin/roofline-explorer" in entry and "Icon=roofline-explorer" in entry
    icons = prefix / "share" / "icons" / "hicolor"
    for size in (16, 48, 256, 512):
        assert (icons / f"{size}x{size}" / "apps" / "roofline-explorer.png").is_file()
    done = subprocess.run([str(prefix / "bin" / "roofline-explorer"), "--version"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and __version__ in done.stdout
    subprocess.run(["sh", str(top / "uninstall.sh")], env=env, check=True, capture_output=True, timeout=60)
    assert not (prefix / "bin" / "roofline-explorer").exists()
    assert not (prefix / "lib" / "roofline-explorer").exists()
    assert not list((prefix / "share").rglob("roofline-explorer*"))
