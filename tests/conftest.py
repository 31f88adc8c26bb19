"""Test setup shared by every test.

Qt must run offscreen: without a display and without this, Qt aborts the whole
run (rc 134) instead of failing a test.
"""

import atexit
import os
import shutil
import sys
import tempfile

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Tests never touch the user's own data folder (custom devices, autosave, results) nor share
# the temporary folder (where run journals fall back to) with other runs; both live in one
# folder that is removed when the run ends.
os.environ["ROOFLINE_EXPLORER_TEST_ROOT"] = tempfile.mkdtemp(prefix="roofline-explorer-test-")
os.environ["ROOFLINE_EXPLORER_DATA"] = os.path.join(os.environ["ROOFLINE_EXPLORER_TEST_ROOT"], "data")
os.environ["TMPDIR"] = os.path.join(os.environ["ROOFLINE_EXPLORER_TEST_ROOT"], "tmp")

import pytest

from explorer.core.hardware.catalog import load_catalog
from explorer.core.model.presets import load_models

os.makedirs(os.environ["TMPDIR"])
try:  # a lent GPU machine may have pytest alone: its gpu-marked tests need no hypothesis
    from hypothesis import settings
except ImportError:
    settings = None
if settings is not None:
    # Loader fuzzing (tests/fuzz): a few hundred examples per loader in the suite; `make fuzz`
    # runs the long profile.
    settings.register_profile("ci", max_examples=150, derandomize=True)
    settings.register_profile("wide", max_examples=2_000)
    settings.register_profile("long", max_examples=50_000)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
tempfile.tempdir = os.environ["TMPDIR"]
atexit.register(shutil.rmtree, os.environ["ROOFLINE_EXPLORER_TEST_ROOT"], ignore_errors=True)


@pytest.fixture(scope="session")
def catalog():
    return load_catalog()


@pytest.fixture(scope="session")
def models():
    return load_models()


@pytest.fixture(autouse=True)
def no_dangling_threads():
    """Fail a test that leaves one of the app's worker threads running."""
    import threading
    import time

    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + 2.0
    while True:
        left = [t for t in threading.enumerate()
                if t not in before and t.is_alive() and t.name.startswith("explorer")]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    assert not left, f"threads left running: {[t.name for t in left]}"


@pytest.fixture(autouse=True, scope="session")
def widgets_application():
    """The widgets' QApplication, made before any test runs an export in this process: the
    export command makes a bare QGuiApplication when none exists, and a window test after it
    could then make no QApplication (Qt aborts the whole run). Where PySide6 is not
    installed (a lent GPU machine runs the kernels' tests alone), nothing."""
    try:
        from PySide6 import QtWidgets
    except ImportError:
        yield None
        return
    yield QtWidgets.QApplication.instance() or QtWidgets.QApplication([])


@pytest.fixture(scope="session")
def numpy_backend():
    from explorer.kernels.backends import NumpyBackend

    return NumpyBackend()


@pytest.fixture(scope="session")
def cupy_backend():
    """The GPU backend, or a skip that says why there is none."""
    from explorer.kernels import gpuinfo
    from explorer.kernels.backends import CupyBackend

    info = gpuinfo.detect_gpu(0)
    if isinstance(info, gpuinfo.Unavailable):
        pytest.skip(f"no GPU for the cupy backend: {info.reason}")
    return CupyBackend(0)


@pytest.fixture
def cupy_double(monkeypatch):
    """A CuPy built on NumPy as ``cupy`` (tests/fakes/cupy_double): the GPU code paths run on
    the host; launching compiled CUDA raises its ``NoGpu``. No NVML: energy is not read."""
    from explorer.kernels import cuda_sources
    from tests.fakes import cupy_double

    cupy_double.install(monkeypatch)
    monkeypatch.setitem(sys.modules, "pynvml", None)  # ``import pynvml`` fails, as without the extra
    monkeypatch.setattr(cuda_sources, "_modules", {})  # modules are kept per device: none yet
    return cupy_double


@pytest.fixture
def mixtral(tmp_path):
    """Mixtral 8×7B's config.json (tests/core/test_hf_config.py), in a folder named as the
    model's repository: the name a config takes from its folder."""
    import json

    from tests.core.test_hf_config import MIXTRAL_8X7B

    path = tmp_path / "Mixtral-8x7B-v0.1" / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps(MIXTRAL_8X7B))
    return path
