#!/bin/sh
# bench_jobs.sh [OUTDIR [BASE_TREE]] - whole-process times of the three
# commands' large jobs with --backend auto, cuda and cpu: reduce of a 2 GiB
# float32 array as .npy, as BGZF and as one `gzip -1` member; quadratic of
# 2^26 float32 rows and transpose of a 16384x16384 float32 matrix, each
# from .npy to .npy and from BGZF to BGZF. BASE_TREE (another source tree) is built and raced beside this one,
# each variant interleaved with the others, best of RACE_REPS (default 3).
# Every job's output (printed values, or the output file's bytes) is checked
# equal across backends and against the base tree's. Full logs go to OUTDIR;
# a short table (seconds; this/base ratios) is printed last. (race(), from
# lib.sh, uses the variable f: the loops here name theirs in_file.) JOBS (default
# "reduce quadratic transpose") picks the commands raced.
set -u
out=${1:-gpu-jobs}
base_src=${2:-}
work_name=gpubatch-jobs
other=auto
. "$(dirname "$0")/lib.sh"
note "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1), $(nproc) cores"

JOBS=${JOBS:-reduce quadratic transpose}
# want JOB: JOBS has it.
want() { case " $JOBS " in *" $1 "*) return 0 ;; esac; return 1; }
n=$((1 << 29))
if want reduce; then
    [ -s "$work/r.npy" ] || "$GB" gen --shape $n --dist normal --seed 1 --no-compress -f -o "$work/r.npy"
    [ -s "$work/r.bgzf.npy.gz" ] || "$GB" gen --shape $n --dist normal --seed 1 -1 -f -o "$work/r.bgzf.npy.gz"
    [ -s "$work/r.gz1.npy.gz" ] || gzip -1 -c "$work/r.npy" >"$work/r.gz1.npy.gz" &
fi
if want quadratic; then
    "$GB" gen --quadratic $((1 << 26)) --seed 2 --no-compress -f -o "$work/q.npy"
    "$GB" gen --quadratic $((1 << 26)) --seed 2 -1 -f -o "$work/q.npy.gz"
fi
if want transpose; then
    "$GB" gen --shape 16384x16384 --seed 3 --no-compress -f -o "$work/t.npy"
    "$GB" gen --shape 16384x16384 --seed 3 -1 -f -o "$work/t.npy.gz"
fi
wait
ls -l "$work" >>"$out/files.txt"
table="$out/table.txt"
: >"$table"

# timed NAME ARGS...: the job's best wall time for each backend, this tree
# and the base tree interleaved; the outputs (stdout, or -o FILE's bytes)
# of every run compared with this tree's cpu run.
timed() {
    job=$1 # race() sets name
    shift
    a=$(echo "$*" | tr ' ' ',')
    set --
    for b in auto cuda; do
        set -- "$@" "$GB,$a,--backend,$b"
        [ -z "$OLD" ] || set -- "$@" "$OLD,$a,--backend,$b"
    done
    # the GPU's runs apart from cpu's: a run right after one that kept every
    # core busy for seconds can be slower
    RACE_CLEAN="$work/o.*" race "$job" "$@"
    RACE_CLEAN="$work/o.*" race "$job, cpu" "$GB,$a,--backend,cpu" ${OLD:+"$OLD,$a,--backend,cpu"}
    for b in auto cuda cpu; do
        row="$job|$b|$(cat "$work/best.$(echo "$GB,$a,--backend,$b" | md5sum | cut -c1-8)")"
        [ -z "$OLD" ] || row="$row|$(cat "$work/best.$(echo "$OLD,$a,--backend,$b" | md5sum | cut -c1-8)")"
        echo "$row" >>"$table"
    done
}

# same NAME OUTFILE ARGS...: every backend's output, with this tree and the
# base tree, equals this tree's cpu output (OUTFILE's bytes, or stdout when
# OUTFILE is -).
same() {
    name=$1
    o=$2
    shift 2
    want=
    for bin in "$GB" ${OLD:+"$OLD"}; do
        for b in cpu auto cuda; do
            rm -f "$work"/o.*
            got=$("$bin" "$@" --backend $b 2>&1; echo "exit $?")
            [ "$o" = - ] || got="$got $(md5sum <"$o")"
            [ -n "$want" ] || want=$got
            check "$name: $bin $b" "$want" "$got"
        done
    done
}

want reduce && for in_file in r.npy r.bgzf.npy.gz r.gz1.npy.gz; do
    same "reduce $in_file" - reduce --op sum,min,max,argmax "$work/$in_file"
    timed "reduce sum,min,max $in_file" reduce --op sum@min@max "$work/$in_file"
done
want quadratic && for in_file in q.npy q.npy.gz; do
    same "quadratic $in_file" "$work/o.npy.gz" quadratic -f -o "$work/o.npy.gz" "$work/$in_file"
    case $in_file in *.gz) o=o.npy.gz ;; *) o=o.npy ;; esac
    timed "quadratic $in_file to $o" quadratic -f -o "$work/$o" "$work/$in_file"
done
want transpose && for in_file in t.npy t.npy.gz; do
    same "transpose $in_file" "$work/o.npy.gz" transpose -f -o "$work/o.npy.gz" "$work/$in_file"
    case $in_file in *.gz) o=o.npy.gz ;; *) o=o.npy ;; esac
    timed "transpose $in_file to $o" transpose -f -o "$work/$o" "$work/$in_file"
done
note "outputs equal: $pass passed, $fail failed"
note "job | backend | this tree (s)${OLD:+ | base (s) | this/base}"
awk -F'|' '{ if (NF > 3) printf "%s | %s | %s | %s | %.3f\n", $1, $2, $3, $4, $3 / $4;
             else printf "%s | %s | %s\n", $1, $2, $3 }' "$table" | tee -a "$sum"
