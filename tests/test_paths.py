"""Data files are found the same way from a source checkout and from an installed wheel."""

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import explorer
from explorer import paths

REPO = Path(explorer.__file__).resolve().parent.parent


def test_source_checkout_finds_repository_resources(monkeypatch):
    monkeypatch.delenv(paths.ENV_OVERRIDE, raising=False)
    assert paths.resources_dir() == REPO / "resources"
    assert paths.resource_path("hardware", "h100-sxm.yaml").is_file()


def test_override_and_clear_error(monkeypatch, tmp_path):
    (tmp_path / "hardware").mkdir()
    monkeypatch.setenv(paths.ENV_OVERRIDE, str(tmp_path))
    assert paths.resources_dir() == tmp_path
    monkeypatch.setattr(paths, "_candidates", lambda: [tmp_path / "nowhere"])
    with pytest.raises(FileNotFoundError, match=paths.ENV_OVERRIDE):
        paths.resources_dir()


@pytest.mark.slow
def test_installed_wheel_finds_its_packaged_resources(tmp_path):
    pytest.importorskip("hatchling", reason="building the wheel needs hatchling (test extra)")
    wheels = tmp_path / "wheels"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(wheels), str(REPO)],
        capture_output=True, text=True, timeout=300,
    )
    assert build.returncode == 0, build.stderr
    (wheel,) = wheels.glob("roofline_explorer-*.whl")
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        assert "explorer/resources/hardware/h100-sxm.yaml" in names
        assert "explorer/resources/models/llama-3.yaml" in names
        archive.extractall(site)
    # Run from a folder outside the repository with only the unpacked wheel on the path.
    code = ("import explorer, explorer.paths as p; from explorer.core.hardware.catalog import load_catalog;"
            "print(explorer.__file__); print(p.resources_dir()); print(len(load_catalog()))")
    env = {**os.environ, "PYTHONPATH": str(site)}
    env.pop(paths.ENV_OVERRIDE, None)
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    module_file, resources, count = result.stdout.split()
    assert Path(module_file).is_relative_to(site)
    assert Path(resources) == site / "explorer" / "resources"
    from explorer.core.hardware.catalog import load_catalog

    assert int(count) == len(load_catalog()) >= 48  # the wheel carries the whole catalogue
