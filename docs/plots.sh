#!/bin/sh
# plots.sh [OUTDIR] - redraw the SVG figures of BENCHMARKS.md from the
# recorded `gpubatch bench --json` runs in docs/data (see BENCHMARKS.md,
# Plots), into OUTDIR (default docs/img). test_docs.sh checks that the
# committed figures are what this draws.
set -eu
out=${1:-$(dirname "$0")/img}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$(dirname "$0")"
P="${PYTHON:-python3} plot.py"
D=data/h100-2026-11-23
N="2026-11-23"
$P --op quadratic --y speedup --note "$N" -o "$out/quadratic-speedup-h100.svg" \
    --title "Quadratic equations: speed-up over one CPU core against size" \
    $D-gpu-quadratic-a.json $D-gpu-quadratic-b.json
$P --op reduce --y of_copy --note "$N" -o "$out/reduce-of-copy-h100.svg" \
    --title "Sum of float32: fraction of the device copy bandwidth" \
    $D-gpu-reduce-a.json $D-gpu-reduce-b.json
$P --op transpose --y of_copy --note "$N" -o "$out/transpose-of-copy-h100.svg" \
    --title "N x N float32 transpose: fraction of the device copy bandwidth" \
    $D-gpu-transpose.json
$P --op quadratic --y speedup --note "H100 node's host, $N" -o "$out/quadratic-speedup-cpu.svg" \
    --title "Quadratic equations, CPU backend: speed-up over one core" \
    $D-cpu-quadratic.json
