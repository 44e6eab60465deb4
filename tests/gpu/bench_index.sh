#!/bin/sh
# bench_index.sh [OUTDIR [BASE_SRC]] - reads through a seek index on the
# CPU and the device: a float32 array as one `gzip -1` member and an int32
# one in 0..199 as one `pigz -6` member (N elements each, default 2^28: 1
# GiB), each indexed with `gpubatch index`; `reduce --op count` with the
# index beside it and with --no-index, --backend cpu, best of REPS (default
# 5) runs in turn, then --backend cuda with the index (best of 2), BASE_SRC
# (another source tree) built and raced beside this one. Sums and counts
# are checked equal with and without the index, and against the baseline.
# PIGZ_BIN names pigz (default: the one on PATH).
set -u
out=${1:-gpu-index}
base_src=${2:-}
work_name=gpubatch-index
. "$(dirname "$0")/lib.sh"
N=${N:-268435456}
PIGZ_BIN=${PIGZ_BIN:-pigz}
note "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null) cores: $(nproc)"
(
    "$GB" gen --shape "$N" --dist normal --seed 3 --no-compress -f -o "$work/f.npy" &&
        gzip -1 -c "$work/f.npy" >"$work/f.npy.gz" && rm -f "$work/f.npy"
) &
(
    "$GB" gen --shape "$N" --dtype int32 --low 0 --high 199 --seed 2 --no-compress -f -o "$work/i.npy" &&
        "$PIGZ_BIN" -6 -c "$work/i.npy" >"$work/i.npy.gz" && rm -f "$work/i.npy"
) &
wait
for f in f.npy.gz i.npy.gz; do
    s=$(date +%s.%N)
    "$GB" index -f "$work/$f"
    note "index of $f: $(stat -c %s "$work/$f.gzidx") bytes of $(stat -c %s "$work/$f") in $(awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }') s"
    want=$("$GB" reduce -q --no-index --backend cpu --op sum,count "$work/$f")
    check "$f with its index, cpu" "$want" "$("$GB" reduce -q --backend cpu --op sum,count "$work/$f")"
    [ -z "$OLD" ] || other="baseline cpu" check "$f baseline with its index" "$want" \
        "$("$OLD" reduce -q --backend cpu --op sum,count "$work/$f")"
    note "-v: $("$GB" reduce -v --backend cpu --op count "$work/$f" 2>&1 >/dev/null | grep 'seek index' | cut -c1-300)"
    v=
    for b in "$GB" $OLD; do
        v="$v $b,reduce,-q,--backend,cpu,--op,count,$work/$f $b,reduce,-q,--no-index,--backend,cpu,--op,count,$work/$f"
    done
    RACE_PRIME= RACE_GAP=0.2 RACE_REPS=${REPS:-5} race "reduce --op count $f, cpu: with its index, --no-index" $v
done
for f in f.npy.gz i.npy.gz; do
    v=
    for b in "$GB" $OLD; do v="$v $b,reduce,-q,--backend,cuda,--op,count,$work/$f"; done
    RACE_GAP=0.2 RACE_REPS=2 race "reduce --op count $f, cuda, with its index" $v
done
note "checks: $pass passed, $fail failed"
[ ! -s "$out/fail.txt" ] || head -20 "$out/fail.txt"
