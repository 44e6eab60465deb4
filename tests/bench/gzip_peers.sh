#!/bin/sh
# gzip_peers.sh DIR GPUBATCH [RUNS] - times `reduce --backend cpu --op count`
# over the three files of gzip_files.sh in DIR against igzip -dc and
# libdeflate-gunzip -c (outputs to /dev/null), paired and interleaved by
# farm-bench, and prints each pair's wall and CPU lines (quote the medians).
# IGZIP names igzip (default /work/shared/peers/igzip, else igzip on PATH).
set -eu
dir=${1:?usage: gzip_peers.sh DIR GPUBATCH [RUNS]}
gb=${2:?usage: gzip_peers.sh DIR GPUBATCH [RUNS]}
runs=${3:-5}
ig=${IGZIP:-/work/shared/peers/igzip}
[ -x "$ig" ] || ig=igzip
for f in float.npy int.npy text.u8; do
    dt=
    [ "$f" = text.u8 ] && dt="--dtype uint8"
    for peer in "$ig -dc" "libdeflate-gunzip -c"; do
        echo "== $f: $gb against $peer"
        # shellcheck disable=SC2086
        farm-bench -n "$runs" --timeout 600 --vs "sh -c 'exec $peer $dir/$f.gz >/dev/null'" -- \
            "$gb" reduce --backend cpu --op count $dt "$dir/$f.gz" |
            grep -E '^farm-bench|^(A|B) (wall|cpu) s|^A/B (wall|cpu)'
    done
done
