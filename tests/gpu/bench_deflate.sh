#!/bin/sh
# bench_deflate.sh - size and one-thread speed of the blocked-gzip deflate
# encoder against zlib at levels 1 and 6 (CPU only; no GPU needed), on:
#   float32-normal  gen --dist normal float32
#   int32-small     gen --dtype int32 --low 0 --high 1000
#   int32-full      gen --dtype int32 (full range: incompressible, stored)
#   roots           quadratic --backend cpu of gen --quadratic
#   text            the man page, the C sources and the README concatenated
# Usage: sh tests/gpu/bench_deflate.sh [OUTDIR]   (ELEMS=... elements per
# array, default 4194304; LEVELS, REPS as in bench_deflate.c).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
GB="$top/gpubatch"
OUT=${1:-$(mktemp -d)}
ELEMS=${ELEMS:-4194304}
mkdir -p "$OUT"
[ -x "$GB" ] || make -C "$top" gpubatch >/dev/null
export GPUBATCH_LIBCUDA=/nonexistent/libcuda.so.1 # the codec, not the driver
cc -std=c11 -D_GNU_SOURCE -O2 -I"$top" -o "$OUT/bench_deflate" "$top/tests/gpu/bench_deflate.c" -l:libz.a
"$GB" gen -q -f --shape "$ELEMS" --dist normal --seed 1 --no-compress -o "$OUT/float32-normal.npy"
"$GB" gen -q -f --shape "$ELEMS" --dtype int32 --low 0 --high 1000 --seed 1 --no-compress \
    -o "$OUT/int32-small.npy"
"$GB" gen -q -f --shape "$ELEMS" --dtype int32 --seed 1 --no-compress -o "$OUT/int32-full.npy"
"$GB" gen -q -f --quadratic "$((ELEMS / 3))" --seed 1 --no-compress -o "$OUT/coefficients.npy"
"$GB" quadratic -q -f --backend cpu --no-compress -o "$OUT/roots.npy" "$OUT/coefficients.npy"
cat "$top/gpubatch.1" "$top"/cli/*.c "$top"/io/*.c "$top"/io/gzip/*.c "$top"/runtime/*.c \
    "$top"/runtime/gzip/*.c "$top"/runtime/tools/*.c "$top"/ptx/*.h "$top/README.md" >"$OUT/text"
echo "deflate, one thread, $(date -u +%Y-%m-%dT%H:%MZ), $(uname -m); size and speed: ours / zlib"
"$OUT/bench_deflate" "$OUT/float32-normal.npy" "$OUT/int32-small.npy" "$OUT/int32-full.npy" \
    "$OUT/roots.npy" "$OUT/text"
