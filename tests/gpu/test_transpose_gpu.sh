#!/bin/sh
# test_transpose_gpu.sh - on a machine with a CUDA GPU: `transpose --backend
# cuda` writes exactly the bytes the CPU backend writes, for every element
# size, both kernels (aligned vector tiles, any shape), batches, staged
# matrices and odd shapes; and agrees with numpy when it is installed.
. "$(dirname "$0")/../cli/lib.sh"
NP=$(numpy_python)
if [ -z "$NP" ]; then
    fail "python3-numpy is needed to make the transpose inputs"
    # A matrix larger than the device can stage: a clear error naming the sizes,
# no output file (from a pipe: a regular file's size would refuse the shape
# as truncated first).
head -c 1000 /dev/urandom >"$T/small.raw"
check_error "matrix beyond device memory" "out of device memory.*matrix" sh -c \
    "cat '$T/small.raw' | '$GB' transpose --backend cuda --dtype float32 --shape 300000x300000 - -o '$T/huge.raw'"
[ -e "$T/huge.raw" ] && fail "the failed transpose left an output" || ok
summary
    exit
fi
REF="$top/tests/cli/tpref.py"
n=0
# gpu_case DTYPE SHAPE ORDER [OPTIONS]: GPU bytes == CPU bytes == numpy.
gpu_case() {
    n=$((n + 1))
    dt=$1 shape=$2 order=$3
    shift 3
    $NP "$REF" make "$dt" "$shape" "$order" "$n" "$T/in.npy"
    "$GB" transpose -q --backend cpu --no-compress "$@" "$T/in.npy" -o "$T/cpu.npy" -f
    if ! "$GB" transpose -q --backend cuda --no-compress "$@" "$T/in.npy" -o "$T/gpu.npy" -f; then
        fail "$dt $shape $order $*: cuda run failed"
        return
    fi
    check_files_same "$dt $shape $order $* gpu bytes" "$T/cpu.npy" "$T/gpu.npy"
    if $NP "$REF" check "$T/in.npy" "$T/gpu.npy" >"$T/chk" 2>&1; then ok; else
        fail "$dt $shape $order $*: $(cat "$T/chk")"
    fi
}
for dt in int8 int16 float32 float64 complex128; do
    # aligned (vector kernel), odd (any-shape kernel), thin, tiles with edges
    for shape in 256x256 1024x2048 61x67 33x1000 1000x16 16x1000 130x260 3x5 2x2; do
        gpu_case $dt $shape C
    done
    gpu_case $dt 7x33x65 C
    gpu_case $dt 300x64x48 C
    gpu_case $dt 509x263 C --chunk 128k
    gpu_case $dt 1024x1040 C --chunk 128k --streams 2
    gpu_case $dt 5x40x50 F
done
for dt in float16 V2 bool ">f4" ">f2" ">c16"; do
    gpu_case "$dt" 61x67 C
    gpu_case "$dt" 1024x2048 C
    gpu_case "$dt" 7x33x65 C
    gpu_case "$dt" 509x263 C --chunk 128k
    gpu_case "$dt" 5x40x50 F
done
gpu_case float32 8191x8193 C
gpu_case float32 4096x64x64 C
gpu_case uint8 4097x4099 C --chunk 1M
gpu_case complex64 1000x999 C
# A matrix larger than the device can stage: a clear error naming the sizes,
# no output file (from a pipe: a regular file's size would refuse the shape
# as truncated first).
head -c 1000 /dev/urandom >"$T/small.raw"
check_error "matrix beyond device memory" "out of device memory.*matrix" sh -c \
    "cat '$T/small.raw' | '$GB' transpose --backend cuda --dtype float32 --shape 300000x300000 - -o '$T/huge.raw'"
[ -e "$T/huge.raw" ] && fail "the failed transpose left an output" || ok
summary
