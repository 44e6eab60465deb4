#!/bin/sh
# run.sh [NAME...] - the whole test suite: C unit tests, fuzz-corpus replay,
# command-line tests, and the GPU command-line tests when a CUDA device is
# usable; with NAMEs, only the programs of those names (as printed, such as
# cli/test_reduce.sh or unit/test_npz, or without the folder and the .sh:
# test_reduce, test_npz, fuzz_npy). GPUBATCH_TEST_CASE narrows each program
# to its cases of that name (docs/testing.md). Ends with one line
# "N passed, N failed" (the sum over every program run).
set -u
BUILD=${BUILD:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
total_pass=0
total_fail=0
ran=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# Whether the program shown as $1 (also called $2) is one asked for.
wanted() {
    for n in $names; do
        case $n in
        "$1" | "${1#*/}" | "$(basename "${1%.sh}")" | "$2") return 0 ;;
        esac
    done
    return 1
}
names="$*"

# Runs one test program, adds up its "N passed, N failed" line.
run_one() {
    name=$1
    shift
    if [ -n "$names" ] && ! wanted "$name" "$alias"; then
        return
    fi
    ran=$((ran + 1))
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
            grep -E '^(skip|note)[: ]' "$log" | sed 's/^/     /'

        fi
    fi
    total_pass=$((total_pass + p))
    total_fail=$((total_fail + f))
}

for t in "$BUILD"/tests/test_*; do
    [ -x "$t" ] || continue
    alias=${t##*/}
    run_one "unit/${t##*/}" "$t"
done
for h in "$BUILD"/fuzz/fuzz_*; do
    [ -x "$h" ] || continue
    name=${h##*/fuzz_}
    [ -d "tests/fuzz/corpus/$name" ] || continue
    alias=fuzz_$name
    run_one "fuzz-replay/$name" "$h" "tests/fuzz/corpus/$name"
done
for t in tests/cli/test_*.sh; do
    [ -f "$t" ] || continue
    alias=${t##*/}
    alias=${alias%.sh}
    run_one "cli/${t##*/}" sh "$t"
done
if ./gpubatch info 2>/dev/null | grep -q '^device 0:'; then
    for t in tests/gpu/test_*.sh; do
        [ -f "$t" ] || continue
        alias=${t##*/}
        alias=gpu/${alias%.sh}
        run_one "gpu/${t##*/}" sh "$t"
    done
elif [ -z "$names" ]; then
    echo "skip gpu tests: no usable CUDA device"
fi
if [ -n "$names" ] && [ "$ran" -eq 0 ]; then
    echo "no test program is named $names (make test lists them all: unit/test_*, fuzz-replay/*, cli/test_*.sh)"
    total_fail=1
fi
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
