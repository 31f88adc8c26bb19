"""The type checker `make test` runs (mypy, configured in pyproject.toml): it covers the
whole package and every benchmark script, the GPU scripts among them, whose
GPU-only functions no test on this machine reaches; and it finds a call to a renamed
function, as ``gpu_suite.py`` once called ``gemm._prepare`` after it became
``prepare_product``."""

import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _ignored(config: dict) -> set[str]:
    """The modules whose errors mypy does not report (``ignore_errors``)."""
    return {module for override in config["tool"]["mypy"].get("overrides", [])
            if override.get("ignore_errors") for module in override["module"]}


def test_mypy_checks_the_whole_package_and_every_benchmark_script():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert set(config["tool"]["mypy"]["files"]) >= {"explorer", "benchmarks"}
    assert not _ignored(config)  # every module's errors are reported (issue 52 item 3)
    strict = next(o for o in config["tool"]["mypy"]["overrides"] if "explorer.document.*" in o["module"])
    assert "explorer.core.*" in strict["module"]  # and the core: strict, but for a named list
    assert strict["disallow_untyped_defs"] and strict["disallow_incomplete_defs"]
    test_extra = config["project"]["optional-dependencies"]["test"]
    assert any(dependency.startswith("mypy==") for dependency in test_extra)  # pinned
    assert "$(BIN)/mypy" in (ROOT / "Makefile").read_text()


def test_a_call_to_a_renamed_kernel_function_is_a_type_error(tmp_path, monkeypatch):
    api = pytest.importorskip("mypy.api", reason="mypy is in the test extra")
    monkeypatch.chdir(ROOT)  # where mypy finds the explorer package
    script = tmp_path / "old_name.py"
    script.write_text("from explorer.kernels.suites import gemm\n\n"
                      "def product(backend):\n"
                      "    return gemm._prepare(backend, 'fp32', 8, 8, 8)\n\n"
                      "def renamed(backend):\n"
                      "    return gemm.prepare_product(backend, 'fp32', 8, 8, 8)\n")
    out, _, status = api.run(["--config-file", str(ROOT / "pyproject.toml"), "--cache-dir",
                              str(tmp_path / "cache"), "--follow-imports", "silent", str(script)])
    assert status == 1
    assert 'old_name.py:4: error: Module has no attribute "_prepare"' in out
    assert "old_name.py:7" not in out
