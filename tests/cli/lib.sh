# lib.sh - helpers for command-line tests (sourced).
# Each test script calls ok/fail through check_* and ends with `summary`.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
GB="$top/gpubatch"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
passed=0
failed=0
# The interpreter itself, resolved once: a version-manager shim in PATH can
# cost half a second per call.
PY=${PYTHON:-$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null || echo python3)}

# pick FULL QUICK: the list FULL, or the shorter QUICK when
# GPUBATCH_TEST_QUICK is set (the sanitizer runs of `make san`, where every
# process costs several times more; the plain run covers the full lists).
pick() {
    if [ -n "${GPUBATCH_TEST_QUICK:-}" ]; then echo "$2"; else echo "$1"; fi
}

# spread LIST K: for a loop nested in others whose product is long: the one
# item of LIST at K (the count of the outer loops' rounds so far) modulo its
# length, so that the rounds meet every item in turn and every outer value
# meets several; the whole LIST with GPUBATCH_TEST_SOAK=1 (make soak, the
# full product).
spread() {
    if [ -n "${GPUBATCH_TEST_SOAK:-}" ]; then
        echo "$1"
    else
        echo "$1" | awk -v k="$2" '{ print $(k % NF + 1) }'
    fi
}

# auto starts the GPU for every run, and waits for the start at the end of
# it, so that its warning (no driver, no such device) does not depend on
# timing or on the size of the input; test_auto.sh tests the other modes.
export GPUBATCH_GPU_START=wait

# The case filter (`make test C=...`): with GPUBATCH_TEST_CASE set, only the
# checks whose names hold it count (check_eq, check_files_same and
# check_error name theirs; a bare ok or fail counts by its message); the
# script still runs every command, as later checks need what earlier ones
# made.
left_out=0
check_name=
# Whether the check named $1 counts.
case_wanted() {
    case $1 in
    *"${GPUBATCH_TEST_CASE:-}"*) return 0 ;;
    esac
    left_out=$((left_out + 1))
    return 1
}

ok() {
    set -- "$check_name"
    check_name=
    [ -z "${GPUBATCH_TEST_CASE:-}" ] || case_wanted "$1" || return 0
    passed=$((passed + 1))
}
fail() {
    check_name=
    [ -z "${GPUBATCH_TEST_CASE:-}" ] || case_wanted "$*" || return 0
    failed=$((failed + 1))
    echo "FAIL: $*" >&2
}

# check_eq WHAT EXPECTED ACTUAL
check_eq() {
    check_name=$1
    if [ "$2" = "$3" ]; then ok; else fail "$1: expected [$2] got [$3]"; fi
}

# check_files_same WHAT A B
check_files_same() {
    check_name=$1
    if cmp -s "$2" "$3"; then ok; else
        fail "$1: $2 and $3 differ"
        diff "$2" "$3" | head -5 >&2
    fi
}

# check_error WHAT PATTERN CMD... : exit 1, empty stdout, one stderr line matching PATTERN
check_error() {
    what=$1
    pat=$2
    shift 2
    check_name=$what
    "$@" >"$T/err.out" 2>"$T/err.err"
    st=$?
    if [ "$st" -ne 1 ]; then
        fail "$what: exit status $st, expected 1"
        return
    fi
    if [ -s "$T/err.out" ]; then
        fail "$what: printed to stdout: $(head -c 200 "$T/err.out")"
        return
    fi
    if [ "$(grep -c . "$T/err.err")" -ne 1 ] || ! grep -q -- "$pat" "$T/err.err"; then
        fail "$what: stderr [$(cat "$T/err.err")] does not match [$pat] in one line"
        return
    fi
    ok
}

summary() {
    [ "$left_out" -eq 0 ] ||
        echo "note: GPUBATCH_TEST_CASE=$GPUBATCH_TEST_CASE: $left_out checks left out"
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}

# Prints a python3 that has numpy (PYTHON first), or nothing.
numpy_python() {
    for p in ${PYTHON:-} python3 /usr/bin/python3; do
        if "$p" -c 'import numpy' 2>/dev/null; then
            echo "$p"
            return
        fi
    done
}

# missing TEXT: a test tool is missing, so the part of the script that needs
# it is not run: a note, or under CI=true (where `make deps` installed every
# tool, and a check left out must not pass unseen) a failure.
missing() {
    if [ "${CI:-}" = true ]; then
        fail "CI=true, and a test tool is missing: $*"
    else
        echo "note: $*"
    fi
}

# Ends the script as skipped, with the reason and what installs it: a
# missing optional tool is no failure (`make deps` installs them all),
# except under CI=true.
skip_all() {
    if [ "${CI:-}" = true ]; then
        fail "CI=true, and a test tool is missing: $*"
        summary
        exit 1
    fi
    echo "skip: $*"
    summary
    exit 0
}

# need_python: the references are Python scripts; without python3 the test
# is skipped.
need_python() {
    "$PY" -c '' 2>/dev/null || skip_all "no python3 (Debian: apt-get install python3, or make deps)"
}

# need_numpy: sets NP to a python3 with numpy, or skips the test.
need_numpy() {
    NP=$(numpy_python)
    [ -n "$NP" ] || skip_all "no python3 with numpy (Debian: apt-get install python3-numpy, or make deps)"
}

# need_tool CMD PACKAGE: skips the test when the command CMD is missing.
need_tool() {
    command -v "$1" >/dev/null 2>&1 || skip_all "$1 is not installed (Debian: apt-get install $2, or make deps)"
}

# Points GPUBATCH_LIBCUDA at the stand-in driver (tests/cli/fakecuda.c), or
# ends the script as skipped when it is not built.
use_fake_driver() {
    FAKE="$top/${BUILD:-build}/tests/libfakecuda.so"
    if [ ! -f "$FAKE" ]; then
        echo "skip: $FAKE is not built (make tests)"
        summary
        exit
    fi
    export GPUBATCH_LIBCUDA="$FAKE"
    # the stand-in reads CUDA_VISIBLE_DEVICES as a driver does: the tests
    # set it themselves
    unset CUDA_VISIBLE_DEVICES GPUBATCH_NARROW_DEVICES
}
