#!/bin/sh
# run.sh - the whole test suite: C unit tests, fuzz-corpus replay, command-line
# tests, and the GPU command-line tests when a CUDA device is usable.
# Ends with one line "N passed, N failed" (the sum over every program).
set -u
BUILD=${BUILD:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
total_pass=0
total_fail=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# Runs one test program, adds up its "N passed, N failed" line.
run_one() {
    name=$1
    shift
    t0=$(date +%s)
    "$@" >"$log" 2>&1
    status=$?
    secs=$(($(date +%s) - t0))
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
    if [ -z "$line" ]; then
        p=0
        f=1
        echo "FAIL $name: no summary line (exit $status, ${secs} s)"
        tail -n 20 "$log"
    else
        p=${line%% passed*}
        f=${line#*passed, }
        f=${f%% failed*}
        if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
            f=1
        fi
        if [ "$f" -ne 0 ]; then
            echo "FAIL $name: $line (${secs} s)"
            grep -v -E '^[0-9]+ passed' "$log" | tail -n 30
        else
            echo "ok   $name: $line (${secs} s)"
            grep -E '^skip ' "$log"
        fi
    fi
    total_pass=$((total_pass + p))
    total_fail=$((total_fail + f))
}

for t in "$BUILD"/tests/test_*; do
    [ -x "$t" ] || continue
    run_one "unit/${t##*/}" "$t"
done
for h in "$BUILD"/fuzz/fuzz_*; do
    [ -x "$h" ] || continue
    name=${h##*/fuzz_}
    [ -d "tests/fuzz/corpus/$name" ] || continue
    run_one "fuzz-replay/$name" "$h" "tests/fuzz/corpus/$name"
done
for t in tests/cli/test_*.sh; do
    [ -f "$t" ] || continue
    run_one "cli/${t##*/}" sh "$t"
done
if ./gpubatch info 2>/dev/null | grep -q '^device 0:'; then
    for t in tests/gpu/test_*.sh; do
        [ -f "$t" ] || continue
        run_one "gpu/${t##*/}" sh "$t"
    done
else
    echo "skip gpu tests: no usable CUDA device"
fi
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
