"""benchmarks/gpu_checks.sh must fit one command on a lent GPU machine: its plan (steps,
limits, files) is checked here, without a GPU, and every command it runs must exist."""

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "gpu_checks.sh"


def dry_run(out: Path) -> str:
    return subprocess.run(["bash", str(SCRIPT), "--dry-run"], capture_output=True, text=True, check=True,
                          env={**os.environ, "OUT": str(out), "PYTHON": sys.executable}).stdout


def test_the_plan_fits_one_command_and_eight_files(tmp_path):
    plan = dry_run(tmp_path / "out")
    steps = re.findall(r"^(\S+)\s+(\d+) s  (.+)$", plan, re.M)
    assert next(name for name, _, _ in steps) == "probe"  # versions and NVML's view first
    total = sum(int(limit) for _, limit, _ in steps)
    worst = total + 2 * len(steps) + 5  # each step's limit, at most 2 s to stop it, 5 s for a journal
    assert f"total: {total} s ({worst} s at worst" in plan and worst <= 520 - 60  # a minute to spare
    assert f"worst case {worst} s of the machine's 520 s: {520 - worst} s to spare" in plan
    assert len(re.findall(r"^\s+docs claim: \S", plan, re.M)) == len(steps)  # each step says what it checks
    files = re.search(r"^files \((\d+)\) in (\S+): (.+)$", plan, re.M)
    assert int(files.group(1)) <= 8 and files.group(2) == str(tmp_path / "out")
    assert len(files.group(3).split()) == int(files.group(1))
    assert not (tmp_path / "out").exists()  # a dry run writes nothing
    quick = [command for _, _, command in steps if "quick" in command]
    assert len([c for c in quick if "bench" in c and "--suite quick" in c]) == 1  # the plan runs once
    assert "--results" in next(c for _, _, c in steps if "gpu_suite.py" in c)
    assert "--timeout=100" in next(c for _, _, c in steps if "pytest" in c)


def test_every_step_s_program_and_options_exist(tmp_path):
    """Each step's command answers --help with the options the plan passes (a typo would
    waste the one run on a GPU)."""
    for _, _, command in re.findall(r"^(\S+)\s+(\d+) s  (.+)$", dry_run(tmp_path), re.M):
        words = command.split()
        if words[1:3] == ["-m", "pytest"]:
            continue  # pytest-timeout's option: checked by importing the plugin below
        program = words[1:3] if words[1] == "-m" else words[1:2]
        command_word = [words[3]] if "explorer" in program else []  # the subcommand after -m explorer
        help_text = subprocess.run([sys.executable, *program, *command_word,
                                    "--help"], capture_output=True, text=True, cwd=ROOT,
                                   env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout
        for option in (w.split("=")[0] for w in words if w.startswith("--")):
            assert option in help_text, f"{command}: {option} is not an option"
    import pytest_timeout  # noqa: F401  (the test extra installs it)


class _FakeRuntime:
    def driverGetVersion(self):
        return 13000

    def runtimeGetVersion(self):
        return 13000

    def getDeviceCount(self):
        return 1

    def getDeviceProperties(self, device):
        return {"name": b"Fake GPU", "pciBusID": 1, "l2CacheSize": 50 << 20}


def _fake_cupy():
    import contextlib
    import types

    class Array:
        def sum(self):
            return self

        def item(self):
            return 0.0

    cuda = types.SimpleNamespace(runtime=_FakeRuntime(), Device=lambda n: contextlib.nullcontext())
    return types.SimpleNamespace(__version__="14.2.0", cuda=cuda, float32="float32",
                                 zeros=lambda *a, **k: Array())


def _fake_nvml(fail_init: bool, pids=()):
    import types

    class NVMLError(Exception):
        pass

    state = {"shutdowns": 0}

    def init():
        if fail_init:
            raise NVMLError("Driver Not Loaded")

    def shutdown():
        if fail_init:
            raise NVMLError("Uninitialized")
        state["shutdowns"] += 1

    return types.SimpleNamespace(
        __version__="13.0", NVMLError=NVMLError, nvmlInit=init, nvmlShutdown=shutdown, state=state,
        nvmlSystemGetDriverVersion=lambda: "580.0", nvmlSystemGetNVMLVersion=lambda: "13.580",
        nvmlDeviceGetHandleByIndex=lambda i: i,
        nvmlDeviceGetComputeRunningProcesses=lambda h: [types.SimpleNamespace(pid=p) for p in pids])


def test_the_probe_reports_nvml_s_view_and_survives_nvml_failing(monkeypatch, capsys):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import gpu_probe
    finally:
        sys.path.pop(0)
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy())
    nvml = _fake_nvml(fail_init=False, pids=(4242,))
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    assert gpu_probe.main([]) == 0
    out = capsys.readouterr().out
    assert f"our pid {os.getpid()}" in out and "NVML compute processes with our context:   [4242]" in out
    assert "ours listed: False" in out and "foreign: 0 (no other process on the GPU (NVML lists" in out
    assert nvml.state["shutdowns"] == 1
    monkeypatch.setitem(sys.modules, "pynvml", _fake_nvml(fail_init=True))
    assert gpu_probe.main([]) == 0  # NVML that cannot start is said, not a failed step
    assert "NVML not usable: NVMLError: Driver Not Loaded" in capsys.readouterr().out


def _run_with_fake_python(tmp_path: Path, exits: dict[str, int]) -> subprocess.CompletedProcess:
    """The whole script with every step's program a stub: exit status by script name."""
    python = tmp_path / "python"
    cases = "".join(f'    *"{name}"*) exit {status} ;;\n' for name, status in exits.items())
    python.write_text(f'#!/bin/sh\necho "$@"\ncase "$*" in\n{cases}esac\nexit 0\n')
    python.chmod(0o755)
    return subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True,
                          env={**os.environ, "OUT": str(tmp_path / "out"), "PYTHON": str(python)})


def test_a_check_that_could_not_run_is_said_not_run_never_passed(tmp_path):
    done = _run_with_fake_python(tmp_path, {"gpu_probe.py": 3})  # ncu_check.NOT_RUN: no ncu
    assert done.returncode == 3, done.stdout
    assert "NOT RUN (nothing checked; see their logs): probe" in done.stdout
    assert "all GPU checks passed" not in done.stdout
    failed = _run_with_fake_python(tmp_path, {"gpu_probe.py": 3, "gpu_suite.py": 1})
    assert failed.returncode == 1 and "failed: gpu-references" in failed.stdout
    assert _run_with_fake_python(tmp_path, {}).stdout.rstrip().endswith("all GPU checks passed")
    crashed = _run_with_fake_python(tmp_path, {"-m pytest": 3})  # pytest's internal error
    assert crashed.returncode == 1 and "failed: gpu-tests" in crashed.stdout


def test_a_bench_killed_hard_leaves_its_points_in_the_results_file_not_a_ninth_file(tmp_path, monkeypatch):
    from explorer.kernels import journal
    from explorer.kernels.backends import NumpyBackend
    from explorer.kernels.results import load_results
    from explorer.kernels.runner import results_of
    from tests.kernels.test_results import point

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import settle_journal
    finally:
        sys.path.pop(0)
    out = tmp_path / "out"
    written = journal.Journal(out, results_of(NumpyBackend(), ["stream"], "smoke", [], None, cancelled=True))
    written.add(point())
    written.close()  # and never discarded: the bench was killed
    monkeypatch.setattr(journal, "recorded_alive", lambda process: False)
    assert settle_journal.main([str(out), str(out / "bench-quick.json")]) == 0
    assert [p.name for p in out.iterdir()] == ["bench-quick.json"]
    assert len(load_results(out / "bench-quick.json").points) == 1


def test_the_gpu_extras_declare_the_numpy_their_bf16_arrays_need():
    """CuPy 14's bf16 arrays (ml_dtypes) need NumPy 2.1.2 or newer; the app alone does not."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for name in ("gpu", "gpu-cuda13"):
        assert "numpy>=2.1.2" in extras[name] and any(d.startswith("ml_dtypes") for d in extras[name])
