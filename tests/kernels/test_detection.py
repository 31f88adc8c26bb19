"""GPU detection never raises: it names the reason a person can act on (CuPy mocked)."""

import types

import pytest

from explorer.kernels import gpuinfo
from explorer.kernels.backends import BackendUnavailable, CupyBackend, open_backend


class CUDARuntimeError(RuntimeError):
    """Stands in for cupy_backends.cuda.api.runtime.CUDARuntimeError."""


def fake_cupy(count=1, count_error=None, props_error=None, props=None):
    runtime = types.SimpleNamespace()

    def get_count():
        if count_error:
            raise count_error
        return count

    def get_props(device):
        if props_error:
            raise props_error
        return props or {"name": b"NVIDIA H200", "multiProcessorCount": 132,
                         "clockRate": 1_980_000, "memoryClockRate": 2_619_000,
                         "memoryBusWidth": 6144, "l2CacheSize": 62_914_560,
                         "totalGlobalMem": 150_754_820_096, "major": 9, "minor": 0}

    runtime.getDeviceCount = get_count
    runtime.getDeviceProperties = get_props
    runtime.memGetInfo = lambda: (1, 2)
    runtime.driverGetVersion = lambda: 12080
    runtime.runtimeGetVersion = lambda: 12060

    class Device:
        def __init__(self, index):
            self.attributes = {}

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    cuda = types.SimpleNamespace(runtime=runtime, Device=Device)
    return types.SimpleNamespace(cuda=cuda, __version__="14.0.0")


def importer_for(module):
    def importer(name):
        assert name == "cupy"
        return module
    return importer


def test_cupy_missing_says_how_to_install():
    def missing(name):
        raise ImportError("No module named 'cupy'")

    result = gpuinfo.detect_gpu(0, missing)
    assert isinstance(result, gpuinfo.Unavailable) and not result
    assert result.reason == "CuPy is not installed: pip install 'roofline-explorer[gpu]'"


def test_cupy_that_fails_to_import():
    def broken(name):
        raise OSError("libcudart.so.12: cannot open shared object file")

    result = gpuinfo.detect_gpu(0, broken)
    assert "CuPy is installed but failed to import: libcudart.so.12" in result.reason


def test_no_driver():
    error = CUDARuntimeError("cudaErrorInsufficientDriver: CUDA driver version is insufficient")
    result = gpuinfo.detect_gpu(0, importer_for(fake_cupy(count_error=error)))
    assert result.reason.startswith("no CUDA driver or GPU found")
    assert "use the numpy backend" in result.reason


def test_zero_devices_and_a_wrong_index():
    assert "0 devices" in gpuinfo.detect_gpu(0, importer_for(fake_cupy(count=0))).reason
    reason = gpuinfo.detect_gpu(3, importer_for(fake_cupy(count=2))).reason
    assert reason == "there is no GPU number 3: this machine has 2 (numbered 0 to 1)"


def test_device_present_but_unusable():
    error = CUDARuntimeError("cudaErrorDevicesUnavailable: all CUDA-capable devices are busy")
    result = gpuinfo.detect_gpu(0, importer_for(fake_cupy(props_error=error)))
    assert result.reason.startswith("GPU 0 is present but unusable: cudaErrorDevicesUnavailable")


def test_a_working_device_is_described():
    info = gpuinfo.detect_gpu(0, importer_for(fake_cupy()))
    assert isinstance(info, gpuinfo.GpuInfo)
    assert (info.name, info.sm_count, info.compute_capability) == ("NVIDIA H200", 132, "9.0")
    assert (info.driver_version, info.runtime_version, info.cupy_version) == ("12.8", "12.6", "14.0.0")
    assert info.l2_bytes == 60 * 2**20
    # Derived: 2 transfers × 2.619 GHz × 6144 bits / 8 = 4.02 TB/s.
    assert info.theoretical_bandwidth == pytest.approx(2 * 2.619e9 * 6144 / 8)
    assert info.to_dict()["theoretical_bandwidth_derived"] == info.theoretical_bandwidth


def test_cuda13_properties_without_clocks_fall_back_to_attributes():
    props = {"name": "NVIDIA B200", "multiProcessorCount": 148, "l2CacheSize": 0,
             "totalGlobalMem": 1, "major": 10, "minor": 0}
    module = fake_cupy(props=props)

    class Device:
        def __init__(self, index):
            self.attributes = {"ClockRate": 1_965_000, "L2CacheSize": 126 * 2**20}

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    module.cuda.Device = Device
    info = gpuinfo.detect_gpu(0, importer_for(module))
    assert info.clock_hz == 1.965e9 and info.l2_bytes == 126 * 2**20
    assert info.memory_clock_hz is None and info.theoretical_bandwidth is None


def test_cupy_backend_reports_why_it_cannot_run(monkeypatch):
    monkeypatch.setattr(gpuinfo, "detect_gpu", lambda device: gpuinfo.Unavailable("no CUDA driver"))
    with pytest.raises(BackendUnavailable, match="no CUDA driver"):
        CupyBackend(0)
    with pytest.raises(BackendUnavailable, match="unknown backend 'opencl'"):
        open_backend("opencl")


def test_detection_on_this_machine_never_raises():
    result = gpuinfo.detect_gpu(0)
    assert isinstance(result, gpuinfo.GpuInfo | gpuinfo.Unavailable)
