#!/bin/sh
# run.sh [NAME...] - the whole test suite: C unit tests, fuzz-corpus replay,
# command-line tests, and the GPU command-line tests when a CUDA device is
# usable; with NAMEs, only the programs of those names (as printed, such as
# cli/test_reduce.sh or unit/test_npz, or without the folder and the .sh:
# test_reduce, test_npz, fuzz_npy). GPUBATCH_TEST_CASE narrows each program
# to its cases of that name (docs/testing.md).
#
# Programs run GPUBATCH_TEST_JOBS at a time (default: the number of cores,
# at least 2), the longest of the last run first (their seconds are kept in
# $BUILD/tests/times), but those whose checks time the stand-in driver's
# delays (below) first and alone; each program's block (its result line, then its
# notes or its failures) is printed whole, in the fixed order below, as soon
# as it and every one before it are done. Ends with one line
# "N passed, N failed" (the sum over every program run).
set -u
BUILD=${BUILD:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
names="$*"
times="$BUILD/tests/times"
jobs=${GPUBATCH_TEST_JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}
[ "$jobs" -ge 1 ] 2>/dev/null || jobs=2
[ -n "${GPUBATCH_TEST_JOBS:-}" ] || [ "$jobs" -ge 2 ] || jobs=2
total_pass=0
total_fail=0
total_cpu=0
n=0

# Whether the program shown as $1 (also called $2) is one asked for.
wanted() {
    for w in $names; do
        case $w in
        "$1" | "${1#*/}" | "$(basename "${1%.sh}")" | "$2") return 0 ;;
        esac
    done
    return 1
}

# The programs that run alone: their checks compare the times of a stand-in
# driver's delays, which other programs beside them would stretch.
alone="cli/test_devices.sh cli/test_auto.sh"

# add NAME ALIAS CMD: lists a program (CMD: a shell command from the top).
add() {
    if [ -n "$names" ] && ! wanted "$1" "$2"; then
        return
    fi
    case " $alone " in *" $1 "*) : >"$dir/$n.alone" ;; esac
    printf '%s\n' "$1" >"$dir/$n.name"
    printf '%s\n' "$3" >"$dir/$n.cmd"
    n=$((n + 1))
}

for t in "$BUILD"/tests/test_*; do
    [ -x "$t" ] || continue
    add "unit/${t##*/}" "${t##*/}" "\"$t\""
done
for h in "$BUILD"/fuzz/fuzz_*; do
    [ -x "$h" ] || continue
    name=${h##*/fuzz_}
    [ -d "tests/fuzz/corpus/$name" ] || continue
    add "fuzz-replay/$name" "fuzz_$name" "\"$h\" \"tests/fuzz/corpus/$name\""
done
for t in tests/cli/test_*.sh; do
    [ -f "$t" ] || continue
    alias=${t##*/}
    add "cli/${t##*/}" "${alias%.sh}" "sh \"$t\""
done
gpu_note=
if ./gpubatch info 2>/dev/null | grep -q '^device 0:'; then
    for t in tests/gpu/test_*.sh; do
        [ -f "$t" ] || continue
        alias=${t##*/}
        add "gpu/${t##*/}" "gpu/${alias%.sh}" "sh \"$t\""
    done
elif [ -z "$names" ]; then
    gpu_note="skip gpu tests: no usable CUDA device"
fi

# The start order: the programs of the last run by its seconds, longest
# first; those it did not time (all of them in a fresh checkout) by the CPU
# seconds below (the sanitizer build's on two cores, where the order counts
# most; test_ptx's with nvcc, test_valgrind's outside that build), a unit
# test or fuzz replay listed nowhere as a short one, and a command-line test
# listed nowhere (a new one, which may be long) first of all.
known="unit/test_run 98 cli/test_ptx.sh 66 cli/test_auto.sh 50 cli/test_shard.sh 30
cli/test_devices.sh 30 unit/test_pinflate 28 cli/test_simd.sh 28 cli/test_docs.sh 27
cli/test_driver_faults.sh 26 cli/test_gzindex.sh 22 unit/test_gzstream 18 cli/test_transpose.sh 16
cli/test_quadratic_planes.sh 15 cli/test_gz_parallel.sh 14 unit/test_reader 13
unit/test_inflate_stream 13 cli/test_axis.sh 13 unit/test_gzindex 12 cli/test_axis_cols_host.sh 12
cli/test_valgrind.sh 24 cli/test_reduce.sh 10 cli/test_npz.sh 10 unit/test_gzwrite 6
unit/test_axis_cpu 6 cli/test_guards.sh 6 cli/test_axis_shard.sh 6 unit/test_quadratic 5
cli/test_faults.sh 5 cli/test_dtypes.sh 5 cli/test_driver_versions.sh 5 unit/test_axis 4
cli/test_integrity.sh 4 cli/test_gzip_out.sh 4 cli/test_format.sh 4 cli/test_gz_corrupt.sh 3
cli/test_hostile.sh 3 cli/test_slurm.sh 3 cli/test_sniff.sh 3 cli/test_lib.sh 3
cli/test_order.sh 3 cli/test_npz_out.sh 3 cli/test_progress.sh 3 cli/test_quadratic.sh 3
cli/test_bench.sh 2 cli/test_includes.sh 2 cli/test_native.sh 2"
i=0
while [ $i -lt $n ]; do
    s=$({ echo "$known" | xargs -n 2; cat "$times" 2>/dev/null; } |
        awk -v p="$(cat "$dir/$i.name")" '$1 == p { s = $2 }
            END { print (s != "" ? s : p ~ /^cli\// ? 999999 : 1) }')
    [ ! -f "$dir/$i.alone" ] || s=9999999
    echo "${s:-999999} $i"
    i=$((i + 1))
done | sort -k1,1nr -k2,2n | awk '{ print $2 }' >"$dir/order"

# Starts program $1 in the background: its output in $1.log, then "STATUS
# SECONDS CPU_SECONDS" in $1.rc (the CPU time, user and system, of every
# process it waited for: the measure that other work on the machine does
# not stretch).
start() {
    (
        t0=$(date +%s)
        eval "$(cat "$dir/$1.cmd")" >"$dir/$1.log" 2>&1 </dev/null
        st=$?
        times >"$dir/$1.times"
        cpu=$(awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); s += a[1] * 60 + a[2] } }
            END { printf "%.0f", s }' "$dir/$1.times")
        echo "$st $(($(date +%s) - t0)) $cpu" >"$dir/$1.rc.tmp"
        mv "$dir/$1.rc.tmp" "$dir/$1.rc"
    ) &
}

# Prints program $1's block and adds its "N passed, N failed" line.
report() {
    name=$(cat "$dir/$1.name")
    read -r status secs cpu <"$dir/$1.rc"
    log="$dir/$1.log"
    echo "$name $secs $cpu" >>"$dir/times"
    total_cpu=$((total_cpu + cpu))
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
            echo "ok   $name: $line (${secs} s, ${cpu} s CPU)"
            grep -E '^(skip|note)[: ]' "$log" | sed 's/^/     /'
        fi
    fi
    total_pass=$((total_pass + p))
    total_fail=$((total_fail + f))
}

started=0
printed=0
running=0
solo=0
t_start=$(date +%s)
while [ $printed -lt $n ]; do
    while [ $running -lt "$jobs" ] && [ $started -lt $n ] && [ $solo = 0 ]; do
        k=$(sed -n "$((started + 1))p" "$dir/order")
        if [ -f "$dir/$k.alone" ]; then
            [ $running -eq 0 ] || break
            solo=1
        fi
        started=$((started + 1))
        start "$k"
        running=$((running + 1))
    done
    progress=0
    for f in "$dir"/*.rc; do
        [ -f "$f" ] || continue
        k=${f##*/}
        k=${k%.rc}
        if [ ! -f "$dir/$k.reaped" ]; then
            : >"$dir/$k.reaped"
            running=$((running - 1))
            [ ! -f "$dir/$k.alone" ] || solo=0
            progress=1
        fi
    done
    while [ $printed -lt $n ] && [ -f "$dir/$printed.rc" ]; do
        report $printed
        printed=$((printed + 1))
        progress=1
    done
    [ $progress = 1 ] || sleep 0.2
done
wait
[ -z "$gpu_note" ] || echo "$gpu_note"

# A missing MPFR leaves test_quadratic unbuilt (the Makefile says so): a
# failure under CI=true, where every test must run.
if [ -n "${GPUBATCH_TEST_NO_MPFR:-}" ] && [ "${CI:-}" = true ] &&
    { [ -z "$names" ] || wanted unit/test_quadratic test_quadratic; }; then
    echo "FAIL unit/test_quadratic: not built: no MPFR headers (libmpfr-dev), and CI=true"
    total_fail=$((total_fail + 1))
    n=$((n + 1))
fi
if [ -n "$names" ] && [ "$n" -eq 0 ]; then
    echo "no test program is named $names (make test lists them all: unit/test_*, fuzz-replay/*, cli/test_*.sh)"
    total_fail=1
fi
# The seconds of this run's programs replace those of the last run.
if [ -f "$dir/times" ] && mkdir -p "${times%/*}" 2>/dev/null && touch "$times" 2>/dev/null; then
    awk 'NR == FNR { new[$1] = 1; print; next } !($1 in new)' "$dir/times" "$times" \
        >"$dir/times.all" && cp "$dir/times.all" "$times"
fi
[ $n -le 1 ] || echo "$n programs, $jobs at a time: $(($(date +%s) - t_start)) s, $total_cpu s CPU"
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
