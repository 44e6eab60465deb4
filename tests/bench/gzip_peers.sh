#!/bin/sh
# gzip_peers.sh DIR GPUBATCH [RUNS] - times `reduce --backend cpu --op count`
# over the three files of gzip_files.sh in DIR against igzip -dc and
# libdeflate-gunzip -c (outputs to /dev/null), the two run in turn RUNS
# times (default 9) after one warm-up each, and prints each pair's median
# wall seconds and the median of the pairs' ratios (gpubatch / peer).
# IGZIP and LIBDEFLATE name the peers (default: igzip and libdeflate-gunzip
# on PATH).
set -eu
dir=${1:?usage: gzip_peers.sh DIR GPUBATCH [RUNS]}
gb=${2:?usage: gzip_peers.sh DIR GPUBATCH [RUNS]}
runs=${3:-9}
ig=${IGZIP:-igzip}
ld=${LIBDEFLATE:-libdeflate-gunzip}

# Wall nanoseconds of one run of the command line "$@", its output dropped.
wall_ns() {
    t0=$(date +%s%N)
    "$@" >/dev/null 2>&1 || echo "gzip_peers.sh: $* failed" >&2
    t1=$(date +%s%N)
    echo $((t1 - t0))
}

# The median of the numbers on standard input.
median() {
    sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

for f in float.npy int.npy text.u8; do
    dt=
    [ "$f" = text.u8 ] && dt="--dtype uint8"
    for peer in "$ig -dc" "$ld -c"; do
        # shellcheck disable=SC2086
        wall_ns "$gb" reduce --backend cpu --op count $dt "$dir/$f.gz" >/dev/null
        # shellcheck disable=SC2086
        wall_ns $peer "$dir/$f.gz" >/dev/null
        : >"$dir/.pairs"
        i=0
        while [ $i -lt "$runs" ]; do
            # shellcheck disable=SC2086
            a=$(wall_ns "$gb" reduce --backend cpu --op count $dt "$dir/$f.gz")
            # shellcheck disable=SC2086
            b=$(wall_ns $peer "$dir/$f.gz")
            echo "$a $b" >>"$dir/.pairs"
            i=$((i + 1))
        done
        ma=$(awk '{ print $1 / 1e9 }' "$dir/.pairs" | median)
        mb=$(awk '{ print $2 / 1e9 }' "$dir/.pairs" | median)
        mr=$(awk '{ print $1 / $2 }' "$dir/.pairs" | median)
        printf '%s: gpubatch %.3f s, %s %.3f s, ratio %.2f (medians of %d pairs)\n' \
            "$f" "$ma" "$(basename "${peer%% *}")" "$mb" "$mr" "$runs"
    done
done
rm -f "$dir/.pairs"
