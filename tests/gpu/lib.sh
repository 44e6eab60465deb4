# lib.sh - sourced by the GPU scripts (auto.sh, deflate.sh, inflate.sh),
# which set `out` (their OUTDIR) and `work_name` (their scratch folder under
# /tmp, or GPUBATCH_WORK) first, and `base_src` (another source tree to time
# beside this one, or empty) where they take one: it goes to the top of the
# tree, builds (the baseline too: its binary in OLD, else OLD is empty),
# starts OUTDIR/summary.txt, defines note(), check() and race(), and nullgz
# (/dev/null under a name that asks for blocked gzip).
mkdir -p "$out"
[ -z "${base_src:-}" ] || base_src=$(cd "$base_src" && pwd) || exit 1
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
work=${GPUBATCH_WORK:-/tmp/$work_name}
mkdir -p "$work"
# A name that ends in .gz for /dev/null: output written there is blocked gzip
# (the name decides) and goes nowhere, with this binary and an older one.
nullgz="$work/null.gz"
ln -sf /dev/null "$nullgz"
sum="$out/summary.txt"
: >"$sum"
GB=./gpubatch
pass=0
fail=0

# note TEXT: prints TEXT and adds it to the summary.
note() { echo "$*" | tee -a "$sum"; }

make -j"$(nproc)" >"$out/build.log" 2>&1 || { note "build FAILED"; tail -20 "$out/build.log"; exit 1; }
OLD=
if [ -n "${base_src:-}" ]; then
    make -C "$base_src" -j"$(nproc)" >>"$out/build.log" 2>&1 && OLD="$base_src/gpubatch" ||
        note "baseline build FAILED"
fi

# check NAME A B: A (the CPU backend's) and B (${other:-cuda}'s) are the
# same text; failures go to OUTDIR/fail.txt.
check() {
    if [ "$2" = "$3" ]; then pass=$((pass + 1)); else
        fail=$((fail + 1))
        { echo "FAIL $1"; echo "  cpu:  $2" | head -c 600; echo "  ${other:-cuda}: $3" | head -c 600; } >>"$out/fail.txt"
    fi
}

# race NAME VAR... : runs each variant (its words joined by commas; leading
# NAME=VALUE words go to the environment) RACE_REPS times (default 3) in turn, page cache
# warm, and notes each one's best wall time. Each run starts in the same
# state of the GPU: after a start of the devices by another process
# (RACE_PRIME, a command; by default `$GB info`, which opens each device;
# empty: none) and RACE_GAP seconds (default 0.5) with the GPU left alone.
# The driver's start is faster soon after another process's (it need not set
# the GPU up again) than after a run that did not touch the GPU: without the
# primer, a variant raced after a run that stayed on the CPU paid for a cold
# start that the next variant, raced after it, did not (quadratic of 2^26
# rows with --backend cuda on an H200: the driver and contexts 0.27-0.35 s
# against 0.19-0.22 s, either tree first). The files RACE_CLEAN names (a glob) are removed before
# each run, outside its time: a run that replaces a file also frees the old
# one's pages, and a file system with writes still going to the disk makes
# that cost vary from run to run. Needs note(), $work (scratch), $top (the
# tree, left out of names) and $out (stderr of the runs goes to $out/e2e.err).
# RACE_SED: a sed expression that shortens the names further. A comma
# inside one argument is written @ (--op sum@min@max). A run that exits
# nonzero is reported as FAILED in its row.
race() {
    name=$1
    shift
    note "$name"
    prime=${RACE_PRIME-$GB info}
    for v in "$@"; do
        echo 9999 >"$work/best.$(echo "$v" | md5sum | cut -c1-8)"
        rm -f "$work/best.$(echo "$v" | md5sum | cut -c1-8).failed"
    done
    for i in $(seq "${RACE_REPS:-3}"); do
        for v in "$@"; do
            f="$work/best.$(echo "$v" | md5sum | cut -c1-8)"
            [ -z "${RACE_CLEAN:-}" ] || rm -f $RACE_CLEAN
            [ -z "$prime" ] || $prime >/dev/null 2>&1
            sleep "${RACE_GAP:-0.5}"
            s=$(date +%s.%N)
            env $(echo "$v" | tr ',' ' ' | tr '@' ',') >/dev/null 2>>"$out/e2e.err" ||
                touch "$f.failed"
            e=$(date +%s.%N)
            awk -v a="$s" -v b="$e" -v f="$(cat "$f")" 'BEGIN { d = b - a; printf "%.3f\n", d < f ? d : f }' >"$f.new"
            mv "$f.new" "$f"
        done
    done
    for v in "$@"; do
        f="$work/best.$(echo "$v" | md5sum | cut -c1-8)"
        note "  $(echo "$v" | tr ',' ' ' | tr '@' ',' | sed "s|$work/||g; s|$top/||g; s|^\./||; ${RACE_SED:-}"): $(cat "$f") s$([ ! -e "$f.failed" ] || echo ' FAILED')"
    done
}
