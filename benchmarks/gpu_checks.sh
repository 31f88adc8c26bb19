#!/usr/bin/env bash
# Every GPU check in one run, for a machine with an NVIDIA GPU, CuPy, NumPy, PyYAML and
# pytest (no Qt needed): the gpu-marked tests, the bench command, timer agreement with
# cupyx.profiler.benchmark, and the full GPU suite with its references. Logs and results
# go to $OUT (or benchmarks/results).
set -u
cd "$(dirname "$0")/.."
out=${OUT:-benchmarks/results}
mkdir -p "$out"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
python3 -m pytest -q -m gpu -rs -p no:cacheprovider tests/kernels 2>&1 | tee "$out/gpu-tests.log"
python3 -m explorer bench --backend cupy --suite quick --out "$out/bench-quick.json" 2>&1 \
    | tee "$out/bench-quick.log"
python3 benchmarks/timer_agreement.py 2>&1 | tee "$out/timer-agreement.log"
python3 benchmarks/gpu_suite.py 2>&1 | tee "$out/gpu-suite.log"
cp benchmarks/results/gpu-*.json "$out"/ 2>/dev/null || true
