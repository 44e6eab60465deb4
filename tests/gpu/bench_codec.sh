#!/bin/sh
# bench_codec.sh - how the gzip codec scales with cores (CPU only; no GPU
# needed). For N = 1, 2, 4, 8, 16 threads (capped at the cores present):
#   deflate: `gen` writing blocked gzip at level 1 and 6 with -p N, pinned to
#            N cores with taskset;
#   inflate: `reduce --backend cpu --op count` of that blocked-gzip file,
#            pinned to N cores;
# and prints each rate (MB/s of uncompressed data) with its ratio to the
# ideal 0.8 x N x the one-thread rate, both the first row's and ("adjacent")
# that of a one-thread run over 1/N of the data just before the row. On all
# the cores it also runs the machine's own ceiling: one single-thread
# process per core, each pinned to its core and doing 1/N of the work at
# once ("N x 1"); the pool's rate over that one says how much the
# threading costs, apart from the cores slowing down when all of them are
# busy. Then single-member gzip input end to end
# (`reduce` of `gzip -1` output) against `gzip -dc` alone and against zlib's
# one-thread inflate of the same file from memory (python3's zlib).
#
# Usage: sh tests/gpu/bench_codec.sh [OUTDIR]   (ELEMS=... float32 elements,
# default 67108864 = 256 MiB of data). Needs taskset (util-linux) and gzip.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
GB="$top/gpubatch"
OUT=${1:-$(mktemp -d)}
ELEMS=${ELEMS:-67108864}
mkdir -p "$OUT"
[ -x "$GB" ] || make -C "$top" -j"$(nproc)" gpubatch >/dev/null
command -v taskset >/dev/null || { echo "bench_codec: needs taskset (util-linux)" >&2; exit 1; }
cores=$(nproc)
bytes=$((ELEMS * 4))
export GPUBATCH_LIBCUDA=/nonexistent/libcuda.so.1 # the codec, not the driver

# secs CMD...: runs CMD, prints its wall time in seconds.
secs() {
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>>"$OUT/bench_codec.err"
    t1=$(date +%s.%N)
    echo "$t0 $t1" | awk '{printf "%.3f", $2 - $1}'
}

# rate SECONDS: MB/s of the uncompressed data.
rate() {
    echo "$bytes $1" | awk '{printf "%.1f", $1 / $2 / 1e6}'
}

# ratio RATE ONE N: RATE / (0.8 * N * ONE).
ratio() {
    echo "$1 $2 $3" | awk '{printf "%.2f", $1 / (0.8 * $3 * $2)}'
}

# ideal_adjacent SECONDS: 0.8 x N x the one-thread rate (MB/s) of a run
# over 1/N of the data that took SECONDS just before the N-thread run, i.e.
# 0.8 x all the bytes / SECONDS (the cores' speed drifts over a minute of
# full load; this ideal drifts with it).
ideal_adjacent() {
    echo "$bytes $1" | awk '{printf "%.1f", 0.8 * $1 / $2 / 1e6}'
}

# indep N CMD...: runs N copies of CMD at once, copy i pinned to core i (the
# word @I in CMD becomes i); prints the wall time of them all in seconds.
indep() {
    k=$1
    shift
    t0=$(date +%s.%N)
    i=0
    while [ "$i" -lt "$k" ]; do
        # shellcheck disable=SC2046
        taskset -c "$i" $(echo "$@" | sed "s/@I/$i/g") >/dev/null 2>>"$OUT/bench_codec.err" &
        i=$((i + 1))
    done
    wait
    t1=$(date +%s.%N)
    echo "$t0 $t1" | awk '{printf "%.3f", $2 - $1}'
}

echo "codec scaling: $ELEMS float32 elements ($bytes bytes), $cores cores, $(date -u +%Y-%m-%dT%H:%MZ)"
gen_only=$(secs "$GB" gen --shape "$ELEMS" --seed 1 --no-compress -o /dev/null)
echo "generating the data alone (no codec): $gen_only s = $(rate "$gen_only") MB/s (an upper bound for the deflate rows)"
printf '%-10s %8s %12s %10s %10s\n' "step" "threads" "MB/s" "vs 0.8xN" "adjacent"
for level in 1 6; do
    one=""
    for n in 1 2 4 8 16; do
        [ "$n" -le "$cores" ] || continue
        adj=""
        if [ "$n" -gt 1 ]; then
            a=$(secs taskset -c 0 "$GB" gen --shape "$((ELEMS / n))" --seed 1 -"$level" -p 1 -f \
                -o "$OUT/adj.npy.gz")
            adj=$(ideal_adjacent "$a")
        fi
        s=$(secs taskset -c "0-$((n - 1))" "$GB" gen --shape "$ELEMS" --seed 1 -"$level" -p "$n" \
            -f -o "$OUT/data-$level.npy.gz")
        r=$(rate "$s")
        [ -n "$one" ] || one=$r
        printf '%-10s %8d %12s %10s %10s\n' "deflate-$level" "$n" "$r" "$(ratio "$r" "$one" "$n")" \
            "$(echo "$r $adj" | awk 'NF == 2 {printf "%.2f", $1 / $2}')"
        last=$r
    done
    s=$(indep "$cores" "$GB" gen --shape "$((ELEMS / cores))" --seed 1 -"$level" -p 1 -f -o "$OUT/part@I-$level.npy.gz")
    r=$(rate "$s")
    printf '%-10s %8s %12s %10s   pool / this: %s\n' "deflate-$level" "${cores}x1" "$r" "$(ratio "$r" "$one" "$cores")" \
        "$(echo "$last $r" | awk '{printf "%.2f", $1 / $2}')"
done
one=""
for n in 1 2 4 8 16; do
    [ "$n" -le "$cores" ] || continue
    adj=""
    if [ "$n" -gt 1 ]; then
        "$GB" gen --shape "$((ELEMS / n))" --seed 1 -1 -f -o "$OUT/adj.npy.gz" 2>>"$OUT/bench_codec.err"
        a=$(secs taskset -c 0 "$GB" reduce -q --backend cpu -p 1 --op count "$OUT/adj.npy.gz")
        adj=$(ideal_adjacent "$a")
    fi
    s=$(secs taskset -c "0-$((n - 1))" "$GB" reduce -q --backend cpu -p "$n" --op count \
        "$OUT/data-1.npy.gz")
    r=$(rate "$s")
    [ -n "$one" ] || one=$r
    printf '%-10s %8d %12s %10s %10s\n' "inflate" "$n" "$r" "$(ratio "$r" "$one" "$n")" \
        "$(echo "$r $adj" | awk 'NF == 2 {printf "%.2f", $1 / $2}')"
    last=$r
done
s=$(indep "$cores" "$GB" reduce -q --backend cpu -p 1 --op count "$OUT/part@I-1.npy.gz")
r=$(rate "$s")
printf '%-10s %8s %12s %10s   pool / this: %s\n' "inflate" "${cores}x1" "$r" "$(ratio "$r" "$one" "$cores")" \
    "$(echo "$last $r" | awk '{printf "%.2f", $1 / $2}')"
rm -f "$OUT"/part*.npy.gz "$OUT/adj.npy.gz"
gzip -dc "$OUT/data-1.npy.gz" | gzip -1 >"$OUT/single.npy.gz"
g=$(secs gzip -dc "$OUT/single.npy.gz")
s=$(secs "$GB" reduce -q --backend cpu --op count "$OUT/single.npy.gz")
echo "single-member gzip: gpubatch reduce $s s ($(rate "$s") MB/s), gzip -dc alone $g s ($(rate "$g") MB/s): $(echo "$g $s" | awk '{printf "%.2f", $1 / $2}')x"
# zlib's own one-thread inflate rate on the same file, from memory (no file
# reading, no output): the ceiling of the single-member path.
z=$(python3 - "$OUT/single.npy.gz" <<'PYEOF' 2>>"$OUT/bench_codec.err"
import sys, time, zlib
data = open(sys.argv[1], "rb").read()
t = time.perf_counter()
d = zlib.decompressobj(31)
for i in range(0, len(data), 1 << 20):
    d.decompress(data[i:i + (1 << 20)])
d.flush()
print(f"{time.perf_counter() - t:.3f}")
PYEOF
)
[ -n "$z" ] && echo "zlib inflate alone (one thread, from memory): $z s ($(rate "$z") MB/s); gpubatch reduce end to end / this: $(echo "$z $s" | awk '{printf "%.2f", $1 / $2}')"
echo "files and stderr in $OUT"
