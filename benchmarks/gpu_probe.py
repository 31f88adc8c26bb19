"""The first step of a GPU check run: what software drives the GPU, and how NVML sees us.

Prints the driver, the CUDA runtime, CuPy, ml_dtypes (bf16 arrays) and NVML versions, the
device, then the compute processes NVML lists on the device before and after this process
creates its CUDA context, next to our own process id (and the ids /proc gives us in each
namespace). In a container NVML lists host ids: the line ``ours listed`` says whether the
foreign-load check can recognise us by id, and ``foreign`` what it concludes either way.

    python benchmarks/gpu_probe.py [--device N] [--ncu]

``--ncu`` then checks the profile reader against the GPU's counters (``ncu_check.py``: its
capture and ``==CHECK==`` lines follow the probe's, so the log is a capture the app reads).
Exits 1 when CuPy or a GPU is missing (it says which) or the ncu check fails, 3
(``ncu_check.NOT_RUN``) when the ncu check could not run (no ncu, no profiling rights), 0
otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path
from typing import Any


def _namespace_ids() -> str:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("NSpid:"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def _version(module: str) -> str:
    try:
        imported = __import__(module)
    except Exception as exc:  # missing, or broken: say which
        return f"not available ({type(exc).__name__}: {exc})"
    version = getattr(imported, "__version__", None)
    if version is None:
        from importlib import metadata
        try:
            version = metadata.version(module.replace("_", "-"))
        except metadata.PackageNotFoundError:
            version = "installed"
    return version


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", type=int, default=0)
    parser.add_argument("--ncu", action="store_true",
                        help="then profile the app's triad and product with Nsight Compute and check "
                             "the counts")
    args = parser.parse_args(argv)
    from explorer.kernels.load import foreign_processes

    print(f"python {sys.version.split()[0]}; cupy {_version('cupy')}; numpy {_version('numpy')}; "
          f"ml_dtypes {_version('ml_dtypes')}; pynvml {_version('pynvml')}; "
          f"pytest {_version('pytest')}; pytest_timeout {_version('pytest_timeout')}")
    try:
        import cupy as cp

        runtime = cp.cuda.runtime
        print(f"driver API {runtime.driverGetVersion()}; CUDA runtime {runtime.runtimeGetVersion()}; "
              f"devices {runtime.getDeviceCount()}")
    except Exception as exc:
        print(f"no GPU to probe: {type(exc).__name__}: {exc}")
        return 1
    nvml: Any = None  # pynvml, once imported
    handle: Any = None
    started = False
    try:
        import pynvml

        nvml = pynvml
        nvml.nvmlInit()
        started = True
        properties = runtime.getDeviceProperties(args.device)
        bus = properties.get("pciBusID")
        print(f"NVML driver {nvml.nvmlSystemGetDriverVersion()}; NVML {nvml.nvmlSystemGetNVMLVersion()}")
        handle = nvml.nvmlDeviceGetHandleByIndex(args.device)
        print(f"device {args.device}: {properties['name']!r}, PCI bus {bus}, "
              f"L2 {properties['l2CacheSize']:,} B")
    except Exception as exc:
        print(f"NVML not usable: {type(exc).__name__}: {exc} (the foreign-load check will be off)")

    def listed() -> list[int]:
        if handle is None:
            return []
        try:
            return [p.pid for p in nvml.nvmlDeviceGetComputeRunningProcesses(handle)]
        except nvml.NVMLError as exc:
            print(f"NVML cannot list the processes: {exc}")
            return []

    print(f"our pid {os.getpid()}; ids in each pid namespace (NSpid) {_namespace_ids()}")
    before = listed()
    print(f"NVML compute processes before our context: {before}")
    with cp.cuda.Device(args.device):
        cp.zeros(1 << 20, dtype=cp.float32).sum().item()  # a context, memory and a kernel
        after = listed()
    print(f"NVML compute processes with our context:   {after}")
    print(f"ours listed: {os.getpid() in after}; appeared with our context: "
          f"{sorted(set(after) - set(before))}")
    count, detail = foreign_processes(after, os.getpid())
    print(f"foreign: {count} ({detail})")
    if started:
        with contextlib.suppress(nvml.NVMLError):
            nvml.nvmlShutdown()
    if args.ncu:
        import ncu_check  # beside this script

        sys.stdout.flush()
        return ncu_check.main([])
    return 0


if __name__ == "__main__":
    sys.exit(main())
