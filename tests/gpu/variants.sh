#!/bin/sh
# variants.sh - times variants of the float32 sum kernel (load cache hint,
# resident blocks per multiprocessor) against CUB on a GPU machine with the
# CUDA toolkit; the committed PTX uses the defaults in ptx/reduce.cu.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
make -j"$(nproc)" >/dev/null 2>&1 || { echo "build failed"; exit 1; }
objs="build/runtime/reduce.o build/runtime/backend.o build/runtime/gpu.o build/runtime/ptx_blobs.o build/runtime/cu.o build/io/dtype.o build/io/par.o build/io/clock.o build/ptx_table.o"
nvcc -O2 -std=c++17 -I. -o /tmp/gb_bench tests/gpu/bench_reduce.cu $objs -lcuda -ldl -l:libz.a || exit 1
flags="-std=c++17 -fmad=false -prec-div=true -prec-sqrt=true -ftz=false -O3 -I. -arch=compute_75 -DGB_DT_f32 -DRD_KERNEL_moments -ptx"
for v in "default:" "plain:-DRD_LOAD=*" "unbounded:-DRD_MIN_BLOCKS=0" "minb4:-DRD_MIN_BLOCKS=4" \
    "minb5:-DRD_MIN_BLOCKS=5" "minb8:-DRD_MIN_BLOCKS=8"; do
    name=${v%%:*}
    # shellcheck disable=SC2086
    nvcc $flags ${v#*:} -o "/tmp/gb_$name.ptx" ptx/reduce.cu 2>/dev/null || { echo "$name: compile failed"; continue; }
    echo "== $name (${v#*:}) $(ptxas -arch=sm_90 -v -o /dev/null "/tmp/gb_$name.ptx" 2>&1 | grep -o 'Used [0-9]* registers')"
    /tmp/gb_bench "/tmp/gb_$name.ptx" 40 | grep -E '^[0-9]+ '
done
