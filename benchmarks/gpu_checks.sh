#!/usr/bin/env bash
# Every GPU check in one run, for a machine with an NVIDIA GPU, CuPy, NumPy, PyYAML and
# pytest (no Qt needed): the gpu-marked tests, the bench command, timer agreement with
# cupyx.profiler.benchmark, and the GPU suite with its references. Logs and results go to
# $OUT (or benchmarks/results). Each step has a time limit; the script exits non-zero if
# any step failed, and says which.
set -u -o pipefail
cd "$(dirname "$0")/.."
out=${OUT:-benchmarks/results}
mkdir -p "$out"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
PYTHON=${PYTHON:-python3}
failed=()
step() {  # step NAME SECONDS COMMAND...
    local name=$1 limit=$2
    shift 2
    echo "== $name"
    timeout "$limit" "$@" 2>&1 | tee "$out/$name.log" || failed+=("$name")
}
step gpu-tests 240 "$PYTHON" -m pytest -q -m gpu -rs -p no:cacheprovider tests/kernels
step bench-quick 150 "$PYTHON" -m explorer bench --backend cupy --suite quick --out "$out/bench-quick.json"
step timer-agreement 90 "$PYTHON" benchmarks/timer_agreement.py --gpu-only
step gpu-suite 240 "$PYTHON" benchmarks/gpu_suite.py --preset quick
cp benchmarks/results/gpu-*.json "$out"/ 2>/dev/null
if [ ${#failed[@]} -gt 0 ]; then
    echo "failed: ${failed[*]}"
    exit 1
fi
echo "all GPU checks passed"
