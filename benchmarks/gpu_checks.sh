#!/usr/bin/env bash
# Every GPU check in one command, for a machine with an NVIDIA GPU, CuPy (cupy-cuda12x or
# cupy-cuda13x), NumPy, PyYAML and pytest (no Qt needed). Each step writes its log and
# results straight into $OUT (or benchmarks/results) as it finishes, so a step killed by its
# time limit, or the whole command killed, keeps what the steps before it wrote. The limits,
# with each step's 2 s to stop, stay at least 60 s under the 520 s a lent machine gives; the
# steps write at most 8 files (a bench killed hard leaves its journal: settle_journal.py
# turns it into bench-quick.json). --dry-run says the worst case, the files and which
# docs' claim each step checks. The probe ends with the ncu check
# (Nsight Compute's counts of the app's triad and product, read back by the app's reader:
# probe.log is then a capture to keep under tests/data). The quick plan runs once (bench);
# gpu_suite.py judges its points against the datasheet and adds the references; calibrate
# fits the expected time's factors to the same run's shapes and streams and checks them on
# its held-out shapes (the profile goes to /tmp: its table is in calibrate.log). Exits 1 if
# any step failed, and says which; else 3 if the probe's ncu check could not run (no ncu, or
# no profiling rights), said as NOT RUN, never as passed.
#
#   benchmarks/gpu_checks.sh            run every step
#   benchmarks/gpu_checks.sh --dry-run  print the plan: steps, limits, claims, worst case, files
set -u -o pipefail
cd "$(dirname "$0")/.."
out=${OUT:-benchmarks/results}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
PYTHON=${PYTHON:-python3}
LOAD_CHECK=${LOAD_CHECK:-}  # set to --no-load-check to read no foreign load (said in the results)
# A per-test limit where pytest-timeout is installed (the test extra has it); without it the
# step's own limit still holds, and the probe's log says the plugin is missing.
PER_TEST=$("$PYTHON" -c "import pytest_timeout" 2>/dev/null && echo "--timeout=100")
MACHINE_S=520  # what a lent GPU machine gives the whole command
MARGIN_S=60    # kept free of it: start-up, the copy back, a slow disk
STOP_S=2       # each step's grace after its limit (timeout --kill-after)
SETTLE_S=5     # the bench's journal made its results file, or moved out (settle_journal.py)

# name | seconds | files it writes (besides NAME.log) | the docs' claim it checks | command
PLAN=(
    "probe|45||versions; NVML sees our process (foreign load); ncu's counts = the reader's (or NOT RUN)|$PYTHON benchmarks/gpu_probe.py --ncu"
    "gpu-tests|115||the GPU kernels compute right results (gpu-marked tests)|$PYTHON -m pytest -v -m gpu -rs $PER_TEST -p no:cacheprovider tests/kernels"
    "bench-quick|150|bench-quick.json|bench --suite quick runs on a GPU; power per point over >= 1 s|$PYTHON -m explorer bench --backend cupy --suite quick $LOAD_CHECK --out $out/bench-quick.json"
    "timer-agreement|35||our kernel times = cupyx.profiler.benchmark's within 5 %|$PYTHON benchmarks/timer_agreement.py --gpu-only"
    "gpu-references|80|gpu-references.json|ours >= 0.95 of float4 raw kernels and torch.matmul; share of datasheet|$PYTHON benchmarks/gpu_suite.py --results $out/bench-quick.json --out $out/gpu-references.json"
    "calibrate|15||the expected time's factors predict held-out shapes; the energy fit|$PYTHON -m explorer calibrate --results $out/bench-quick.json --out /tmp/roofline-calibration.yaml"
)

if [ "${1:-}" = "--dry-run" ]; then
    total=0
    files=()
    for entry in "${PLAN[@]}"; do
        IFS='|' read -r name limit extra claim command <<< "$entry"
        total=$((total + limit))
        files+=("$name.log")
        [ -n "$extra" ] && files+=("$extra")
        printf '%-16s %4d s  %s\n' "$name" "$limit" "$command"
        printf '%-16s         docs claim: %s\n' "" "$claim"
    done
    worst=$((total + STOP_S * ${#PLAN[@]} + SETTLE_S))
    echo "total: $total s ($worst s at worst: each step has $STOP_S s to stop, the journal $SETTLE_S s)"
    echo "worst case $worst s of the machine's $MACHINE_S s: $((MACHINE_S - worst)) s to spare (at least $MARGIN_S)"
    echo "files (${#files[@]}) in $out: ${files[*]}"
    if [ $worst -gt $((MACHINE_S - MARGIN_S)) ] || [ ${#files[@]} -gt 8 ]; then
        echo "the plan does not fit: at most $((MACHINE_S - MARGIN_S)) s and 8 files"
        exit 1
    fi
    exit 0
fi

NOT_RUN=3  # the probe's exit status when its ncu check could not run (benchmarks/ncu_check.py)
mkdir -p "$out"
failed=()
not_run=()
for entry in "${PLAN[@]}"; do
    IFS='|' read -r name limit _ _ command <<< "$entry"
    echo "== $name (at most $limit s)"
    # shellcheck disable=SC2086  # the command is split into words on purpose
    timeout --kill-after=$STOP_S "$limit" $command > "$out/$name.log" 2>&1
    status=$?
    if [ "$name" = bench-quick ]; then  # a bench killed hard leaves its journal: no ninth file
        timeout --kill-after=1 $((SETTLE_S - 1)) "$PYTHON" benchmarks/settle_journal.py "$out" \
            "$out/bench-quick.json" >> "$out/$name.log" 2>&1
    fi
    tail -n 25 "$out/$name.log"
    if [ "$name" = probe ] && [ $status -eq $NOT_RUN ]; then  # (pytest's 3 is an internal error)
        not_run+=("$name")
    elif [ $status -ne 0 ]; then
        { [ $status -eq 124 ] || [ $status -eq 137 ]; } && echo "($name ran past its $limit s limit)"
        failed+=("$name")
    fi
done
[ ${#not_run[@]} -gt 0 ] && echo "NOT RUN (nothing checked; see their logs): ${not_run[*]}"
if [ ${#failed[@]} -gt 0 ]; then
    echo "failed: ${failed[*]}"
    exit 1
fi
if [ ${#not_run[@]} -gt 0 ]; then
    echo "the other GPU checks passed"
    exit $NOT_RUN
fi
echo "all GPU checks passed"
