"""Energy meters read through fakes: RAPL's powercap files (wrapping counters, root-only
files, a machine without them) and NVML's energy counter; the counter's step read at run
time sizes each window (1 s at least on NVML, whose counter moves every ~100 ms) and each
power's uncertainty; a run records each point's power, or says once why it could not."""

import threading
import time
import types
from pathlib import Path

import pytest

from explorer.kernels import energy
from explorer.kernels.energy import NvmlMeter, RaplMeter, Unmeasurable
from explorer.kernels.energy_window import CounterStep
from explorer.kernels.runner import drive, run


def rapl(root, packages):
    """A powercap folder: each package (energy_uj, max_energy_range_uj) and a core
    sub-domain, which a package's counter already includes."""
    for i, (counter, span) in enumerate(packages):
        d = root / f"intel-rapl:{i}"
        d.mkdir(parents=True)
        (d / "name").write_text(f"package-{i}\n")
        (d / "energy_uj").write_text(f"{counter}\n")
        (d / "max_energy_range_uj").write_text(f"{span}\n")
        (root / f"intel-rapl:{i}:0").mkdir()
        (root / f"intel-rapl:{i}:0" / "energy_uj").write_text("999999999\n")
    return root


def step_of(seconds: float, joules: float = 0.1):
    """A step probe that finds the counter moving every ``seconds`` (no waiting)."""
    return lambda read, resolution_j: CounterStep(seconds, joules, resolution_j)


def test_two_packages_add_up_across_a_wrap(tmp_path, monkeypatch):
    root = rapl(tmp_path / "powercap", [(1_000_000, 10_000_000), (9_900_000, 10_000_000)])
    meter = RaplMeter.probe(root, step_of(1e-3))
    assert isinstance(meter, RaplMeter) and meter.source == "RAPL package energy (2 packages)"
    ticks = iter([100.0, 100.5])
    monkeypatch.setattr(energy.time, "monotonic", lambda: next(ticks))
    token = meter.start()
    (root / "intel-rapl:0" / "energy_uj").write_text("6000000\n")  # +5 J
    (root / "intel-rapl:1" / "energy_uj").write_text("100000\n")  # wrapped: +0.200001 J
    power = meter.stop(token)
    assert power.joules == pytest.approx(5.0 + 0.200001)
    assert power.watts == pytest.approx(power.joules / 0.5) and power.seconds == pytest.approx(0.5)
    # ± one 1-ms update's energy at that power, and a microjoule, over the half second
    assert power.uncertainty_w == pytest.approx((power.watts * 1e-3 + 1e-6) / 0.5)
    assert meter.window_s == 0.05  # 10 steps of 1 ms are less than RAPL's floor


def test_a_rapl_counter_that_never_moves_is_not_read(tmp_path):
    root = rapl(tmp_path / "powercap", [(1_000_000, 10_000_000)])
    got = RaplMeter.probe(root, lambda read, resolution_j: None)
    assert isinstance(got, Unmeasurable) and "did not move" in got.reason


def test_the_platform_domain_is_not_a_package(tmp_path):
    """Intel client chips list "psys" (the platform, packages included) beside the package:
    adding it would count the package twice."""
    root = rapl(tmp_path / "powercap", [(1_000_000, 10_000_000), (5_000_000, 10_000_000)])
    (root / "intel-rapl:1" / "name").write_text("psys\n")
    meter = RaplMeter.probe(root, step_of(1e-3))
    assert meter.domains == [root / "intel-rapl:0"] and meter.source == "RAPL package energy (1 package)"


@pytest.mark.skipif(not Path("/sys/devices/system/cpu/cpu0/topology/core_id").exists(),
                    reason="no sysfs CPU topology here")
def test_a_sysfs_attribute_is_read_whatever_size_it_reports():
    """sysfs reports a page (4,096 bytes) as every attribute's size: a smaller read limit
    would refuse the counters on every real machine."""
    from explorer.kernels.energy import _number

    assert _number(Path("/sys/devices/system/cpu/cpu0/topology/core_id")) >= 0


def test_a_machine_without_powercap_says_why(tmp_path):
    got = RaplMeter.probe(tmp_path / "absent")
    assert isinstance(got, Unmeasurable) and "is absent (a virtual machine" in got.reason


def test_root_only_counters_say_how_to_read_them(tmp_path, monkeypatch):
    """Since Linux 5.10 energy_uj is mode 0400: the read fails as reading.read_text says."""
    from explorer.core.files.errors import DataFileError

    root = rapl(tmp_path / "powercap", [(1, 10)])
    real = energy.read_text  # (the step is never probed: the first read fails)

    def denied(path, limit):
        if path.name == "energy_uj":
            raise DataFileError(path, "cannot be read: Permission denied")
        return real(path, limit)

    monkeypatch.setattr(energy, "read_text", denied)
    got = RaplMeter.probe(root)
    assert isinstance(got, Unmeasurable) and "readable by root only" in got.reason and "chmod" in got.reason


def test_this_machine_either_measures_energy_or_says_why():
    got = RaplMeter.probe()
    assert isinstance(got, RaplMeter) or got.reason.startswith(("no RAPL", "no package", "/sys", "the RAPL"))


def fake_nvml(millijoules, fail=False):
    class NVMLError(Exception):
        pass

    def total(handle):
        if fail:
            raise NVMLError("Not Supported")
        return next(millijoules)

    return types.SimpleNamespace(NVMLError=NVMLError, nvmlInit=lambda: None,
                                 nvmlDeviceGetHandleByIndex=lambda i: f"gpu{i}",
                                 nvmlDeviceGetHandleByPciBusId=lambda bus: bus,
                                 nvmlDeviceGetTotalEnergyConsumption=total)


def test_nvml_gives_the_energy_between_two_reads(monkeypatch):
    meter = NvmlMeter.probe(0, importer=lambda: fake_nvml(iter([5_000, 5_000, 305_000])),
                            step_probe=step_of(0.1, 30.0))
    assert meter.window_s == 1.0  # ten 100-ms steps: NVML's windows last a second at least
    ticks = iter([10.0, 11.0])
    monkeypatch.setattr(energy.time, "monotonic", lambda: next(ticks))
    power = meter.stop(meter.start())
    assert power.joules == pytest.approx(300.0) and power.watts == pytest.approx(300.0)
    assert power.uncertainty_w == pytest.approx(300.0 * 0.1 + 1e-3)  # one 100-ms step's energy


def test_an_nvml_window_under_a_second_is_not_read(monkeypatch):
    """Windows of 50-100 ms, as before, would hold 0 or 1 step of NVML's counter: noise."""
    meter = NvmlMeter.probe(0, importer=lambda: fake_nvml(iter([5_000, 5_000, 35_000])),
                            step_probe=step_of(0.1))
    ticks = iter([10.0, 10.1])
    monkeypatch.setattr(energy.time, "monotonic", lambda: next(ticks))
    assert meter.stop(meter.start()) is None


def test_a_slower_counter_gets_longer_windows():
    meter = NvmlMeter.probe(0, importer=lambda: fake_nvml(iter([5_000])), step_probe=step_of(0.25))
    assert meter.window_s == pytest.approx(2.5)
    note = energy.describe_meter(meter)
    assert "moves every 250 ms" in note and "± 10.0% at most" in note


def test_a_gpu_without_an_energy_counter_or_nvml_says_why():
    old = NvmlMeter.probe(0, importer=lambda: fake_nvml(iter([]), fail=True))
    assert isinstance(old, Unmeasurable)
    assert "NVML gives no energy counter for this GPU: Not Supported" in old.reason

    def missing():
        raise ImportError("No module named 'pynvml'")

    assert "nvidia-ml-py is not installed" in NvmlMeter.probe(0, importer=missing).reason


class SteadyMeter:
    """A meter whose reads say 40 W ± 1 W over every window (of 50 ms at least, which the run
    must fill: each window's length is kept)."""

    source = "a test meter"
    window_s = 0.05
    step = CounterStep(0.005, 0.2, 1e-6)

    def __init__(self) -> None:
        self.windows: list[float] = []

    def start(self):
        return time.monotonic()

    def stop(self, token):
        self.windows.append(time.monotonic() - token)
        return energy.Power(40.0, 1.0, self.source, 1.0)


def test_a_run_keeps_each_points_power_and_says_where_it_came_from(numpy_backend):
    meter = SteadyMeter()
    results = drive(run(numpy_backend, ["stream"], "smoke", load=None, energy=meter))
    assert results.points and all(p.power_w == 40.0 and p.power_uncertainty_w == 1.0 for p in results.points)
    assert len(meter.windows) == len(results.points) and min(meter.windows) >= meter.window_s  # filled
    assert any(n.startswith("power per point: a test meter, over windows of at least 0.05 s") and
               "moves every 5 ms" in n for n in results.notes)
    none = drive(run(numpy_backend, ["stream"], "smoke", load=None, energy=Unmeasurable("no meter here")))
    assert all(p.power_w is None for p in none.points) and "energy not measured: no meter here" in none.notes


def test_a_cancel_while_the_window_fills_keeps_the_point_measured_without_its_power(numpy_backend):
    """A GPU point spends most of its wall time filling its energy window (a second on
    NVML): a Ctrl+C then must not drop the timing already made, only the short window's
    energy, and the run stops after that point."""
    from explorer.kernels.timing import CancelToken

    class LongWindow(SteadyMeter):
        window_s = 30.0

        def start(self):
            threading.Timer(0.3, cancel.cancel).start()  # while the first case fills its window
            return super().start()

    cancel = CancelToken()
    meter = LongWindow()
    results = drive(run(numpy_backend, ["stream"], "smoke", load=None, energy=meter, cancel=cancel))
    assert results.cancelled and len(results.points) == 1
    assert results.points[0].power_w is None and results.points[0].time_median_s > 0
    assert meter.windows == []  # the short window was never read as a power


def test_a_runs_powers_give_energy_constants(numpy_backend):
    """A steady 40 W whatever the kernel does: all of it is constant power. (Smoke sizes, so
    that it takes seconds; their sets stay in cache, so they are taken here as if they
    streamed from main memory, which the fit requires.)"""
    from dataclasses import replace

    from explorer.commands.bench import summary
    from explorer.kernels.energy import fitted
    from explorer.kernels.reference import Reference

    smoke = drive(run(numpy_backend, ["stream", "intensity", "cache"], "smoke", load=None,
                      energy=SteadyMeter()))
    assert fitted(smoke) == "no point streaming from main memory has a measured power"
    results = replace(smoke, points=tuple(replace(p, dram_traffic=p.suite != "cache") for p in smoke.points))
    constants = fitted(results)
    assert "fp32 kernels of this run (intensity, stream)" in constants.source  # not the cache suite's
    assert constants.constant_w == pytest.approx(40.0, rel=1e-6)
    assert abs(constants.flop_j) < 1e-15 and abs(constants.byte_j) < 1e-15
    text = summary(results, Reference("no reference"))
    assert "energy: ε_flop" in text and "π₀ 40 ± " in text and "fitted to" in text


def test_bench_prints_the_fitted_constants_beside_the_circuit_energies():
    from explorer.commands.bench import _energy_lines
    from explorer.kernels.results import Results
    from tests.core.test_energy import metered_points

    fitted, scale = _energy_lines(Results({"backend": "cupy"}, "cuda", "quick", ("intensity",),
                                          metered_points()))
    assert fitted.startswith("energy: ε_flop 0.6 ± ") and "π₀ 90 ± " in fitted and "(intensity)" in fitted
    assert scale == ("energy at 45 nm circuit energies (fp32, Horowitz, ISSCC 2014), for scale: ε_flop 2.3 "
                     "pJ/FLOP, ε_byte 162 pJ/byte (energy balance 70.7 FLOP/byte)")
