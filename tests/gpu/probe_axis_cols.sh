#!/bin/sh
# probe_axis_cols.sh OUTDIR - the many-column axis-0 probe in one run of at
# most two minutes on a GPU machine with the CUDA toolkit (nvcc, ncu): the
# probe (bench_axis_cols.cu) built for float32, float64, uint8, int64 and
# float16 at once (ptxas's registers and spills in build_TYPE.log), each run
# under a time limit (bits of every variant and kind against main's body;
# float32 and float64 timed) into probe.txt, then one ncu of main's body and
# two block_cols_vec variants on float32 (N, 64) into ncu.txt. Prints
# probe.txt and the end of ncu.txt.
set -u
out=${1:?usage: probe_axis_cols.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$(dirname "$0")/../.." || exit 1
work=${GPUBATCH_WORK:-/tmp/gpubatch-gpu}
mkdir -p "$work"
NVCC=${NVCC:-nvcc}
types="f32 f64 u8 i64 f16"
for d in $types; do
    "$NVCC" -O3 -std=c++17 -fmad=false -I. -arch=sm_90 -Xptxas -v -DGB_DT_$d \
        -o "$work/bac_$d" tests/gpu/bench_axis_cols.cu >"$out/build_$d.log" 2>&1 &
done
wait
for d in $types; do
    echo "== $d"
    case $d in f32 | f64) limit=20 ;; *) limit=6 ;; esac
    timeout "$limit" "$work/bac_$d" || echo "exit $?"
done >"$out/probe.txt" 2>&1
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
timeout 20 "$ncu" --section SpeedOfLight --section Occupancy --section WarpStateStats \
    --section LaunchStats -k regex:cols "$work/bac_f32" ncu >"$out/ncu.txt" 2>&1
cat "$out/probe.txt"
tail -5 "$out/ncu.txt"
